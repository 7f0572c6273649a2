// The steps between a config and a solve that block-eigs and block-cg share:
// the backend, the memory plan, and the matrix loaded, checked and distributed.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "apps/run/memory_report.hpp"
#include "apps/run/run_account.hpp"
#include "apps/run/steps/account_lines.hpp"
#include "apps/run/steps/result_metadata.hpp"
#include "io/config.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {

// Loads the distributed matrix, checks that it is symmetric unless it is so
// by construction, distributes its rows by `partition` and orders each
// rank's by `order` (solver/operator/partition/distribute_rows.hpp). With a
// `partition_file` (execution.partition_file, partition_file.hpp): the
// distribution saved there where the file exists, else computed and saved
// there. Collective. `account`, where given, gets the time of each step
// (reading, symmetry check, partition, moving rows, local order); `context`,
// where given, lends its device to the symmetry check.
solver::DistributedRows load_symmetric_matrix(const io::MatrixConfig& config, PartitionMethod partition,
                                              LocalOrder order, MPI_Comm comm, const std::string& partition_file = "",
                                              RunAccount* account = nullptr, const spmm::Context* context = nullptr);

// The steps between a config and a solve, the same for both apps: output path
// checked, backend chosen, the memory plan checked from the matrices' sizes,
// matrix loaded, checked and distributed, and B of A x = lambda B x (block-eigs'
// matrix_b) on its rows; then (a dry run prints the plan, the set-up's account
// and stops) solve(T{}, matrix, b, context) with T the config's SpMM precision
// and b null without a B. Each step's time goes to `account`.
template <class Config, class Solve>
int prepare_and_solve(const Config& config, MPI_Comm comm, bool dry_run, RunAccount& account, Solve&& solve) {
  check_output_path(config.output.path, comm);
  check_output_path(config.output.checkpoint.path, comm, "output.checkpoint.path");  // now, not an hour in
  account.lap(Phase::config);
  const spmm::Context context = solver::make_context(config.execution.backend, comm);
  account.lap(Phase::backend);
  spmm::reset_memory_peaks();
  check_memory_before_loading(config, context, comm, dry_run);
  account.lap(Phase::memory_plan);
  const solver::DistributedRows matrix =
      load_symmetric_matrix(config.matrix, config.execution.partition, config.execution.local_order, comm,
                            config.execution.partition_file, &account, &context);
  std::optional<solver::DistributedRows> b;
  if constexpr (requires { config.matrix_b; }) {
    if (config.matrix_b) b = solver::load_matrix_b(*config.matrix_b, matrix, comm, &context);
    account.lap(Phase::matrix_b);
  }
  const solver::DistributedRows* matrix_b = b ? &*b : nullptr;
  if (dry_run) {
    const int code = print_dry_run(config, matrix, matrix_b, context, comm);
    account.lap(Phase::memory_plan);
    print_setup(account, comm);
    print_account_end(account, comm);
    return code;
  }
  if (config.execution.spmm_precision == Precision::fp32) return solve(float{}, matrix, matrix_b, context);
  return solve(double{}, matrix, matrix_b, context);
}

}  // namespace blockeigs::apps
