#include "apps/run/eigs_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "apps/app_main.hpp"
#include "apps/environment.hpp"
#include "apps/run/checkpoint.hpp"
#include "apps/run/eigs_problem.hpp"
#include "apps/run/memory_report.hpp"
#include "apps/run/monitor_pacing.hpp"
#include "apps/run/output/distributed_output.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "apps/run/preconditioner_setup.hpp"
#include "apps/run/steps/account_lines.hpp"
#include "apps/run/steps/host_rows.hpp"
#include "apps/run/steps/matrix_setup.hpp"
#include "apps/run/steps/result_metadata.hpp"
#include "apps/run/steps/scientific.hpp"
#include "apps/run/steps/solve_steps.hpp"
#include "apps/run/summary.hpp"
#include "core/checks.hpp"
#include "core/enums.hpp"
#include "io/config.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"

namespace blockeigs::apps {
namespace {

// Which stopping tests pair j meets, whichever was chosen (relative implies backward).
template <class T>
const char* tests_passed(const solver::LobpcgResult<T>& r, int j) {
  return r.passes_relative[j] ? "relative, backward" : r.passes_backward[j] ? "backward" : "none";
}

// "0, 1, 2".
std::string pair_list(const std::vector<int>& pairs) {
  std::string list;
  for (int j : pairs) list += (list.empty() ? "" : ", ") + std::to_string(j);
  return list;
}

// A jump of a wanted Ritz value in words: "pair 0 fell from 7.487e-01 (residual bound 4.9e-03) to 6.127e-01".
std::string describe_jump(const solver::LobpcgJump& j) {
  return "pair " + std::to_string(j.pair) + (j.to < j.from ? " fell" : " rose") + " from " + scientific(j.from, 6) +
         " (residual bound " + scientific(j.bound) + ") to " + scientific(j.to, 6);
}

// How the solve ended, in a line: converged, or why not.
template <class T>
std::string stop_summary(const solver::LobpcgResult<T>& r) {
  const std::string residuals = r.generalized ? "||A x - lambda B x||" : "||A x - lambda x||";
  switch (r.stop) {
    case solver::LobpcgStop::converged:
      return "all converged";
    case solver::LobpcgStop::iteration_limit:
      return "NOT all converged within max_iterations";
    case solver::LobpcgStop::no_search_direction:
      return "NOT all converged: stopped, no search direction is left outside the current basis (the tolerance "
             "is below what rounding allows for this matrix)";
    case solver::LobpcgStop::stagnated: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, stagnating: since iteration " + std::to_string(d.fallen_at) +
             " neither have the residuals " + residuals + " (their geometric mean) fallen by 10% nor has a wanted "
             "eigenvalue moved toward the wanted end beyond rounding (lowest mean " + scientific(d.smallest) +
             " at iteration " + std::to_string(d.smallest_iteration) + ", now " + scientific(d.last) +
             "); the best iterate is returned. A preconditioner, a looser tolerance or "
             "eigensolver.convergence_test: backward may help (eigensolver.stagnation_window sets the window)";
    }
    case solver::LobpcgStop::below_floor: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, cannot reach the tolerance: the floor is " + scientific(r.floor) +
             " (eps ||A|| / |lambda|, ||A|| >= " + scientific(r.norm_estimate) + ", for pair" +
             (r.below_floor.size() > 1 ? "s " : " ") + pair_list(r.below_floor) +
             "): the residuals " + residuals + " (their geometric mean) reached " + scientific(d.smallest) +
             " at iteration " + std::to_string(d.smallest_iteration) + " and then " +
             (d.diverged ? "grew to " + scientific(d.last) : "stopped falling (" + scientific(d.last) + ")") +
             "; the best iterate is returned. Use a tolerance above the floor, or eigensolver.convergence_test: "
             "backward";
    }
    case solver::LobpcgStop::interrupted:
      return "NOT all converged: interrupted by a signal";
    case solver::LobpcgStop::diverged: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, diverging: the residuals " + residuals + " (their geometric mean) grew from " +
             scientific(d.smallest) + " (iteration " + std::to_string(d.smallest_iteration) + ") to " +
             scientific(d.last) + " (pair " + std::to_string(d.pair) +
             ", the largest); the best iterate is returned. A looser tolerance, another preconditioner or "
             "eigensolver.convergence_test: backward may help";
    }
  }
  return "";
}

