#include "apps/run/cg_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "apps/app_main.hpp"
#include "apps/environment.hpp"
#include "apps/run/checkpoint.hpp"
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
#include "core/huge_pages.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {
namespace {

// Why a solve that did not converge stopped; for a stagnated one, the stuck
// columns, what they reached, the floor fp64 allows and what to try.
void print_stop(const solver::BlockCgResult& r, int window) {
  if (r.stop == solver::BlockCgStop::converged) return;
  if (r.stop == solver::BlockCgStop::iteration_limit) {
    std::printf("NOT all converged within max_iterations\n");
    return;
  }
  if (r.stop == solver::BlockCgStop::interrupted) {
    std::printf("NOT all converged: interrupted by a signal\n");
    return;
  }
  if (r.stop == solver::BlockCgStop::no_search_direction) {
    std::printf("NOT all converged: stopped, the search block lost every direction to rounding\n");
    return;
  }
  const solver::BlockCgStall& d = *r.stall;
  std::string columns;
  double lowest = INFINITY, highest = 0, floor = 0;
  bool below = false;  // a column's tolerance is under its floor
  for (std::size_t i = 0; i < d.columns.size(); ++i) {
    if (i < 8) columns += (columns.empty() ? "" : ", ") + std::to_string(d.columns[i]);
    lowest = std::min(lowest, d.lowest[i]);
    highest = std::max(highest, d.lowest[i]);
    floor = std::max(floor, d.floor[i]);
    below = below || d.lowest[i] < 10 * d.floor[i];
  }
  if (d.columns.size() > 8) columns += ", ... (" + std::to_string(d.columns.size()) + " in all)";
  const char* plural = d.columns.size() > 1 ? "s" : "";
  if (d.below_floor) {
    std::printf(
        "NOT all converged: stopped at the floor: the recurrence residuals of column%s %s fell below eps "
        "(to %s - %s), under the floor fp64 allows a linear solve, eps ||A|| ||x|| / ||b|| (up to %s here, "
        "||A|| >= %s), which the true residuals cannot follow (see the table). A tolerance below that floor "
        "cannot be met: set block_cg.rtol (or atol) above it\n",
        plural, columns.c_str(), scientific(lowest).c_str(), scientific(highest).c_str(), scientific(floor).c_str(),
        scientific(d.norm_estimate).c_str());
    return;
  }
  std::printf(
      "NOT all converged: stopped, stagnating: no column's relative residual has fallen by 10%% since "
      "iteration %d (block_cg.stagnation_window %d). Column%s %s reached relative residuals %s to %s; the "
      "floor fp64 allows them (eps ||A|| ||x|| / ||b||, ||A|| >= %s) is up to %s. %s\n",
      d.fallen_at, window, plural, columns.c_str(), scientific(lowest).c_str(), scientific(highest).c_str(),
      scientific(d.norm_estimate).c_str(), scientific(floor).c_str(),
      below ? "They are at that floor: a tolerance (block_cg.rtol, or atol) above it can be met, a lower "
              "one cannot"
            : "They are above that floor: the iteration holds them; block_cg.preconditioner (jacobi, chebyshev), more "
              "iterations (a larger block_cg.stagnation_window) or a looser tolerance may help");
}

// The result file's `rhs` attribute: where B is for whoever checks the solution.
std::string rhs_location(const cfg::BlockCgSettings& settings, bool written) {
  if (settings.rhs == cfg::RhsSource::hdf5) return settings.rhs_file + ":" + settings.rhs_dataset;
  return written ? "/B" : "not written (block_cg.rhs.output: false)";
}

// The right-hand sides B (block_cg.rhs: a file's, random, or A times a known
// random solution, kept for the errors), on this rank's rows. Collective.
template <class T>
struct CgProblem {
  dense::DenseBlock<T> B, X_known;
  std::int64_t s = 0;  // columns
  bool known = false;  // X_known holds the solution
};

template <class T>
CgProblem<T> set_up_rhs(const cfg::BlockCgSettings& settings, const solver::DistributedRows& matrix,
                        solver::LinearOperator<T>& op, const dense::Context& context, MPI_Comm comm) {
  const Space space = context.space();
  const std::int64_t m = op.local_rows();
  CgProblem<T> p;
  p.s = settings.columns;
  if (settings.rhs == cfg::RhsSource::hdf5) {
    // A complex run takes complex right-hand sides (or real ones, widened); a real run refuses complex ones.
    const io::DenseRows rows =
        read_dense_rows(settings.rhs_file, settings.rhs_dataset, matrix.numbering, comm,
                        is_complex_v<T> ? io::DenseValues::real_or_complex : io::DenseValues::real_only);
    p.s = rows.cols;
    p.B = from_dense_rows<T>(space, m, rows);
  } else if (settings.rhs == cfg::RhsSource::random) {
    p.B = random_rows<T>(context, matrix.numbering, p.s, settings.seed, comm);
  } else {
    p.known = true;
    p.X_known = random_rows<T>(context, matrix.numbering, p.s, settings.seed, comm);
    p.B = dense::DenseBlock<T>(space, m, p.s);
    op.apply(T(1), p.X_known.cview(), T(0), p.B.view());
  }
  return p;
}

// The run's header on rank 0: version, distribution and what is solved.
void print_header(const std::string& summary, const cfg::BlockCgSettings& settings, std::int64_t s, MPI_Comm comm) {
  if (!is_root(comm)) return;
  std::printf("block-cg %s\n%s", BLOCKEIGS_VERSION, summary.c_str());
  std::printf("solve      %lld right-hand side(s), rtol %g, atol %g, max %d iterations, preconditioner %s\n",
              static_cast<long long>(s), settings.cg.rtol, settings.cg.atol, settings.cg.max_iterations,
              to_string(settings.preconditioner.kind).data());
}

// The start: zeros, or a checkpoint's X and next search block (resume), whose iterations count on.
template <class T>
struct CgStart {
  dense::DenseBlock<T> X;
  int first = 0;
  std::optional<dense::DenseBlock<T>> search;
};

template <class T>
CgStart<T> start_block(const cfg::CgConfig& config, const solver::RowNumbering& numbering, Space space, std::int64_t m,
                       std::int64_t s, MPI_Comm comm) {
  CgStart<T> start{dense::DenseBlock<T>(space, m, s), 0, std::nullopt};
  dense::fill_bytes(start.X.data(), space, 0, sizeof(T) * m * s);
  if (config.resume.empty()) return start;
  // A complex run's checkpoint holds complex blocks (a real run refuses them, naming the file).
  const io::DenseValues values = is_complex_v<T> ? io::DenseValues::real_or_complex : io::DenseValues::real_only;
  const ResumePoint point = read_resume_point(config.resume, "block-cg", numbering, comm, values);
  if (point.rows.cols != s)
    solver::fail_input_everywhere("resume: ", config.resume, " holds ", point.rows.cols,
                                  " columns of X, but there are ", s, " right-hand sides");
  check_resume_budget(config.resume, point.iteration, "block_cg.max_iterations", config.solver.cg.max_iterations);
  start.first = point.iteration;
  start.X = from_dense_rows<T>(space, m, point.rows);
  const io::DenseRows p = read_dense_rows(config.resume, "/P", numbering, comm, values);
  if (p.cols > s)
    solver::fail_input_everywhere("resume: ", config.resume, ": /P has ", p.cols, " columns, more than X's ", s);
  start.search = from_dense_rows<T>(space, m, p);
  return start;
}

// The solver's options, with rank 0's monitor lines (output.monitor) numbered on from `first`.
solver::BlockCgOptions cg_options(const cfg::CgConfig& config, int first, MPI_Comm comm) {
  const cfg::BlockCgSettings& settings = config.solver;
  solver::BlockCgOptions options = settings.cg;
  options.max_iterations -= first;  // a resumed run's budget is what the first one left
  if (config.output.monitor && is_root(comm))
    options.monitor = [pacing = MonitorPacing(config.output.monitor_every),
                       first](const solver::BlockCgProgress& p) mutable {
      if (pacing.due(p.iteration, p.elapsed, p.last))
        std::printf("iter %5d/%d  converged %3d  search width %3d  max rel. residual %s  %s\n", first + p.iteration,
                    first + p.max_iterations, p.converged, p.search_width, scientific(p.worst_relative).c_str(),
                    pacing.timing().c_str());
      if (pacing.flush_due(p.elapsed, p.last)) std::fflush(stdout);
    };
  return options;
}

// Each column's error against the known solution (none without one). Collective.
template <class T>
std::vector<double> known_errors(const dense::Context& context, const CgProblem<T>& problem, dense::ConstDenseView<T> X,
                                 MPI_Comm comm) {
  std::vector<double> errors;
  if (!problem.known) return errors;
  dense::DenseBlock<T> difference(context.space(), X.rows, problem.s);
  solver::copy_block(context, X, difference.view());
  solver::axpby(context, T(-1), problem.X_known.cview(), T(1), difference.view());
  const auto diff = solver::column_norms(context, comm, difference.cview());
  const auto scale = solver::column_norms(context, comm, problem.X_known.cview());
  for (std::int64_t j = 0; j < problem.s; ++j) errors.push_back(scale[j] > 0 ? diff[j] / scale[j] : diff[j]);
  return errors;
}

// Rank 0's report after the solve: the columns' table, the time, why it stopped, and the memory line.
void print_report(const solver::BlockCgResult& result, const std::vector<double>& errors, int first,
                  const SolveCosts& costs, const CheckpointGuard& guard, int window, const std::string& memory) {
  const std::size_t s = result.rhs_norms.size();
  std::printf("\n column  iterations  converged   ||b||       rel. residual  true rel. residual%s\n",
              errors.empty() ? "" : "  rel. error");
  for (std::size_t j = 0; j < s; ++j) {
    const double b = result.rhs_norms[j] > 0 ? result.rhs_norms[j] : 1.0;
    std::printf(" %6lld  %10d  %9s   %s  %s      %s%s%s\n", static_cast<long long>(j), first + result.iterations[j],
                result.converged[j] ? "yes" : "NO", scientific(result.rhs_norms[j]).c_str(),
                scientific(result.residual_norms[j] / b).c_str(), scientific(result.true_residual_norms[j] / b).c_str(),
                errors.empty() ? "" : "          ", errors.empty() ? "" : scientific(errors[j]).c_str());
  }
  const auto& t = result.stats.timings;
  std::printf(
      "\niterations %d%s; time %.3f s: SpMM %.3f (halo %.3f), orthogonalisation %.3f, updates %.3f, "
      "%s, other %.3f\n",
      first + result.total_iterations,
      first > 0 ? (" (resumed after iteration " + std::to_string(first) + ")").c_str() : "", t.total,
      t.spmm - costs.halo, costs.halo, t.orthogonalization, t.update,
      preconditioner_time(t.preconditioner, costs.preconditioner).c_str(), t.other);
  print_stop(result, window);
  if (guard.signal() != 0) std::printf("%s\n", guard.interruption_summary().c_str());
  std::printf("%s", memory.c_str());
}

// The result file's datasets (rank 0).
void write_datasets(io::Hdf5Writer& w, const solver::BlockCgResult& result, const std::vector<double>& errors,
                    int first) {
  std::vector<std::int64_t> iterations(result.iterations.begin(), result.iterations.end());
  for (std::int64_t& i : iterations) i += first;
  std::vector<double> history;
  for (const auto& row : result.history) history.insert(history.end(), row.begin(), row.end());
  const auto s = static_cast<std::int64_t>(result.rhs_norms.size());
  w.write("/iterations", iterations);
  w.write("/converged", std::vector<std::int64_t>(result.converged.begin(), result.converged.end()));
  w.write("/rhs_norms", result.rhs_norms);
  w.write("/residual_norms", result.residual_norms);
  w.write("/true_residual_norms", result.true_residual_norms);
  if (!errors.empty()) w.write("/relative_errors", errors);
  w.write_matrix("/history/relative_residuals", static_cast<std::int64_t>(result.history.size()), s, history);
}

// The result file's root attributes after the provenance (rank 0).
void write_attributes(io::Hdf5Writer& w, const solver::BlockCgResult& result, int first, const SolveCosts& costs,
                      const CheckpointGuard& guard, const std::string& rhs) {
  w.attribute("/", "all_converged", result.all_converged());
  w.attribute("/", "stop", std::string(solver::to_string(result.stop)));
  w.attribute("/", "total_iterations", std::int64_t{first + result.total_iterations});
  w.attribute("/", "resumed_from_iteration", std::int64_t{first});
  w.attribute("/", "rhs", rhs);
  if (guard.signal() != 0) w.attribute("/", "interrupted", guard.interruption_summary());
  write_phases(w, result.stats.timings, solver::kBlockCgPhases, costs);
  w.attribute("/", "preconditioner_products", std::int64_t{costs.preconditioner.products});
}

// The file at `path` begun with /X and /B, B's rows (this rank's, in the input's order, fp64 on the host)
// written on a thread of their own while the run goes on; null where the rows move to other ranks on the way
// to the input's order (a collective exchange, which that thread cannot make). Collective.
template <class T>
std::unique_ptr<EarlyOutput> early_rhs_output(const std::string& path, dense::ConstDenseView<T> B, std::int64_t s,
                                              const solver::RowNumbering& numbering, MPI_Comm comm) {
  int identity = numbering.is_identity();
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &identity, 1, MPI_INT, MPI_MIN, comm));
  if (!identity || is_complex_v<T>) return nullptr;  // complex B: written with /X at the end, as complex128
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const solver::RowPartition& rows = numbering.original();
  std::vector<double> host;
  resize_for_parallel_fill(host, static_cast<std::size_t>(B.rows * s));
  if constexpr (!is_complex_v<T>)
    if (B.rows > 0) solver::copy_to_host_doubles(B, host.data());
  const std::int64_t n = rows.global_rows();
  return std::make_unique<EarlyOutput>(comm, path, std::vector<BlockShape>{{"/X", n, s}, {"/B", n, s}},
                                       held_block("/B", n, s, rows.begin(rank), std::move(host)));
}

