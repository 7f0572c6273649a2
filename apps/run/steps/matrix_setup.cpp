#include "apps/run/steps/matrix_setup.hpp"

#include "apps/run/partition_file.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs::apps {

solver::DistributedRows read_matrix(const io::MatrixConfig& config, MPI_Comm comm, const std::string& partition_file,
                                    RunAccount* account) {
  // A file to be written must be writable before the partitioner's time is spent.
  if (!partition_file.empty() && !partition_file_exists(partition_file, comm))
    check_output_path(partition_file, comm, "execution.partition_file");
  if (account) account->lap(Phase::config);
  // Complex values go on to the apps, which take them (block-eigs) or refuse them with their own message.
  solver::DistributedRows matrix = solver::load_distributed_rows(config, comm, solver::Values::real_or_complex);
  if (account) account->lap(Phase::read);
  return matrix;
}

void check_and_distribute(solver::DistributedRows& matrix, PartitionMethod partition, LocalOrder order, MPI_Comm comm,
                          const std::string& partition_file, RunAccount* account, const dense::Context* context) {
  // Complex rows were checked Hermitian as read (check_complex_rows, complex_values.hpp); real ones are checked here.
  const bool check = !matrix.symmetric_by_construction && !matrix.complex;
  auto lap = [&](Phase phase) {
    if (account) account->lap(phase);
  };
  if (!partition_file.empty() && partition_file_exists(partition_file, comm)) {
    read_partition_file(matrix, partition_file, comm);
    lap(Phase::partition);  // reading the file; moving the rows by it is moving rows
    if (account) account->move(Phase::partition, Phase::move_rows, matrix.partitioning.seconds);
    // After the move, where a row's partners are mostly on its own rank.
    if (check)
      solver::check_symmetric(comm, matrix.rows, matrix.partition, matrix.description, "A", &matrix.numbering, context);
    lap(Phase::symmetry);
    return;
  }
  // The partitioner needs a symmetric pattern: checked first.
  if (check) solver::check_symmetric(comm, matrix.rows, matrix.partition, matrix.description, "A", nullptr, context);
  lap(Phase::symmetry);
  solver::distribute_rows(matrix, partition, comm, order);
  lap(Phase::partition);
  if (account) {
    const solver::PartitionReport& p = matrix.partitioning;
    if (p.used == PartitionMethod::graph)
      account->move(Phase::partition, Phase::move_rows, p.seconds - p.partitioner_seconds);
    account->move(Phase::partition, Phase::local_order, matrix.local_order.seconds);
  }
  if (!partition_file.empty()) write_partition_file(matrix, partition_file, comm);
  lap(Phase::partition);
}

solver::DistributedRows load_symmetric_matrix(const io::MatrixConfig& config, PartitionMethod partition,
                                              LocalOrder order, MPI_Comm comm, const std::string& partition_file,
                                              RunAccount* account, const dense::Context* context) {
  solver::DistributedRows matrix = read_matrix(config, comm, partition_file, account);
  check_and_distribute(matrix, partition, order, comm, partition_file, account, context);
  return matrix;
}

}  // namespace blockeigs::apps
