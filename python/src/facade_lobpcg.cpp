// The facade's LOBPCG: the request's settings and blocks, a pencil's B on
// A's rows, the solve, and its pairs, history and timings as the result.
#include "python/src/facade_internal.hpp"

namespace blockeigs::python {

using namespace internal;

namespace {

// B's input rows on A's: the same ranges of the input's numbering on every rank; a real B beside a complex A
// held as complex (a complex B beside a real A refused). Collective.
solver::DistributedRows b_like_a(const Matrix& b, const Matrix& a, MPI_Comm comm) {
  const solver::DistributedRows& ai = a.impl->input;
  const solver::DistributedRows& bi = b.impl->host_input();  // B's rows on the host (copied from a device input)
  if (bi.partition.global_rows() != ai.partition.global_rows())
    solver::fail_input_everywhere("B (", bi.description, ") is ", bi.partition.global_rows(), " x ",
                                  bi.partition.global_rows(), ", but A is ", ai.partition.global_rows(), " x ",
                                  ai.partition.global_rows(), ": B of A x = lambda B x must be the size of A");
  if (bi.partition.first_rows() != ai.partition.first_rows())
    solver::fail_input_everywhere("B (", bi.description, ") holds other rows on the ranks than A (", ai.description,
                                  "): give both the same row ranges");
  if (bi.complex && !ai.complex)
    solver::fail_input_everywhere("B (", bi.description, ") holds complex values and A (", ai.description,
                                  ") real ones: A x = lambda B x with a complex Hermitian B needs a complex A");
  return solver::place_b_like_a(bi, *a.impl->distributed, comm, "B: " + bi.description);
}

}  // namespace

template <class T>
void internal::copy_result(const solver::LobpcgResult<T>& r, EigsResult& out) {
  out.eigenvalues = r.eigenvalues;
  out.residual_norms = r.residual_norms;
  out.relative_residuals = r.relative_residuals;
  out.converged = r.converged;
  out.iterations = r.iterations;
  out.block_size = r.block_size;
  out.stop = solver::to_string(r.stop);
  for (const solver::LobpcgStep& step : r.history) {
    out.history_eigenvalues.push_back(step.eigenvalues);
    out.history_residual_norms.push_back(step.residual_norms);
  }
  for (const auto& [name, member] : solver::kLobpcgPhases)
    add_phase(out.timings, std::string(name).c_str(), r.stats.timings.*member);
}

template void internal::copy_result(const solver::LobpcgResult<double>&, EigsResult&);
template void internal::copy_result(const solver::LobpcgResult<std::complex<double>>&, EigsResult&);

namespace {

// LOBPCG (or the filter, where the method's rule picks it) on A x = lambda x or A x = lambda B x with real
// (T double) or complex Hermitian (T complex double) values.
template <class T>
EigsResult pairs(Matrix& a, Matrix* b, const EigsRequest& request, const cfg::EigensolverSettings& settings,
                 double begin) {
  MPI_Comm comm = a.impl->comm;
  solver::LobpcgOptions options = settings.lobpcg;
  const solver::MethodChoice method = solver::collectively(comm, [&] {
    return solver::choose_eigen_method(settings.method, options.k, b != nullptr, request.constraints.has_value(),
                                       solver::names_a_preconditioner(settings.preconditioner), is_complex_v<T>);
  });
  const cfg::ExecutionConfig execution = read_execution(request.execution, comm);
  a.distribute(request.execution);
  const std::int64_t n = a.impl->distributed->partition.global_rows();
  if (options.k >= n)
    solver::fail_input_everywhere("k = ", options.k, " but the matrix has ", n,
                                  " rows: k must be smaller than the number of rows");
  std::optional<solver::DistributedRows> b_rows;
  if (b) b_rows = b_like_a(*b, a, comm);

  const dense::Context context = solver::make_context(execution.backend, comm);
  const std::unique_ptr<solver::DistributedOperator<T>> a_op = make_operator<T>(a, context);
  solver::DistributedOperator<T>& op = *a_op;
  std::unique_ptr<solver::DistributedOperator<T>> b_op;
  if (b_rows)
    b_op = std::make_unique<solver::DistributedOperator<T>>(comm, context, b_rows->rows_for<T>(), b_rows->partition);
  EigsResult out;
  const solver::ResolvedPreconditioner chosen = solver::resolve_preconditioner(
      settings.preconditioner, options.which, method.method == solver::EigenMethod::chebyshev_filter, false,
      settings.preconditioner.kind == PreconditionerKind::automatic ? solver::min_abs_diagonal(op) : 0.0);
  const auto preconditioner = solver::collectively(
      comm, [&] { return make_preconditioner(chosen.options, op, options.which, true, out.preconditioner); });
  if (!chosen.reason.empty()) out.preconditioner += " (" + chosen.reason + ")";

  std::optional<dense::DenseBlock<T>> start_copy, constraints_copy;
  std::optional<dense::ConstDenseView<T>> start, constraints;
  solver::collectively(comm, [&] {
    if (request.start) start = in_space<T>(*request.start, context.space(), start_copy, "X");
    if (request.constraints) constraints = in_space<T>(*request.constraints, context.space(), constraints_copy, "Y");
  });
  if (request.constraints && options.k + request.constraints->cols >= n)
    solver::fail_input_everywhere("Y has ", request.constraints->cols, " column",
                                  request.constraints->cols == 1 ? "" : "s", " and k is ", options.k,
                                  ": together they must be below the matrix's ", n, " rows");

  const std::function<bool()> stop = agreed_stop(request.interrupted, comm);
  if (stop) options.between_iterations = [&stop](const solver::LobpcgIterate&) { return stop(); };
  solver::LobpcgResult<T> r = timed_solve(context, begin, out.timings, [&] {
    return solver::collectively(comm, [&] {
      if (method.method == solver::EigenMethod::chebyshev_filter)
        return solver::chebyshev_filter_eigs<T>(op, options, settings.filter, start);
      try {
        return solver::lobpcg<T>(op, options, preconditioner.get(), start, b_op.get(), constraints);
      } catch (const solver::BNotPositiveDefinite& e) {
        throw solver::AgreedError("B: " + b->description() + ": " + e.what(), true);
      }
    });
  });
  copy_result(r, out);
  out.method = std::string(to_string(method.method)) + " (" + method.reason + ")";
  out.eigenvectors = own(std::move(r.eigenvectors), context);
  return out;
}

}  // namespace

EigsResult lobpcg(Matrix& a, Matrix* b, const EigsRequest& request) {
  return translated([&] {
    const double begin = now();
    MPI_Comm comm = a.impl->comm;
    const cfg::EigensolverSettings settings = solver::collectively(
        comm, [&] { return cfg::eigensolver_from_keywords(request.eigensolver.keywords, request.eigensolver.source); });
    if (settings.interval)
      return a.complex() ? window_pairs<std::complex<double>>(a, b, request, settings, begin)
                         : window_pairs<double>(a, b, request, settings, begin);
    return a.complex() ? pairs<std::complex<double>>(a, b, request, settings, begin)
                       : pairs<double>(a, b, request, settings, begin);
  });
}

}  // namespace blockeigs::python
