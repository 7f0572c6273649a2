// A saved distribution (execution.partition_file) at np 1-4: the numbering
// a graph partition and band order made, applied to the matrix as loaded,
// gives the same rows, partition and numbering without the partitioner;
// through the file too; and a numbering that is not a permutation of the
// rows, or a file that is not a partition file, is refused on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "apps/run/partition_file.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"

namespace blockeigs {
namespace {

using solver::DistributedRows;
using solver::RowPartition;

// A randomly numbered 10^3 grid as loaded (contiguous ranges of the input).
DistributedRows loaded() {
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator = {io::GeneratorKind::laplacian_3d, 10, 10, 10, 7};
  config.generator.renumber = true;
  config.generator.renumber_seed = 4;
  return solver::load_distributed_rows(config, MPI_COMM_WORLD);
}

// The same, distributed by the graph partition where this build can, and ordered by band.
DistributedRows partitioned() {
  DistributedRows m = loaded();
  const bool scotch = solver::graph_partitioner_available();
  solver::distribute_rows(m, scotch ? PartitionMethod::graph : PartitionMethod::contiguous, MPI_COMM_WORLD,
                          LocalOrder::band);
  return m;
}

// Each of this rank's input rows' row in m's numbering.
std::vector<std::int64_t> row_index(const DistributedRows& m) {
  std::vector<std::int64_t> index = m.numbering.current_of_original();
  if (index.empty()) {
    index.resize(static_cast<std::size_t>(m.numbering.original().rows(test::mpi_rank())));
    std::iota(index.begin(), index.end(), m.numbering.original().begin(test::mpi_rank()));
  }
  return index;
}

void expect_same_distribution(const DistributedRows& a, const DistributedRows& b) {
  EXPECT_EQ(a.partition.first_rows(), b.partition.first_rows());
  EXPECT_EQ(a.rows.first_row, b.rows.first_row);
  EXPECT_EQ(a.rows.row_offsets, b.rows.row_offsets);
  EXPECT_EQ(a.rows.col_indices, b.rows.col_indices);
  EXPECT_EQ(a.rows.values, b.rows.values);
  for (std::int64_t i = 0; i < a.rows.local_rows(); ++i)
    ASSERT_EQ(a.numbering.original_row(i), b.numbering.original_row(i)) << "local row " << i;
}

// The message of the error every rank throws (empty where none was thrown).
template <class Fn>
std::string refusal(Fn fn) {
  try {
    fn();
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error()) << e.what();
    return e.what();
  }
  return "";
}

TEST(SavedNumbering, ReproducesTheDistributionWithoutThePartitioner) {
  const DistributedRows reference = partitioned();
  DistributedRows m = loaded();
  solver::distribute_by_numbering(m, reference.partition, row_index(reference), "the saved numbering", MPI_COMM_WORLD);
  expect_same_distribution(m, reference);
  EXPECT_EQ(m.partitioning.source, "the saved numbering");
}

TEST(SavedNumbering, RoundTripThroughTheFile) {
  const std::string path = (test::shared_folder("saved_numbering") / "parts.h5").string();
  DistributedRows reference = partitioned();
  apps::write_partition_file(reference, path, MPI_COMM_WORLD);
  EXPECT_EQ(reference.partitioning.saved_to, path);
  EXPECT_TRUE(apps::partition_file_exists(path, MPI_COMM_WORLD));
  DistributedRows m = loaded();
  apps::read_partition_file(m, path, MPI_COMM_WORLD);
  expect_same_distribution(m, reference);
}

TEST(SavedNumbering, RefusesWhatIsNotAPermutation) {
  const DistributedRows reference = partitioned();
  const int rank = test::mpi_rank(), ranks = test::mpi_size();
  const std::int64_t n = reference.partition.global_rows();
  // Rank 0's first two rows both numbered as its first (the matrix has 1000 rows; rank 0 has at least two).
  std::vector<std::int64_t> twice = row_index(reference);
  if (rank == 0) twice[1] = twice[0];
  DistributedRows m = loaded();
  const std::string duplicate =
      refusal([&] { solver::distribute_by_numbering(m, reference.partition, twice, "dup.h5", MPI_COMM_WORLD); });
  EXPECT_NE(duplicate.find("dup.h5: "), std::string::npos) << duplicate;
  EXPECT_TRUE(duplicate.find("not a permutation") != std::string::npos ||
              duplicate.find("rows are numbered into it") != std::string::npos)
      << duplicate;

  std::vector<std::int64_t> outside = row_index(reference);
  if (rank == ranks - 1 && !outside.empty()) outside.back() = n;
  DistributedRows m2 = loaded();
  const std::string range =
      refusal([&] { solver::distribute_by_numbering(m2, reference.partition, outside, "far.h5", MPI_COMM_WORLD); });
  EXPECT_NE(range.find("far.h5: row index 1000 is outside [0, 1000)"), std::string::npos) << range;

  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 2, n);
  first[0] = 0;
  DistributedRows m3 = loaded();
  const std::string shape = refusal([&] {
    solver::distribute_by_numbering(m3, RowPartition(first), row_index(reference), "shape.h5", MPI_COMM_WORLD);
  });
  EXPECT_NE(shape.find("shape.h5: a numbering of 1000 rows over " + std::to_string(ranks + 1) + " ranks"),
            std::string::npos)
      << shape;
}

TEST(SavedNumbering, RefusesAFileThatIsNotAPartitionFile) {
  const std::filesystem::path path = test::shared_folder("saved_numbering") / "other.h5";
  if (test::mpi_rank() == 0) {
    io::Hdf5Writer w(path.string(), true);
    w.write("/eigenvalues", std::vector<double>{1.0, 2.0});
    w.close();
    io::commit_output(path.string());
  }
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  DistributedRows m = loaded();
  const std::string message = refusal([&] { apps::read_partition_file(m, path.string(), MPI_COMM_WORLD); });
  EXPECT_NE(message.find("other.h5: not a partition file"), std::string::npos) << message;
}

}  // namespace
}  // namespace blockeigs
