// The facade's block CG: the request's settings and blocks, the solve, and
// its solution, residuals and timings as the result; complex A (Hermitian
// positive definite) too.
#include "python/src/facade_internal.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::python {

using namespace internal;

namespace {

// The solve for T = double, or std::complex<double> for a complex A.
template <class T>
CgResult cg_solve(Matrix& a, const CgRequest& request, const cfg::BlockCgSettings& settings, double begin) {
  MPI_Comm comm = a.impl->comm;
  const cfg::ExecutionConfig execution = read_execution(request.execution, comm);
  a.distribute(request.execution);
  const dense::Context context = solver::make_context(execution.backend, comm);
  const std::unique_ptr<solver::DistributedOperator<T>> a_op = make_operator<T>(a, context);
  solver::DistributedOperator<T>& op = *a_op;
  CgResult out;
  const std::unique_ptr<solver::Preconditioner<T>> preconditioner = solver::collectively(comm, [&] {
    return make_preconditioner<T>(settings.preconditioner, op, SpectrumEnd::smallest, false, out.preconditioner);
  });
  const Space space = context.space();
  const std::int64_t m = op.local_rows(), s = request.rhs.cols;
  std::optional<dense::DenseBlock<T>> rhs_copy;
  dense::DenseBlock<T> x(space, m, s);
  const dense::ConstDenseView<T> rhs =
      solver::collectively(comm, [&] { return in_space<T>(request.rhs, space, rhs_copy, "B"); });
  if (request.start) {  // X0 checked and taken as B is, then copied into X, which the solve overwrites
    std::optional<dense::DenseBlock<T>> x0_copy;
    const dense::ConstDenseView<T> x0 =
        solver::collectively(comm, [&] { return in_space<T>(*request.start, space, x0_copy, "X0"); });
    solver::copy_block(context, x0, x.view());
  } else {
    dense::fill_bytes(x.data(), space, 0, sizeof(T) * m * s);
  }

  solver::BlockCgOptions options = settings.cg;
  const std::function<bool()> stop = agreed_stop(request.interrupted, comm);
  if (stop) options.between_iterations = [&stop](const solver::BlockCgIterate&) { return stop(); };
  const solver::BlockCgResult r = timed_solve(context, begin, out.timings, [&] {
    return solver::collectively(comm,
                                [&] { return solver::block_cg<T>(op, rhs, x.view(), options, preconditioner.get()); });
  });
  out.iterations = r.iterations;
  out.converged = r.converged;
  out.rhs_norms = r.rhs_norms;
  out.residual_norms = r.residual_norms;
  out.true_residual_norms = r.true_residual_norms;
  out.total_iterations = r.total_iterations;
  out.stop = solver::to_string(r.stop);
  out.history = r.history;
  for (const auto& [name, member] : solver::kBlockCgPhases)
    add_phase(out.timings, std::string(name).c_str(), r.stats.timings.*member);
  out.solution = own(std::move(x), context);
  return out;
}

}  // namespace

CgResult cg(Matrix& a, const CgRequest& request) {
  return translated([&] {
    const double begin = now();
    MPI_Comm comm = a.impl->comm;
    const cfg::BlockCgSettings settings = solver::collectively(
        comm, [&] { return cfg::block_cg_from_keywords(request.block_cg.keywords, request.block_cg.source); });
    if (!a.complex()) return cg_solve<double>(a, request, settings, begin);
    return cg_solve<std::complex<double>>(a, request, settings, begin);
  });
}

}  // namespace blockeigs::python