// Where a solve did not converge: how its relative residuals compare with
// the floor fp64 allows, eps ||A|| / |lambda| (||A|| estimated from below:
// the power method's bound or the largest Ritz value seen).
template <class T>
void print_floor(const solver::LobpcgResult<T>& r, const solver::LobpcgOptions& o) {
  const double eps = std::numeric_limits<T>::epsilon();
  double floor = 0, reached = INFINITY;
  std::string below;  // pairs whose floor is above the tolerance
  for (int j = 0; j < o.k; ++j) {
    if (r.converged[j]) continue;
    const double f = eps * r.norm_estimate / std::abs(r.eigenvalues[j]);
    floor = std::max(floor, f);
    reached = std::min(reached, r.relative_residuals[j]);
    if (o.test == solver::StoppingTest::relative && f > o.tolerance) below += (below.empty() ? "" : ", ") + std::to_string(j);
  }
  if (floor == 0) return;
  if (!below.empty())
    std::printf("note: the tolerance %g is below the relative residual fp64 allows for pair%s %s (its floor eps ||A|| "
                "/ |lambda|, ||A|| >= %s: up to %s); a looser tolerance or eigensolver.convergence_test: backward\n",
                o.tolerance, below.find(',') == std::string::npos ? "" : "s", below.c_str(),
                scientific(r.norm_estimate).c_str(), scientific(floor).c_str());
  else
    std::printf("note: the unconverged pairs' relative residuals (from %s) are above fp64's floor (eps ||A|| / "
                "|lambda|, about %s here, ||A|| estimated at %s): the iteration, not rounding, holds them; a "
                "preconditioner helps\n",
                scientific(reached).c_str(), scientific(floor).c_str(), scientific(r.norm_estimate).c_str());
}

// The solver's one report, early in the run, that the tolerance is below
// what fp64 allows some wanted pairs under the relative test.
void print_floor_warning(const solver::LobpcgProgress& p, double tolerance) {
  const std::string pairs = pair_list(p.below_floor);
  std::printf("warning: at iteration %d, the tolerance %g is below the relative residual fp64 allows for pair%s %s "
              "(its floor eps ||A|| / |lambda| is at least %s, ||A|| >= %s): %s cannot converge. Use a tolerance "
              "above %s, or eigensolver.convergence_test: backward\n",
              p.iteration, tolerance, p.below_floor.size() > 1 ? "s" : "", pairs.c_str(),
              scientific(p.floor).c_str(), scientific(p.norm_estimate).c_str(),
              p.below_floor.size() > 1 ? "they" : "it", scientific(p.floor).c_str());
  std::fflush(stdout);
}

// The run's jumps of wanted Ritz values under the table: the first few in full.
void print_jumps(const std::vector<solver::LobpcgJump>& jumps, int first_iteration) {
  if (jumps.empty()) return;
  constexpr std::size_t shown = 4;
  std::string text;
  for (std::size_t i = 0; i < std::min(shown, jumps.size()); ++i)
    text += (i ? "; " : "") + std::string("iteration ") + std::to_string(first_iteration + jumps[i].iteration) + ", " +
            describe_jump(jumps[i]);
  if (jumps.size() > shown) text += "; ... (" + std::to_string(jumps.size()) + " in all)";
  std::printf("note: %zu jump%s of a wanted eigenvalue beyond its residual bound (an eigenvalue the block had missed, "
              "found): %s\n",
              jumps.size(), jumps.size() > 1 ? "s" : "", text.c_str());
}

// "resumed after iteration 57, " where a run went on from a checkpoint.
std::string resumed_from(int first_iteration) {
  return first_iteration > 0 ? "resumed after iteration " + std::to_string(first_iteration) + ", " : "";
}

// LOBPCG's start block on this rank (none: random columns) and the iteration
// it was taken after (0 but for a checkpoint).
template <class T>
struct StartBlock {
  std::optional<spmm::DenseBlock<T>> block;
  int first_iteration = 0;
};