template <class T>
int solve(const cfg::CgConfig& config, const solver::DistributedRows& matrix, const dense::Context& context,
          MPI_Comm comm, RunAccount& account) {
  const cfg::BlockCgSettings& settings = config.solver;
  solver::DistributedOperator<T> op = make_operator<T>(config.execution, matrix, context, comm);
  account.lap(Phase::operator_build);
  const solver::MemoryPlan memory_plan = check_memory_with_operator(config, matrix, op);
  account.lap(Phase::memory_plan);
  const CgProblem<T> problem = set_up_rhs(settings, matrix, op, context, comm);
  const std::int64_t s = problem.s;
  account.lap(Phase::start_block);
  print_header(distribution_summary(matrix, op, config.execution, s), settings, s, comm);
  account.lap(Phase::report);

  CgStart<T> start = start_block<T>(config, matrix.numbering, context.space(), op.local_rows(), s, comm);
  const int first = start.first;
  account.lap(Phase::start_block);
  // Generated right-hand sides, so that others can check the solution (block_cg.rhs.output); written
  // beside the set-up and the solve where they can be.
  const bool write_rhs = !config.output.path.empty() && settings.rhs != cfg::RhsSource::hdf5 && settings.rhs_output;
  std::unique_ptr<EarlyOutput> early =
      write_rhs ? early_rhs_output(config.output.path, problem.B.cview(), s, matrix.numbering, comm) : nullptr;
  account.lap(Phase::write);
  const std::string text = config_text(config.path, config.overrides, comm);
  CheckpointGuard guard(config.output.checkpoint, "block-cg", first, text, matrix.numbering, comm);
  account.lap(Phase::config);
  const BuiltPreconditioner<T> preconditioner =
      set_up_preconditioner(settings.preconditioner, op, matrix, SpectrumEnd::smallest, false, comm);
  account.lap(Phase::preconditioner);
  solver::BlockCgOptions options = cg_options(config, first, comm);
  CheckpointHook hook(guard);
  options.between_iterations = [&](const solver::BlockCgIterate& it) {
    return hook.step(it.iteration, [&] {
      guard.write(it.iteration,
                  {{"/X", s, it.solution, is_complex_v<T>}, {"/P", it.search_width, it.search, is_complex_v<T>}},
                  [&](io::Hdf5Writer& w) { write_provenance(w, "block-cg", context, comm); });
    });
  };
  print_setup(account, comm);
  account.lap(Phase::report);
  op.reset_timings();
  const solver::BlockCgResult result =
      solver::block_cg<T>(op, problem.B.cview(), start.X.view(), options, preconditioner.object.get(),
                          start.search ? std::optional(start.search->cview()) : std::nullopt);
  account.lap(Phase::solve);
  account.move(Phase::solve, Phase::checkpoints, hook.seconds());
  const SolveCosts costs = solve_costs(op, preconditioner);
  const std::string memory = memory_line(memory_plan, comm);
  const std::vector<double> errors = known_errors(context, problem, start.X.cview(), comm);
  if (is_root(comm)) print_report(result, errors, first, costs, guard, settings.cg.stagnation_window, memory);

  account.lap(Phase::report);
  if (!config.output.path.empty()) {
    std::vector<DistributedBlock> blocks{block_in_input_order("/X", start.X.cview(), matrix.numbering, comm)};
    if (write_rhs && !early) blocks.push_back(block_in_input_order("/B", problem.B.cview(), matrix.numbering, comm));
    write_result(
        config.output.path, blocks,
        [&](io::Hdf5Writer& w) {
          write_datasets(w, result, errors, first);
          w.write_string("/config", text);
          write_provenance(w, "block-cg", context, comm);
          write_attributes(w, result, first, costs, guard, rhs_location(settings, write_rhs));
        },
        account, comm, early.get());
  }
  return finish_run(account, guard, result.all_converged(), comm);
}

}  // namespace

int run_cg(const std::string& config_path, MPI_Comm comm, const std::vector<std::string>& overrides, bool dry_run) {
  RunAccount account;
  account.lap(Phase::startup);
  const std::vector<env::KeyOverride> environment = environment_overrides(comm);
  const cfg::CgConfig config =
      solver::collectively(comm, [&] { return cfg::read_cg_config(config_path, overrides, environment); });
  const MpiChunkLimit chunk_limit(config.execution.mpi_chunk_bytes);
  return prepare_and_solve(config, comm, dry_run, account,
                           [&](auto precision, const solver::DistributedRows& matrix, const solver::DistributedRows*,
                               const dense::Context& context) {
                             return solve<decltype(precision)>(config, matrix, context, comm, account);
                           });
}

}  // namespace blockeigs::apps
