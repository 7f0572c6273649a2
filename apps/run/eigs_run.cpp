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
#include "apps/run/eigs_report.hpp"
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
#include "apps/run/window/window_run.hpp"
#include "core/checks.hpp"
#include "core/enums.hpp"
#include "config/run_config.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"

namespace blockeigs::apps {
namespace {

// The first `cols` columns of this rank's rows.
io::DenseRows leading_columns(const io::DenseRows& rows, std::int64_t cols) {
  io::DenseRows out = rows;
  out.cols = cols;
  const std::int64_t from = rows.doubles_per_row(), to = out.doubles_per_row();
  const std::int64_t count = from > 0 ? static_cast<std::int64_t>(rows.values.size()) / from : 0;
  out.values.clear();
  for (std::int64_t i = 0; i < count; ++i)
    out.values.insert(out.values.end(), rows.values.begin() + i * from, rows.values.begin() + i * from + to);
  return out;
}

// LOBPCG's start block on this rank (none: random columns) and the iteration
// it was taken after (0 but for a checkpoint).
template <class T>
struct StartBlock {
  std::optional<dense::DenseBlock<T>> block;
  int first_iteration = 0;
};

template <class T>
StartBlock<T> start_block_real(const cfg::EigsConfig& config, const solver::LinearOperator<T>& op,
                               const solver::RowNumbering& numbering, int block, const EigsProblem<T>& problem,
                               MPI_Comm comm);

// The start's columns on this rank: a checkpoint's leading `block` (resume; `first_iteration` its iteration),
// or a start file's (at most `block`); complex ones too for a complex T (a real one refuses them by name).
template <class T>
io::DenseRows start_values(const cfg::EigsConfig& config, const solver::RowNumbering& numbering, int block,
                           const EigsProblem<T>& problem, MPI_Comm comm, int& first_iteration) {
  const cfg::EigensolverSettings& settings = config.eigensolver;
  const io::DenseValues kinds = is_complex_v<T> ? io::DenseValues::real_or_complex : io::DenseValues::real_only;
  io::DenseRows values;
  if (!config.resume.empty()) {
    ResumePoint point = read_resume_point(config.resume, "block-eigs", numbering, comm, kinds);
    check_resume_problem(config.resume, problem.generalized(), problem.b_source, comm);
    check_resume_budget(config.resume, point.iteration, "eigensolver.max_iterations", settings.lobpcg.max_iterations);
    first_iteration = point.iteration;
    values = std::move(point.rows);
    if (values.cols > block) values = leading_columns(values, block);  // a smaller block this time
  } else if (!settings.start_file.empty()) {
    // Read in the input's numbering; the rows then move to their ranks.
    values = read_dense_rows(settings.start_file, settings.start_dataset, numbering, comm, kinds);
    if (values.cols > block)
      solver::fail_input_everywhere(settings.start_file, ": ", settings.start_dataset, " has ", values.cols,
                                    " columns, more than the block size ", block);
  }
  return values;
}

// A complex run's start: start_values' columns, or none; the filter draws the missing columns itself. Where
// the operator's rows are not numbered as the input's (a graph partition, a band order) and no column is
// given, the random block is drawn here for the input's rows, as start_block_real does, so that the start
// does not depend on the partition.
template <class T>
StartBlock<T> start_block_complex(const cfg::EigsConfig& config, const solver::LinearOperator<T>& op,
                                  const solver::RowNumbering& numbering, int block, const EigsProblem<T>& problem,
                                  MPI_Comm comm) {
  StartBlock<T> start;
  const io::DenseRows values = start_values(config, numbering, block, problem, comm, start.first_iteration);
  if (values.cols > 0)
    start.block = from_dense_rows<T>(op.context().space(), op.local_rows(), values);
  else if (!numbering.is_identity())
    start.block = random_rows<T>(op.context(), numbering, block, config.eigensolver.lobpcg.seed, comm, 0);
  return start;
}

// From `resume` (a checkpoint: its first `block` columns, the wanted pairs
// first), or eigensolver.start (at most `block` columns; for complex values start_block_complex). Random columns (all
// of them, or those a start file lacks) are LOBPCG's own (fill_random with eigensolver.seed) for the input's rows, so
// that the start does not depend on the partition or the order of the rows. Collective.
template <class T>
StartBlock<T> start_block(const cfg::EigsConfig& config, const solver::LinearOperator<T>& op,
                          const solver::RowNumbering& numbering, int block, const EigsProblem<T>& problem,
                          MPI_Comm comm) {
  if constexpr (is_complex_v<T>) {
    return start_block_complex(config, op, numbering, block, problem, comm);
  } else {
    return start_block_real(config, op, numbering, block, problem, comm);
  }
}

template <class T>
StartBlock<T> start_block_real(const cfg::EigsConfig& config, const solver::LinearOperator<T>& op,
                               const solver::RowNumbering& numbering, int block, const EigsProblem<T>& problem,
                               MPI_Comm comm) {
  const cfg::EigensolverSettings& settings = config.eigensolver;
  const std::int64_t rows = op.local_rows();
  StartBlock<T> start;
  const io::DenseRows values = start_values(config, numbering, block, problem, comm, start.first_iteration);
  // Where the operator numbers rows as the input does, LOBPCG's own random columns are these.
  if (numbering.is_identity() || values.cols == block) {
    if (values.cols > 0) start.block = from_host_doubles<T>(op.context().space(), rows, values.cols, values.values);
    return start;
  }
  dense::DenseBlock<T> random =
      random_rows<T>(op.context(), numbering, block - values.cols, settings.lobpcg.seed, comm, values.cols);
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

// LOBPCG's options as the config read them, checked against the matrix.
solver::LobpcgOptions lobpcg_options(const cfg::EigensolverSettings& c, std::int64_t rows) {
  solver::LobpcgOptions o = c.lobpcg;
  if (o.k >= rows)
    solver::fail_input_everywhere("eigensolver.k = ", o.k, " but the matrix has ", rows,
                                  " rows: k must be smaller than the number of rows");
  return o;
}

// The run's header on rank 0: version, distribution, the problem and what is solved.
template <class T>
void print_header(const std::string& summary, const EigsProblem<T>& problem, const solver::LobpcgOptions& options,
                  int block, PreconditionerKind preconditioner, const solver::MethodChoice& method, MPI_Comm comm) {
  if (!is_root(comm)) return;
  std::printf("block-eigs %s\n%s%s", BLOCKEIGS_VERSION, summary.c_str(), problem_summary(problem).c_str());
  const bool filter = method.method == solver::EigenMethod::chebyshev_filter;
  std::printf(
      "solve      %s%s, %d %s eigenpairs, block %d, %s test, tolerance %g, max %d iterations, "
      "preconditioner %s\n",
      filter ? "Chebyshev-filtered subspace iteration" : "LOBPCG",
      problem.generalized() ? (" (" + equation(true) + ")").c_str() : "", options.k, to_string(options.which).data(),
      block, to_string(options.test).data(), options.tolerance, options.max_iterations,
      to_string(preconditioner).data());
  std::printf("method     %s (%s)\n", to_string(method.method).data(), method.reason.c_str());
}

// Rank 0 prints the monitor lines (output.monitor, every output.monitor_every
// iterations, numbered on from `first`) and, monitor or not, the solver's one
// warning about the floor.
template <class T>
void set_monitor(solver::LobpcgOptions& options, const cfg::OutputConfig& output, const EigsProblem<T>& problem,
                 int first, MPI_Comm comm) {
  if (!is_root(comm)) return;
  if (output.monitor)
    std::printf(
        "monitor    %s: each line the pairs converged, the first unconverged pair's Ritz value (its estimate "
        "of the eigenvalue) and residual ||A x - \u03bb %sx||, the time so far and per iteration\n",
        equation(problem.generalized()).c_str(), problem.generalized() ? "B " : "");
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
  if (result.stats.filter_products > 0) {
    w.attribute("/", "filter_products", result.stats.filter_products);
    w.attribute("/", "filter_products_fp32", result.stats.single_filter_products);
  }
  write_phases(w, result.stats.timings, solver::kLobpcgPhases, costs);
  w.attribute("/", "preconditioner_products", std::int64_t{costs.preconditioner.products});
}

template <class T>
solver::LobpcgResult<T> lobpcg_on(solver::DistributedOperator<T>& op, const solver::LobpcgOptions& options,
                                  const BuiltPreconditioner<T>& preconditioner,
                                  std::optional<dense::ConstDenseView<T>> start_view, const EigsProblem<T>& problem,
                                  std::optional<dense::ConstDenseView<T>> constraints_view);

// The chosen eigensolver on the problem, from the start block (or random columns).
template <class T>
solver::LobpcgResult<T> run_method(const solver::MethodChoice& method, solver::DistributedOperator<T>& op,
                                   const solver::LobpcgOptions& options, const solver::FilterTuning& filter,
                                   const BuiltPreconditioner<T>& preconditioner, const StartBlock<T>& start,
                                   const EigsProblem<T>& problem) {
  std::optional<dense::ConstDenseView<T>> start_view, constraints_view;
  if (start.block) start_view = start.block->cview();
  if (problem.constraints) constraints_view = problem.constraints->cview();
  if (method.method == solver::EigenMethod::chebyshev_filter)
    return solver::chebyshev_filter_eigs<T>(op, options, filter, start_view);
  return lobpcg_on<T>(op, options, preconditioner, start_view, problem, constraints_view);
}

template <class T>
solver::LobpcgResult<T> lobpcg_on(solver::DistributedOperator<T>& op, const solver::LobpcgOptions& options,
                                  const BuiltPreconditioner<T>& preconditioner,
                                  std::optional<dense::ConstDenseView<T>> start_view, const EigsProblem<T>& problem,
                                  std::optional<dense::ConstDenseView<T>> constraints_view) {
  try {
    return solver::lobpcg<T>(op, options, preconditioner.object.get(), start_view, problem.b.get(), constraints_view);
  } catch (const solver::BNotPositiveDefinite& e) {
    throw solver::AgreedError("matrix_b: " + problem.b_source + ": " + e.what(), true);
  }
}

template <class T>
int solve(const cfg::EigsConfig& config, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
          const dense::Context& context, MPI_Comm comm, RunAccount& account) {
  const cfg::EigensolverSettings& settings = config.eigensolver;
  solver::DistributedOperator<T> op = make_operator<T>(config.execution, matrix, context, comm);
  account.lap(Phase::operator_build);
  // B (matrix_b) on A's rows and the constraint block Y (eigensolver.constraints), where given.
  const EigsProblem<T> problem = set_up_problem<T>(config, matrix, b, context, comm);
  account.lap(Phase::matrix_b);
  const solver::MemoryPlan memory_plan = check_memory_with_operator(config, matrix, op, b, problem.b.get());
  account.lap(Phase::memory_plan);
  const solver::MethodChoice method = eigen_method(config, is_complex_v<T>);
  solver::LobpcgOptions options = lobpcg_options(settings, op.global_rows());
  const int block = eigen_block_size(config, method, op.global_rows());
  const solver::ResolvedPreconditioner chosen = solver::resolve_preconditioner(
      settings.preconditioner, options.which, method.method == solver::EigenMethod::chebyshev_filter,
      options.search_precision == SearchPrecision::fp32,
      settings.preconditioner.kind == PreconditionerKind::automatic ? solver::min_abs_diagonal(op) : 0.0);
  print_header(distribution_summary(matrix, op, config.execution, block), problem, options, block, chosen.options.kind,
               method, comm);
  if (is_root(comm) && !chosen.reason.empty()) std::printf("precond    %s\n", chosen.reason.c_str());
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
      guard.write(it.iteration, {{"/X", it.block_size, it.block, is_complex_v<T>}}, [&](io::Hdf5Writer& w) {
        w.write("/ritz_values", std::vector<double>(it.values.begin(), it.values.end()));
        write_provenance(w, "block-eigs", context, comm);
        write_problem_attributes(w, problem, matrix.description);
      });
    });
  };
  account.lap(Phase::config);
  const BuiltPreconditioner<T> preconditioner =
      set_up_preconditioner(chosen.options, op, matrix, options.which, true, comm);
  if (is_root(comm)) note_preconditioner_choice(chosen.options.kind, options.which);
  account.lap(Phase::preconditioner);
  print_setup(account, comm);
  set_monitor(options, config.output, problem, first, comm);
  op.reset_timings();
  const solver::LobpcgResult<T> result =
      run_method(method, op, options, settings.filter, preconditioner, start, problem);
  account.lap(Phase::solve);
  account.move(Phase::solve, Phase::checkpoints, hook.seconds());
  const SolveCosts costs = solve_costs(op, preconditioner);
  const std::string memory = memory_line(memory_plan, comm);
  if (is_root(comm))
    print_report(result, options, chosen.options.kind != PreconditionerKind::none, first, costs, guard, memory);

  account.lap(Phase::report);
  if (!config.output.path.empty())
    write_result(
        config.output.path,
        config.output.eigenvectors ? std::vector<DistributedBlock>{block_in_input_order(
                                         "/eigenvectors", result.eigenvectors.cview(), matrix.numbering, comm)}
                                   : std::vector<DistributedBlock>{},
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

int run_eigs(const std::string& config_path, MPI_Comm comm, const std::vector<std::string>& overrides, bool dry_run) {
  RunAccount account;
  account.lap(Phase::startup);
  const std::vector<env::KeyOverride> environment = environment_overrides(comm);
  const cfg::EigsConfig config =
      solver::collectively(comm, [&] { return cfg::read_eigs_config(config_path, overrides, environment); });
  const MpiChunkLimit chunk_limit(config.execution.mpi_chunk_bytes);
  return prepare_and_solve(config, comm, dry_run, account,
                           [&](auto precision, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
                               const dense::Context& context) {
                             using T = decltype(precision);
                             if (config.eigensolver.interval)
                               return solve_window<T>(config, matrix, context, comm, account);
                             return solve<T>(config, matrix, b, context, comm, account);
                           });
}

}  // namespace blockeigs::apps