// From `resume` (a checkpoint: its first `block` columns, the wanted pairs
// first), or eigensolver.start (at most `block` columns). Random columns (all
// of them, or those a start file lacks) are LOBPCG's own (fill_random with
// eigensolver.seed) for the input's rows, so that the start does not depend
// on the partition or the order of the rows. Collective.
template <class T>
StartBlock<T> start_block(const io::EigsConfig& config, const solver::LinearOperator<T>& op,
                          const solver::RowNumbering& numbering, int block, const EigsProblem<T>& problem,
                          MPI_Comm comm) {
  const io::EigensolverConfig& settings = config.eigensolver;
  const std::int64_t rows = op.local_rows();
  StartBlock<T> start;
  io::DenseRows values;
  if (!config.resume.empty()) {
    ResumePoint point = read_resume_point(config.resume, "block-eigs", numbering, comm);
    check_resume_problem(config.resume, problem.generalized(), problem.b_source, comm);
    check_resume_budget(config.resume, point.iteration, "eigensolver.max_iterations", settings.max_iterations);
    start.first_iteration = point.iteration;
    values = std::move(point.rows);
    if (values.cols > block) {  // a smaller block this time: keep its leading columns
      std::vector<double> kept;
      for (std::int64_t i = 0; i < rows; ++i)
        kept.insert(kept.end(), values.values.begin() + i * values.cols, values.values.begin() + i * values.cols + block);
      values.values = std::move(kept);
      values.cols = block;
    }
  } else if (!settings.start_file.empty()) {
    // Read in the input's numbering; the rows then move to their ranks.
    values = read_dense_rows(settings.start_file, settings.start_dataset, numbering, comm);
    if (values.cols > block)
      solver::fail_input_everywhere(settings.start_file, ": ", settings.start_dataset, " has ", values.cols,
                                    " columns, more than the block size ", block);
  }
  // Where the operator numbers rows as the input does, LOBPCG's own random columns are these.
  if (numbering.is_identity() || values.cols == block) {
    if (values.cols > 0) start.block = from_host_doubles<T>(op.context().space(), rows, values.cols, values.values);
    return start;
  }
  spmm::DenseBlock<T> random = random_rows<T>(op.context(), numbering, block - values.cols, settings.seed, comm,
                                              values.cols);
  if (values.cols == 0) {  // all random: drawn where the rows are, no trip through the host
    start.block = std::move(random);
    return start;
  }
  const std::vector<double> random_values = solver::host_doubles<T>(random.cview());
  std::vector<double> all(static_cast<std::size_t>(rows * block));
  for (std::int64_t i = 0; i < rows; ++i) {
    std::copy_n(values.values.begin() + i * values.cols, values.cols, all.begin() + i * block);
    std::copy_n(random_values.begin() + i * (block - values.cols), block - values.cols,
                all.begin() + i * block + values.cols);
  }
  start.block = from_host_doubles<T>(op.context().space(), rows, block, all);
  return start;
}

solver::LobpcgOptions lobpcg_options(const io::EigensolverConfig& c, std::int64_t rows) {
  solver::LobpcgOptions o;
  o.k = c.k;
  o.block_size = c.block_size;
  o.which = c.which;
  o.tolerance = c.tolerance;
  o.test = c.test;
  o.max_iterations = c.max_iterations;
  o.stagnation_window = c.stagnation_window;
  o.seed = c.seed;
  o.search_precision = c.search_precision;
  if (o.k >= rows)
    solver::fail_input_everywhere("eigensolver.k = ", o.k, " but the matrix has ", rows,
                                  " rows: k must be smaller than the number of rows");
  return o;
}

// The run's header on rank 0: version, distribution, the problem and what is solved.
template <class T>
void print_header(const std::string& summary, const EigsProblem<T>& problem, const solver::LobpcgOptions& options,
                  int block, PreconditionerKind preconditioner, MPI_Comm comm) {
  if (!is_root(comm)) return;
  std::printf("block-eigs %s\n%s%s", BLOCKEIGS_VERSION, summary.c_str(), problem_summary(problem).c_str());
  std::printf("solve      LOBPCG%s, %d %s eigenpairs, block %d, %s test, tolerance %g, max %d iterations, "
              "preconditioner %s\n",
              problem.generalized() ? (" (" + equation(true) + ")").c_str() : "", options.k,
              to_string(options.which).data(), block, to_string(options.test).data(), options.tolerance,
              options.max_iterations, to_string(preconditioner).data());
}

