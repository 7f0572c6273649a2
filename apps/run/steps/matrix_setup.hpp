// The steps between a config and a solve that block-eigs and block-cg share:
// the backend, the memory plan, and the matrix loaded, checked and distributed.
#pragma once

#include <mpi.h>

#include <complex>
#include <optional>
#include <string>

#include "apps/run/complex_values.hpp"
#include "apps/run/memory_report.hpp"
#include "apps/run/run_account.hpp"
#include "apps/run/steps/account_lines.hpp"
#include "apps/run/steps/result_metadata.hpp"
#include "apps/run/steps/run_paths.hpp"
#include "config/run_config.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {

// This rank's rows of the matrix (solver/operator/load_matrix.hpp), read or
// generated; a partition file that is to be written is checked first for
// being writable. Collective. `account`, where given, gets the reading's time.
solver::DistributedRows read_matrix(const io::MatrixConfig& config, MPI_Comm comm,
                                    const std::string& partition_file = "", RunAccount* account = nullptr);

// Checks the rows read_matrix gave for symmetry unless they are so by
// construction, distributes them by `partition` and orders each rank's by
// `order` (solver/operator/partition/distribute_rows.hpp). With a
// `partition_file` (execution.partition_file, partition_file.hpp): the
// distribution saved there where the file exists, else computed and saved
// there. Collective. `account`, where given, gets the time of each step
// (symmetry check, partition, moving rows, local order); `context`, where
// given, lends its device to the symmetry check.
void check_and_distribute(solver::DistributedRows& matrix, PartitionMethod partition, LocalOrder order, MPI_Comm comm,
                          const std::string& partition_file = "", RunAccount* account = nullptr,
                          const dense::Context* context = nullptr);

// read_matrix, then check_and_distribute.
solver::DistributedRows load_symmetric_matrix(const io::MatrixConfig& config, PartitionMethod partition,
                                              LocalOrder order, MPI_Comm comm, const std::string& partition_file = "",
                                              RunAccount* account = nullptr, const dense::Context* context = nullptr);

// --dry-run's report and the set-up's account, in place of the solve.
template <class Config>
int dry_run_report(const Config& config, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
                   const dense::Context& context, MPI_Comm comm, RunAccount& account) {
  const int code = print_dry_run(config, matrix, b, context, comm);
  account.lap(Phase::memory_plan);
  print_setup(account, comm);
  print_account_end(account, comm);
  return code;
}

// The steps between a config and a solve, the same for both apps: no output
// over an input, output paths checked, backend chosen, the memory plan checked from the matrices' sizes,
// matrix loaded, checked and distributed, and B of A x = lambda B x (block-eigs'
// matrix_b) on its rows; then (a dry run prints the plan, the set-up's account
// and stops) solve(T{}, matrix, b, context) with T the config's SpMM precision
// and b null without a B; complex values take
// std::complex<T> and the checks of complex_values.hpp. The GPU starts (StartingContext) while the rows are
// read: the host's memory is checked before, the device's after. Each step's
// time goes to `account`.
template <class Config, class Solve>
int prepare_and_solve(const Config& config, MPI_Comm comm, bool dry_run, RunAccount& account, Solve&& solve) {
  check_inputs_not_outputs(run_paths(config), comm);  // before anything is written
  check_output_path(config.output.path, comm);
  check_output_path(config.output.checkpoint.path, comm, "output.checkpoint.path");  // now, not an hour in
  account.lap(Phase::config);
  solver::StartingContext starting(config.execution.backend, comm);
  account.lap(Phase::backend);
  check_memory_from_sizes(config, starting.space(), starting.device(), comm, dry_run, solver::MemorySides::host);
  account.lap(Phase::memory_plan);
  solver::DistributedRows matrix = read_matrix(config.matrix, comm, config.execution.partition_file, &account);
  const dense::Context& context = starting.ready();
  dense::reset_memory_peaks();  // the device's use from here on is the run's
  account.lap(Phase::backend);  // the wait for the context, where the reading was shorter
  account.context_beside_reading(starting.seconds());
  if (context.space() == Space::device) {
    check_memory_from_sizes(config, context.space(), context.device(), comm, dry_run, solver::MemorySides::device);
    account.lap(Phase::memory_plan);
  }
  if (matrix.complex) {
    if constexpr (requires { config.matrix_b; })
      check_complex_eigs(config, matrix);
    else
      check_complex_cg(config, matrix);
    check_complex_rows(matrix, comm, &context);
    account.lap(Phase::symmetry);
  }
  check_and_distribute(matrix, config.execution.partition, config.execution.local_order, comm,
                       config.execution.partition_file, &account, &context);
  // B on A's rows (a real B beside a complex A held as complex).
  std::optional<solver::DistributedRows> b;
  if constexpr (requires { config.matrix_b; }) {
    if (config.matrix_b) b = solver::load_matrix_b(*config.matrix_b, matrix, comm, &context);
    account.lap(Phase::matrix_b);
  }
  const solver::DistributedRows* matrix_b = b ? &*b : nullptr;
  if (dry_run) return dry_run_report(config, matrix, matrix_b, context, comm, account);
  const bool single = config.execution.spmm_precision == Precision::fp32;
  if (matrix.complex)
    return single ? solve(std::complex<float>{}, matrix, matrix_b, context)
                  : solve(std::complex<double>{}, matrix, matrix_b, context);
  return single ? solve(float{}, matrix, matrix_b, context) : solve(double{}, matrix, matrix_b, context);
}

}  // namespace blockeigs::apps
