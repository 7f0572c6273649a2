// The facade's window (eigensolver.interval): every pair in [a, b] by the
// library's window solver, its counts by inertia where the build and the size
// allow (eigensolver.count), the pairs as LOBPCG's result and the window's
// account beside them.
#include "python/src/facade_internal.hpp"
#include "solver/plan/window_memory.hpp"
#include "solver/window/inertia.hpp"
#include "solver/window/window.hpp"

namespace blockeigs::python {

using namespace internal;

namespace {

WindowSummary summary(const solver::WindowReport& report, const solver::WindowOptions& options, std::int64_t found,
                      const std::string& why) {
  WindowSummary w;
  w.lower = options.lower;
  w.upper = options.upper;
  w.count = found;
  w.count_method = (report.count_method.empty() ? std::string("density") : "inertia, " + report.count_method) +
                   (why.empty() ? "" : "; " + why);
  w.certified = report.certified;
  w.certified_below = report.certified_below;
  w.expected = report.expected.count;
  w.expected_error = report.expected.error;
  w.spectrum_lower = report.spectrum_lower;
  w.spectrum_upper = report.spectrum_upper;
  for (const solver::SliceReport& s : report.slices)
    w.slices.push_back({s.lower, s.upper, s.expected.count, s.expected.error, s.certified, s.found, s.block, s.degree,
                        s.iterations, s.seconds, s.complete, s.group, s.duplicates});
  w.groups = report.groups;
  return w;
}

// Each group's copy of A: split from the device arrays where the operator was (no rows move), else from
// this rank's rows of the operator's numbering.
template <class T>
solver::GroupOperatorFactory<T> group_operator(Matrix& a, const dense::Context& context) {
  Matrix::Impl& m = *a.impl;
  if (!m.on_device) return solver::distributed_group_operator<T>(m.distributed->rows_for<T>(), context);
  return [&m, &context](const solver::SliceGroups& groups) -> std::unique_ptr<solver::LinearOperator<T>> {
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(groups.group_comm(), &rank));
    solver::ReplicatedCsr held = *m.replicated;  // the same arrays, this rank's rows of its group
    held.begin = groups.rows().begin(rank);
    held.end = groups.rows().end(rank);
    return std::make_unique<solver::DistributedOperator<T>>(groups.group_comm(), context, held, groups.rows());
  };
}

}  // namespace

template <class T>
EigsResult internal::window_pairs(Matrix& a, const Matrix* b, const EigsRequest& request,
                                  const cfg::EigensolverSettings& settings, double begin) {
  MPI_Comm comm = a.impl->comm;
  const char* refused = b                     ? "B (a window is for standard problems A x = lambda x)"
                        : request.constraints ? "Y (constraints)"
                        : request.start       ? "X (a start block)"
                                              : nullptr;
  if (refused)
    solver::fail_input_everywhere(request.eigensolver.source, ": interval is not taken with ", refused,
                                  ": remove one of them");
  const cfg::ExecutionConfig execution = read_execution(request.execution, comm);
  a.distribute(request.execution);
  const dense::Context context = solver::make_context(execution.backend, comm);
  const std::unique_ptr<solver::DistributedOperator<T>> op = make_operator<T>(a, context);
  solver::WindowOptions window = settings.window;
  if (is_complex_v<T> && settings.count == WindowCount::inertia)
    solver::fail_input_everywhere(request.eigensolver.source, ": count 'inertia' takes real matrices (",
                                  solver::kNoComplexInertia, "); use 'density' or None");
  const solver::CountChoice count =
      solver::choose_count(settings.count, a.impl->input.partition.global_rows(), is_complex_v<T>);
  std::unique_ptr<solver::InertiaCounter> inertia;
  if (count.inertia) {  // counts do not depend on the numbering: the input's rows, on the host
    const solver::DistributedRows& input = a.impl->host_input();
    inertia =
        solver::collectively(comm, [&] { return solver::make_inertia_counter(comm, input.rows, input.partition); });
  }
  window.inertia = inertia.get();
  window.check_memory = [&](const solver::WindowMemory& m) {
    const solver::DistributedRows& d = *a.impl->distributed;
    solver::check_window_memory(m, d.rows_for<T>(), d.partition.global_rows(), d.global_nnz, context, comm,
                                execution.memory_limit_bytes);
  };
  const solver::LobpcgOptions& options = settings.lobpcg;  // the window's slices do not poll a stop request
  EigsResult out;
  solver::WindowResult<T> r = timed_solve(context, begin, out.timings, [&] {
    return solver::collectively(
        comm, [&] { return solver::window_eigs<T>(*op, options, window, group_operator<T>(a, context)); });
  });
  copy_result(r.pairs, out);
  out.preconditioner = "none";
  out.method = "window (interval): the density of states, then polynomial-filtered subspace iteration on " +
               std::to_string(r.report.slices.size()) + " slice" + (r.report.slices.size() == 1 ? "" : "s");
  out.window = summary(r.report, window, static_cast<std::int64_t>(r.pairs.eigenvalues.size()), count.why);
  out.eigenvectors = own(std::move(r.pairs.eigenvectors), context);
  return out;
}

template EigsResult internal::window_pairs<double>(Matrix&, const Matrix*, const EigsRequest&,
                                                   const cfg::EigensolverSettings&, double);
template EigsResult internal::window_pairs<std::complex<double>>(Matrix&, const Matrix*, const EigsRequest&,
                                                                 const cfg::EigensolverSettings&, double);

}  // namespace blockeigs::python