// Rank 0 prints the monitor lines (output.monitor, every output.monitor_every
// iterations, numbered on from `first`) and, monitor or not, the solver's one
// warning about the floor.
template <class T>
void set_monitor(solver::LobpcgOptions& options, const io::OutputConfig& output, const EigsProblem<T>& problem,
                 int first, MPI_Comm comm) {
  if (!is_root(comm)) return;
  if (output.monitor && problem.generalized())
    std::printf("monitor    %s: the first unconverged pair's eigenvalue and its residual ||A x - \u03bb B x||\n",
                equation(true).c_str());
  options.monitor = [k = options.k, lines = output.monitor, pacing = MonitorPacing(output.monitor_every),
                     tolerance = options.tolerance, first](const solver::LobpcgProgress& p) mutable {
    if (!p.below_floor.empty()) print_floor_warning(p, tolerance);
    // A jump prints its iteration's line whatever the pacing.
    if (lines && (pacing.due(p.iteration, p.elapsed, p.last) || !p.jumps.empty())) {
      std::string jumps;
      for (const solver::LobpcgJump& j : p.jumps) jumps += (jumps.empty() ? "" : "; ") + describe_jump(j);
      std::printf("iter %5d/%d  converged %3d/%d  eigenvalue %s  residual %s  %s%s%s\n", first + p.iteration,
                  first + p.max_iterations, p.converged, k, scientific(p.eigenvalue, 10).c_str(),
                  scientific(p.residual).c_str(), pacing.timing().c_str(),
                  jumps.empty() ? "" : "  jump (an eigenvalue missed so far): ", jumps.c_str());
    }
    if (pacing.flush_due(p.elapsed, p.last)) std::fflush(stdout);
  };
}

// The backward test bounds ||r|| by tol (||A|| + |lambda|), not by
// |lambda|: a small eigenvalue can pass with a relative residual near or
// above 1, which bounds nothing about it, and such a pair may stand in
// for a smaller eigenvalue that was missed (s1rmq4m1 with Jacobi at 1e-6
// skips its smallest, 0.38, and passes pairs from 0.75 at relative
// residuals up to 0.78). Say so where a pair's is above 0.1.
template <class T>
void print_loose_pairs(const solver::LobpcgResult<T>& result, const solver::LobpcgOptions& options) {
  if (options.test != solver::StoppingTest::backward) return;
  int loose = 0;
  for (int j = 0; j < options.k; ++j) loose += result.relative_residuals[j] > 0.1 ? 1 : 0;
  if (loose > 0)
    std::printf("note: %d of the %d pairs passed the backward test (||r|| <= tolerance x (||A|| est. %s + "
                "|lambda|)) with relative residuals above 0.1, which do not bound their eigenvalues' relative "
                "error; an eigenvalue further toward the wanted end may have been missed. "
                "eigensolver.convergence_test: relative bounds it\n",
                loose, options.k, scientific(result.norm_estimate).c_str());
}

// Rank 0's report after the solve: the pairs' table, the iterations and why
// the solve stopped, the notes, the time and the memory line.
template <class T>
void print_report(const solver::LobpcgResult<T>& result, const solver::LobpcgOptions& options, int first,
                  const SolveCosts& costs, const CheckpointGuard& guard, const std::string& memory) {
  std::printf("\n  pair          eigenvalue      residual  rel. residual  converged  tests passed\n");
  for (int j = 0; j < options.k; ++j)
    std::printf("  %4d  %18.12e  %s      %s  %-9s  %s\n", j, result.eigenvalues[j],
                scientific(result.residual_norms[j]).c_str(), scientific(result.relative_residuals[j]).c_str(),
                result.converged[j] ? "yes" : "NO", tests_passed(result, j));
  std::printf("\niterations %d (%srestarts %d, %d explicit recompute%s of A X and A P%s); %s\n",
              first + result.iterations, resumed_from(first).c_str(), result.stats.restarts, result.stats.recomputes,
              result.stats.recomputes == 1 ? "" : "s", result.stats.search_in_fp32 ? ", residual block in fp32" : "",
              stop_summary(result).c_str());
  if (guard.signal() != 0) std::printf("%s\n", guard.interruption_summary().c_str());
  if (!result.all_converged() && result.stop != solver::LobpcgStop::interrupted &&
      result.stop != solver::LobpcgStop::below_floor)
    print_floor(result, options);
  print_jumps(result.jumps, first);
  if (result.restored)
    std::printf("note: the pairs are those of an earlier iterate, whose residuals were smaller than the last "
                "one's\n");
  print_loose_pairs(result, options);
  const auto& t = result.stats.timings;
  std::printf("solve time %.3f s: SpMM %.3f (halo %.3f), orthogonalisation %.3f, Rayleigh-Ritz %.3f "
              "(small eigenproblem on the host %.3f), %s, other %.3f\n",
              t.total, t.spmm - costs.halo, costs.halo, t.orthogonalization, t.rayleigh_ritz, t.small_eigenproblem,
              preconditioner_time(t.preconditioner, costs.preconditioner).c_str(), t.other);
  std::printf("%s", memory.c_str());
}

