// The parts of a run that block-eigs and block-cg share around their solvers:
// the operator, the resume check, the checkpoint hook, the preconditioner's
// line, the costs after the solve, the result file and the exit code.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/environment.hpp"
#include "apps/run/checkpoint.hpp"
#include "apps/run/output/distributed_output.hpp"
#include "apps/run/preconditioner_setup.hpp"
#include "apps/run/run_account.hpp"
#include "config/run_config.hpp"
#include "solver/operator/distributed_operator.hpp"

namespace blockeigs::apps {

// Whether this is rank 0 of `comm`.
bool is_root(MPI_Comm comm);

// The operator on A's rows (complex_rows for complex T), with the execution section's SpMM and halo settings.
// Collective.
template <class T>
solver::DistributedOperator<T> make_operator(const cfg::ExecutionConfig& execution,
                                             const solver::DistributedRows& matrix, const dense::Context& context,
                                             MPI_Comm comm) {
  if constexpr (is_complex_v<T>)
    return solver::DistributedOperator<T>(comm, context, matrix.complex_rows, matrix.partition,
                                          execution.spmm_algorithm, execution.halo);
  else
    return solver::DistributedOperator<T>(comm, context, matrix.rows, matrix.partition, execution.spmm_algorithm,
                                          execution.halo);
}

// Refuses, on every rank, a checkpoint taken at or after the run's last
// iteration (`key`: the solver's max_iterations key).
void check_resume_budget(const std::string& resume, int iteration, const char* key, int max_iterations);

// The solvers' hook between iterations: polls the guard, calls write() when a
// checkpoint is due and keeps the time spent writing apart from the solve's;
// returns whether to stop.
class CheckpointHook {
 public:
  explicit CheckpointHook(CheckpointGuard& guard) : guard_(guard) {}
  template <class Write>
  bool step(int iteration, Write&& write) {
    const CheckpointStep step = guard_.poll(iteration);
    if (step.write) {
      const double begin = MPI_Wtime();
      write();
      seconds_ += MPI_Wtime() - begin;
    }
    return step.stop;
  }
  double seconds() const { return seconds_; }

 private:
  CheckpointGuard& guard_;
  double seconds_ = 0;
};

// build_preconditioner, and its `precond` line on rank 0. Collective.
template <class T>
BuiltPreconditioner<T> set_up_preconditioner(const solver::PreconditionerOptions& config, solver::LinearOperator<T>& op,
                                             const solver::DistributedRows& matrix, SpectrumEnd end, bool eigensolver,
                                             MPI_Comm comm) {
  BuiltPreconditioner<T> built = build_preconditioner(config, op, matrix, end, eigensolver);
  if (is_root(comm) && built.object) std::printf("precond    %s\n", built.description.c_str());
  return built;
}

// What the solve cost beside the solver's timings: the preconditioner's
// products (counted apart from the solver's own) and the halo's time outside them.
struct SolveCosts {
  solver::PreconditionerWork preconditioner;
  double halo = 0;
};

template <class T>
SolveCosts solve_costs(const solver::DistributedOperator<T>& op, const BuiltPreconditioner<T>& built) {
  SolveCosts costs;
  if (built.object) costs.preconditioner = built.object->work();
  costs.halo = op.halo_seconds() - costs.preconditioner.halo;
  return costs;
}

// A solver's phase table (kLobpcgPhases, kBlockCgPhases) as the result's time_<name> attributes, time_spmm
// without the halo, which is time_halo, and the preconditioner's products' share (rank 0).
template <class Timings, std::size_t N>
void write_phases(io::Hdf5Writer& w, const Timings& t,
                  const std::array<std::pair<std::string_view, double Timings::*>, N>& phases,
                  const SolveCosts& costs) {
  for (const auto& [name, member] : phases)
    w.attribute("/", "time_" + std::string(name), t.*member - (name == "spmm" ? costs.halo : 0.0));
  w.attribute("/", "time_halo", costs.halo);
  w.attribute("/", "time_preconditioner_spmm", costs.preconditioner.spmm);
}

// The result file at `path`: `datasets` written by rank 0, `blocks` in the
// input's row order, the account last; rank 0 prints the `wrote` line. The
// laps before and after go to gathering and writing. With `early`, the file it began (its block written
// beside the solve). Collective.
void write_result(const std::string& path, const std::vector<DistributedBlock>& blocks,
                  const std::function<void(io::Hdf5Writer&)>& datasets, RunAccount& account, MPI_Comm comm,
                  EarlyOutput* early = nullptr);

// The run's end: the account's last lines (account_lines.hpp), then the exit
// code: interrupted by a signal, converged, or not. Collective.
int finish_run(RunAccount& account, const CheckpointGuard& guard, bool converged, MPI_Comm comm);

}  // namespace blockeigs::apps
