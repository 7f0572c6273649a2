// Steps block-eigs and block-cg share: reading the config's text for the
// result file, loading and checking the matrix, and moving blocks between
// host vectors and the operator's memory.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "apps/run/memory_report.hpp"
#include "apps/run/output/distributed_output.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "apps/run/run_account.hpp"
#include "io/config.hpp"
#include "io/hdf5_dense.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {

// The config file's text (stored in result files), read on rank 0, with
// the command line's overrides after it as comments ("# --set eigensolver.k=4").
std::string config_text(const std::string& path, const std::vector<std::string>& overrides, MPI_Comm comm);

// Provenance attributes of a result file's root (rank 0 writes them): app,
// version, commit, backend ("cpu" or "cuda"), ranks (int64) and date (UTC,
// ISO 8601, when the file was written).
void write_provenance(io::Hdf5Writer& writer, const std::string& app, const spmm::Context& context, MPI_Comm comm);

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

// The rows of a dense HDF5 block (start block, right-hand sides) that this
// rank holds in the operator's numbering: each rank reads its range of the
// input's numbering, then the rows move to their ranks. Collective; errors
// agreed.
io::DenseRows read_dense_rows(const std::string& file, const std::string& dataset,
                              const solver::RowNumbering& numbering, MPI_Comm comm);

// Refuses, on every rank, an output path that cannot be written (empty: none).
void check_output_path(const std::string& path, MPI_Comm comm, const std::string& key = "output.path");

// Rank 0 prints the account's `setup` line: where the time until the solve went. Collective.
void print_setup(const RunAccount& account, MPI_Comm comm);
// The last lap (the report) and, on rank 0, the `output` and `wall` lines;
// returns the agreed times. Collective.
RunTimes print_account_end(RunAccount& account, MPI_Comm comm);
// A result file's `write_last` (distributed_output.hpp): the writing so far
// as a lap, of which `copying` (this rank's rows copied for the write) is
// gathering, then the agreed account as attributes on rank 0. Collective.
void write_account(RunAccount& account, io::Hdf5Writer* writer, double copying, MPI_Comm comm);

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

// solver::fill_random's columns [first_column, first_column + cols) for the
// input's rows, as this rank's rows in the operator's numbering: the same
// random block (start block, right-hand sides) whatever the partition and the
// order of the rows. Collective.
template <class T>
spmm::DenseBlock<T> random_rows(const spmm::Context& context, const solver::RowNumbering& numbering,
                                std::int64_t cols, std::uint64_t seed, MPI_Comm comm, std::int64_t first_column = 0);

// A block in `space` filled from host doubles (rows x cols, row-major).
template <class T>
spmm::DenseBlock<T> from_host_doubles(Space space, std::int64_t rows, std::int64_t cols,
                                      const std::vector<double>& values);

// "1.234e-05" style, for tables.
std::string scientific(double value, int digits = 3);

}  // namespace blockeigs::apps