// The result file's datasets (rank 0).
template <class T>
void write_datasets(io::Hdf5Writer& w, const solver::LobpcgResult<T>& result, int k, int first) {
  std::vector<double> history_values, history_residuals;
  for (const auto& step : result.history) {
    history_values.insert(history_values.end(), step.eigenvalues.begin(), step.eigenvalues.end());
    history_residuals.insert(history_residuals.end(), step.residual_norms.begin(), step.residual_norms.end());
  }
  const auto steps = static_cast<std::int64_t>(result.history.size());
  w.write("/eigenvalues", result.eigenvalues);
  w.write("/residual_norms", result.residual_norms);
  w.write("/relative_residuals", result.relative_residuals);
  w.write("/converged", std::vector<std::int64_t>(result.converged.begin(), result.converged.end()));
  w.write("/passes_relative", std::vector<std::int64_t>(result.passes_relative.begin(), result.passes_relative.end()));
  w.write("/passes_backward", std::vector<std::int64_t>(result.passes_backward.begin(), result.passes_backward.end()));
  w.write("/iterations", std::vector<std::int64_t>{first + result.iterations});
  w.write_matrix("/history/eigenvalues", steps, k, history_values);
  w.write_matrix("/history/residual_norms", steps, k, history_residuals);
}

// The result file's root attributes after the problem's (rank 0).
template <class T>
void write_attributes(io::Hdf5Writer& w, const solver::LobpcgResult<T>& result, solver::StoppingTest test, int first,
                      const SolveCosts& costs, const CheckpointGuard& guard) {
  w.attribute("/", "all_converged", result.all_converged());
  w.attribute("/", "norm_estimate", result.norm_estimate);
  w.attribute("/", "convergence_test", std::string(to_string(test)));
  w.attribute("/", "stop", stop_summary(result));
  w.attribute("/", "best_iterate_restored", result.restored);
  w.attribute("/", "ritz_jumps", static_cast<std::int64_t>(result.jumps.size()));
  w.attribute("/", "resumed_from_iteration", std::int64_t{first});
  if (guard.signal() != 0) w.attribute("/", "interrupted", guard.interruption_summary());
  w.attribute("/", "block_size", std::int64_t{result.block_size});
  w.attribute("/", "search_precision", std::string(result.stats.search_in_fp32 ? "fp32" : "fp64"));
  const auto& t = result.stats.timings;
  for (auto [name, value] :
       {std::pair{"time_total", t.total}, {"time_spmm", t.spmm - costs.halo}, {"time_halo", costs.halo},
        {"time_orthogonalization", t.orthogonalization}, {"time_rayleigh_ritz", t.rayleigh_ritz},
        {"time_small_eigenproblem", t.small_eigenproblem}, {"time_preconditioner", t.preconditioner},
        {"time_preconditioner_spmm", costs.preconditioner.spmm}, {"time_other", t.other}})
    w.attribute("/", name, value);
  w.attribute("/", "preconditioner_products", std::int64_t{costs.preconditioner.products});
}

