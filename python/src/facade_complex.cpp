// The facade's solve for a complex Hermitian A: Chebyshev-filtered subspace
// iteration on A x = lambda x (what complex values take so far, as the apps'
// complex runs), its pairs as LOBPCG's result with complex eigenvectors.
// Every argument it does not take is refused, naming it, on every rank.
#include "python/src/facade_internal.hpp"

namespace blockeigs::python {

using namespace internal;

namespace {

// The first argument a complex solve does not take, with what to do instead (empty: none).
std::string first_refusal(const Matrix* b, const EigsRequest& request, const cfg::EigensolverSettings& settings) {
  if (b) return "B (a generalized problem) takes real matrices only so far";
  if (settings.method == solver::EigenMethod::lobpcg)
    return "method 'lobpcg' takes real matrices only so far; use 'chebyshev_filter' or None";
  if (settings.preconditioner.kind != PreconditionerKind::automatic &&
      settings.preconditioner.kind != PreconditionerKind::none)
    return "M: the Chebyshev filter takes no preconditioner; leave M out";
  if (request.constraints) return "Y (constraints) is real only so far; leave it out";
  return {};
}

}  // namespace

EigsResult internal::complex_pairs(Matrix& a, const Matrix* b, const EigsRequest& request,
                                   const cfg::EigensolverSettings& settings, double begin) {
  using T = std::complex<double>;
  MPI_Comm comm = a.impl->comm;
  const std::string refusal = first_refusal(b, request, settings);
  if (!refusal.empty())
    solver::fail_input_everywhere("A (", a.description(), ") holds complex values: ", refusal,
                                  " (complex values take Chebyshev-filtered subspace iteration on A x = lambda x)");
  solver::LobpcgOptions options = settings.lobpcg;
  const cfg::ExecutionConfig execution = read_execution(request.execution, comm);
  a.distribute(request.execution);
  const std::int64_t n = a.impl->distributed->partition.global_rows();
  if (options.k >= n)
    solver::fail_input_everywhere("k = ", options.k, " but the matrix has ", n,
                                  " rows: k must be smaller than the number of rows");
  const dense::Context context = solver::make_context(execution.backend, comm);
  const std::unique_ptr<solver::DistributedOperator<T>> op = make_operator<T>(a, context);

  const std::function<bool()> stop = agreed_stop(request.interrupted, comm);
  if (stop) options.between_iterations = [&stop](const solver::LobpcgIterate&) { return stop(); };
  // X: the start block's columns (complex128, the Python layer's conversion), the rest random.
  std::optional<dense::DenseBlock<T>> start_copy;
  std::optional<dense::ConstDenseView<T>> start;
  solver::collectively(comm, [&] {
    if (request.start) start = in_space<T>(*request.start, context.space(), start_copy, "X");
  });
  EigsResult out;
  out.preconditioner = "none";
  solver::LobpcgResult<T> r = timed_solve(context, begin, out.timings, [&] {
    return solver::collectively(comm,
                                [&] { return solver::chebyshev_filter_eigs<T>(*op, options, settings.filter, start); });
  });
  copy_result(r, out);
  out.method = std::string("chebyshev_filter (") + (settings.method == solver::EigenMethod::automatic ? "auto: " : "") +
               "complex values; LOBPCG takes real values so far)";
  out.eigenvectors = own(std::move(r.eigenvectors), context);
  return out;
}

}  // namespace blockeigs::python
