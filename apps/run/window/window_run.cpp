#include "apps/run/window/window_run.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/environment.hpp"
#include "apps/run/checkpoint.hpp"
#include "apps/run/eigs_report.hpp"
#include "apps/run/memory_report.hpp"
#include "apps/run/monitor_pacing.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "apps/run/preconditioner_setup.hpp"
#include "apps/run/steps/account_lines.hpp"
#include "apps/run/steps/result_metadata.hpp"
#include "apps/run/steps/scientific.hpp"
#include "apps/run/steps/solve_steps.hpp"
#include "apps/run/summary.hpp"
#include "apps/run/window/window_report.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/plan/window_memory.hpp"
#include "solver/window/inertia.hpp"
#include "solver/window/window.hpp"

namespace blockeigs::apps {
namespace {

void print_header(const std::string& summary, const cfg::EigsConfig& config, MPI_Comm comm) {
  if (!is_root(comm)) return;
  const solver::LobpcgOptions& o = config.eigensolver.lobpcg;
  const solver::WindowOptions& w = config.eigensolver.window;
  std::printf("block-eigs %s\n%s", BLOCKEIGS_VERSION, summary.c_str());
  std::printf(
      "solve      every eigenpair in [%s, %s], %s test, tolerance %g, max %d iterations a slice, preconditioner "
      "none\n",
      scientific(w.lower, 10).c_str(), scientific(w.upper, 10).c_str(), to_string(o.test).data(), o.tolerance,
      o.max_iterations);
  std::printf(
      "method     window (eigensolver.interval): the density of states, then polynomial-filtered subspace "
      "iteration on %s\n",
      w.slices > 0 ? (std::to_string(w.slices) + " slice" + (w.slices > 1 ? "s" : "")).c_str()
                   : "slices of about 1,000 estimated eigenvalues each");
}

// Rank 0's monitor lines (output.monitor, every output.monitor_every iterations and each slice's last).
void set_progress(solver::WindowOptions& window, const cfg::OutputConfig& output, MPI_Comm comm) {
  if (!is_root(comm) || !output.monitor) return;
  std::printf(
      "monitor    each line a slice's iteration: the pairs found (locked), the Ritz values inside the slice not "
      "yet converged and the largest of their relative residuals, the block, the time in the slice\n");
  window.progress = [pacing = MonitorPacing(output.monitor_every)](int slice, const solver::SliceProgress& p) mutable {
    if (pacing.due(p.iteration, p.elapsed, false))
      std::printf("slice %3d  iter %4d  found %5d  inside %5d  residual %s  block %5d  %.2f s\n", slice, p.iteration,
                  p.found, p.inside, scientific(p.worst).c_str(), p.block, p.elapsed);
    if (pacing.flush_due(p.elapsed, false)) std::fflush(stdout);
  };
}

// The result's datasets, LOBPCG's names for the pairs (rank 0).
template <class T>
void write_pairs(io::Hdf5Writer& w, const solver::LobpcgResult<T>& r, const SolveCosts& costs) {
  w.write("/eigenvalues", r.eigenvalues);
  w.write("/residual_norms", r.residual_norms);
  w.write("/relative_residuals", r.relative_residuals);
  w.write("/converged", std::vector<std::int64_t>(r.converged.begin(), r.converged.end()));
  w.write("/passes_relative", std::vector<std::int64_t>(r.passes_relative.begin(), r.passes_relative.end()));
  w.write("/passes_backward", std::vector<std::int64_t>(r.passes_backward.begin(), r.passes_backward.end()));
  w.write("/iterations", std::vector<std::int64_t>{r.iterations});
  w.attribute("/", "all_converged", r.all_converged());
  w.attribute("/", "norm_estimate", r.norm_estimate);
  w.attribute("/", "stop", stop_summary(r));
  w.attribute("/", "block_size", std::int64_t{r.block_size});
  w.attribute("/", "problem", std::string("standard"));
  w.attribute("/", "search_precision", std::string(r.stats.search_in_fp32 ? "fp32" : "fp64"));
  w.attribute("/", "filter_products", r.stats.filter_products);
  w.attribute("/", "filter_products_fp32", r.stats.single_filter_products);
  write_phases(w, r.stats.timings, solver::kLobpcgPhases, costs);
}

}  // namespace

template <class T>
int solve_window(const cfg::EigsConfig& config, const solver::DistributedRows& matrix, const dense::Context& context,
                 MPI_Comm comm, RunAccount& account) {
  solver::DistributedOperator<T> op = make_operator<T>(config.execution, matrix, context, comm);
  account.lap(Phase::operator_build);
  print_header(distribution_summary(matrix, op, config.execution, 64), config, comm);
  solver::WindowOptions window = config.eigensolver.window;
  set_progress(window, config.output, comm);
  // Complex values: by the density (complex_values.hpp refused count: inertia).
  const solver::CountChoice count =
      solver::choose_count(config.eigensolver.count, matrix.partition.global_rows(), is_complex_v<T>);
  std::unique_ptr<solver::InertiaCounter> inertia;
  if (count.inertia) inertia = solver::make_inertia_counter(comm, matrix.rows, matrix.partition);
  window.inertia = inertia.get();
  const RowsFor<T>& rows = matrix.rows_for<T>();
  std::optional<solver::MemoryPlan> plan;  // once the slices are planned (none outside the spectrum)
  window.check_memory = [&](const solver::WindowMemory& m) {
    plan = solver::check_window_memory(m, rows, matrix.partition.global_rows(), matrix.global_nnz, context, comm,
                                       config.execution.memory_limit_bytes);
  };
  const std::string text = config_text(config.path, config.overrides, comm);
  const CheckpointGuard guard(config.output.checkpoint, "block-eigs", 0, text, matrix.numbering, comm);
  account.lap(Phase::report);
  print_setup(account, comm);
  op.reset_timings();
  const solver::WindowResult<T> result = solver::window_eigs<T>(
      op, config.eigensolver.lobpcg, window,
      solver::distributed_group_operator<T>(rows, context, config.execution.spmm_algorithm, config.execution.halo));
  account.lap(Phase::solve);
  const int found = static_cast<int>(result.pairs.eigenvalues.size());
  const SolveCosts costs = solve_costs(op, BuiltPreconditioner<T>{});
  const std::string memory = plan ? memory_line(*plan, comm) : std::string();
  if (is_root(comm)) {
    print_window_report(result.report, window, found, count.why);
    solver::LobpcgOptions shown = config.eigensolver.lobpcg;
    shown.k = found;
    print_report(result.pairs, shown, false, 0, costs, guard, memory);
  }
  account.lap(Phase::report);
  if (!config.output.path.empty())
    write_result(
        config.output.path,
        config.output.eigenvectors ? std::vector<DistributedBlock>{block_in_input_order(
                                         "/eigenvectors", result.pairs.eigenvectors.cview(), matrix.numbering, comm)}
                                   : std::vector<DistributedBlock>{},
        [&](io::Hdf5Writer& w) {
          write_pairs(w, result.pairs, costs);
          write_window_datasets(w, result.report, window);
          w.write_string("/config", text);
          write_provenance(w, "block-eigs", context, comm);
          w.attribute("/", "matrix", matrix.description);
        },
        account, comm);
  return finish_run(account, guard, result.pairs.all_converged(), comm);
}

#define BLOCKEIGS_SOLVE_WINDOW(T)                                                                             \
  template int solve_window<T>(const cfg::EigsConfig&, const solver::DistributedRows&, const dense::Context&, \
                               MPI_Comm, RunAccount&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SOLVE_WINDOW)
#undef BLOCKEIGS_SOLVE_WINDOW

}  // namespace blockeigs::apps