template <class T>
int solve(const io::EigsConfig& config, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
          const spmm::Context& context, MPI_Comm comm, RunAccount& account) {
  const io::EigensolverConfig& settings = config.eigensolver;
  solver::DistributedOperator<T> op = make_operator<T>(config.execution, matrix, context, comm);
  account.lap(Phase::operator_build);
  // B (matrix_b) on A's rows and the constraint block Y (eigensolver.constraints), where given.
  const EigsProblem<T> problem = set_up_problem<T>(config, matrix, b, context, comm);
  account.lap(Phase::matrix_b);
  const solver::MemoryPlan memory_plan = check_memory_with_operator(config, matrix, op, b, problem.b.get());
  account.lap(Phase::memory_plan);
  solver::LobpcgOptions options = lobpcg_options(settings, op.global_rows());
  const int block = options.block_size > 0 ? options.block_size : solver::default_block_size(options.k, op.global_rows());
  print_header(distribution_summary(matrix, op, config.execution, block), problem, options, block,
               settings.preconditioner.kind, comm);
  account.lap(Phase::report);

  // The start block, this rank's rows: a checkpoint's (resume), a file's
  // (eigensolver.start), or none (random columns).
  StartBlock<T> start = start_block<T>(config, op, matrix.numbering, block, problem, comm);
  const int first = start.first_iteration;
  options.max_iterations -= first;  // a resumed run's budget is what the first one left
  account.lap(Phase::start_block);
  const std::string text = config_text(config.path, config.overrides, comm);
  CheckpointGuard guard(config.output.checkpoint, "block-eigs", first, text, matrix.numbering, comm);
  CheckpointHook hook(guard);
  options.between_iterations = [&](const solver::LobpcgIterate& it) {
    return hook.step(it.iteration, [&] {
      guard.write(it.iteration, {{"/X", it.block_size, it.block}}, [&](io::Hdf5Writer& w) {
        w.write("/ritz_values", std::vector<double>(it.values.begin(), it.values.end()));
        write_provenance(w, "block-eigs", context, comm);
        write_problem_attributes(w, problem, matrix.description);
      });
    });
  };
  account.lap(Phase::config);
  const BuiltPreconditioner<T> preconditioner =
      set_up_preconditioner(settings.preconditioner, op, matrix, options.which, true, comm);
  // Jacobi's D^-1 is a rough A^-1: it damps the residuals' large-eigenvalue part, which the largest end needs
  // (494_bus, k 6: not converged in 3000 iterations with it, 60 without).
  if (is_root(comm) && options.which == SpectrumEnd::largest && settings.preconditioner.kind == PreconditionerKind::jacobi)
    std::printf("note: preconditioner jacobi approximates A^-1 and slows the largest end; chebyshev (which "
                "targets the wanted end) or none suit it better\n");
  account.lap(Phase::preconditioner);
  print_setup(account, comm);
  set_monitor(options, config.output, problem, first, comm);
  op.reset_timings();
  std::optional<spmm::ConstDenseView<T>> start_view, constraints_view;
  if (start.block) start_view = start.block->cview();
  if (problem.constraints) constraints_view = problem.constraints->cview();
  const solver::LobpcgResult<T> result = [&] {
    try {
      return solver::lobpcg<T>(op, options, preconditioner.object.get(), start_view, problem.b.get(), constraints_view);
    } catch (const solver::BNotPositiveDefinite& e) {
      throw solver::AgreedError("matrix_b: " + problem.b_source + ": " + e.what(), true);
    }
  }();
  account.lap(Phase::solve);
  account.move(Phase::solve, Phase::checkpoints, hook.seconds());
  const SolveCosts costs = solve_costs(op, preconditioner);
  const std::string memory = memory_line(memory_plan, comm);
  if (is_root(comm)) print_report(result, options, first, costs, guard, memory);

  account.lap(Phase::report);
  if (!config.output.path.empty())
    write_result(config.output.path,
                 {block_in_input_order("/eigenvectors", result.eigenvectors.cview(), matrix.numbering, comm)},
                 [&](io::Hdf5Writer& w) {
                   write_datasets(w, result, options.k, first);
                   w.write_string("/config", text);
                   write_provenance(w, "block-eigs", context, comm);
                   write_problem_attributes(w, problem, matrix.description);
                   write_attributes(w, result, options.test, first, costs, guard);
                 },
                 account, comm);
  return finish_run(account, guard, result.all_converged(), comm);
}

}  // namespace

int run_eigs(const std::string& config_path, MPI_Comm comm, const std::vector<std::string>& overrides,
             bool dry_run) {
  RunAccount account;
  account.lap(Phase::startup);
  const std::vector<env::KeyOverride> environment = environment_overrides(comm);
  const io::EigsConfig config =
      solver::collectively(comm, [&] { return io::read_eigs_config(config_path, overrides, environment); });
  const MpiChunkLimit chunk_limit(config.execution.mpi_chunk_bytes);
  return prepare_and_solve(config, comm, dry_run, account,
                           [&](auto precision, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
                               const spmm::Context& context) {
                             return solve<decltype(precision)>(config, matrix, b, context, comm, account);
                           });
}

}  // namespace blockeigs::apps
