// B of A x = lambda B x on A's rows (solver/operator/load_matrix_b.hpp), at
// np 1-4: the same row ranges as A on every rank, including a rank that owns
// no rows; after a graph partition (or any renumbering of A's rows) B's rows
// and columns are renumbered as A's, so that B(i, j) in the operator's
// numbering is the input's B(original(i), original(j)); and each bad B (of
// another size, not square, not symmetric, with a zero, negative or missing
// diagonal entry) refused on every rank with a message naming matrix_b and
// the source.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <string>
#include <vector>

#include "apps/run/steps/matrix_setup.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;

io::MatrixConfig generator(io::GeneratorKind kind, std::int64_t nx, std::int64_t ny, io::FemPart part,
                           bool renumber = false) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator.kind = kind;
  config.generator.nx = nx;
  config.generator.ny = ny;
  config.generator.part = part;
  config.generator.stencil = kind == io::GeneratorKind::laplacian_1d ? 3 : 5;
  config.generator.renumber = renumber;
  config.generator.renumber_seed = 5;
  return config;
}

io::MatrixConfig market(const fs::path& file) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::matrix_market;
  config.file = file.string();
  return config;
}

// Every rank's original rows of its local rows, gathered: original[current row] on every rank.
std::vector<std::int64_t> original_of_every_row(const solver::DistributedRows& m) {
  const int ranks = test::mpi_size();
  std::vector<std::int64_t> mine(static_cast<std::size_t>(m.rows.local_rows()));
  for (std::int64_t i = 0; i < m.rows.local_rows(); ++i) mine[i] = m.numbering.original_row(i);
  std::vector<int> counts(ranks), displs(ranks);
  for (int r = 0; r < ranks; ++r) {
    counts[r] = static_cast<int>(m.partition.rows(r));
    displs[r] = static_cast<int>(m.partition.begin(r));
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(m.partition.global_rows()));
  BLOCKEIGS_MPI_CHECK(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(), counts.data(),
                                     displs.data(), MPI_INT64_T, MPI_COMM_WORLD));
  return all;
}

// b's rows (operator's numbering) against the whole input matrix `input` through a's numbering.
void expect_renumbered_like(const solver::DistributedRows& a, const solver::DistributedRows& b, const CsrRows& input) {
  EXPECT_EQ(b.partition.first_rows(), a.partition.first_rows());
  EXPECT_EQ(b.rows.first_row, a.rows.first_row);
  ASSERT_EQ(b.rows.local_rows(), a.rows.local_rows());
  const std::vector<std::int64_t> original = original_of_every_row(a);
  const std::int64_t n = input.global_rows;
  std::vector<double> want(static_cast<std::size_t>(n)), got(want.size());
  for (std::int64_t i = 0; i < b.rows.local_rows(); ++i) {
    const std::int64_t o = original[b.rows.first_row + i];
    std::fill(want.begin(), want.end(), 0.0);
    std::fill(got.begin(), got.end(), 0.0);
    for (std::int64_t k = input.row_offsets[o]; k < input.row_offsets[o + 1]; ++k)
      want[input.col_indices[k]] = input.values[k];
    for (std::int64_t k = b.rows.row_offsets[i]; k < b.rows.row_offsets[i + 1]; ++k) {
      if (k > b.rows.row_offsets[i]) {
        ASSERT_LT(b.rows.col_indices[k - 1], b.rows.col_indices[k]);
      }
      got[original[b.rows.col_indices[k]]] = b.rows.values[k];
    }
    ASSERT_EQ(got, want) << "operator row " << b.rows.first_row + i << " (input row " << o << ")";
  }
}

TEST(MatrixB, OnTheRowsOfAContiguous) {
  const auto a_config = generator(io::GeneratorKind::fem_p1_2d, 9, 7, io::FemPart::stiffness);
  const auto b_config = generator(io::GeneratorKind::fem_p1_2d, 9, 7, io::FemPart::mass);
  const solver::DistributedRows a =
      apps::load_symmetric_matrix(a_config, PartitionMethod::contiguous, LocalOrder::none, MPI_COMM_WORLD);
  const solver::DistributedRows b = solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  EXPECT_TRUE(b.numbering.is_identity());
  EXPECT_EQ(b.description, "2D fem_p1 mass 9x7 (linear elements, tensor product, Dirichlet)");
  EXPECT_EQ(b.global_nnz, io::generated_nnz(b_config.generator));
  expect_renumbered_like(a, b, io::generate_rows(b_config.generator, 0, 63));
}

// A's rows balanced by A's nonzeros, B on the same ranges though its own rows are longer.
TEST(MatrixB, KeepsTheRangesOfAWhoseRowsAreShorter) {
  const auto a_config = generator(io::GeneratorKind::laplacian_2d, 12, 5, io::FemPart::stiffness);
  auto b_config = generator(io::GeneratorKind::fem_p1_2d, 12, 5, io::FemPart::mass);
  solver::DistributedRows a = solver::load_distributed_rows(a_config, MPI_COMM_WORLD);
  const solver::DistributedRows b = solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  expect_renumbered_like(a, b, io::generate_rows(b_config.generator, 0, 60));
}

// Rows moved by any numbering of A's (here: reversed, and the last rank's
// original range and the first rank's new range empty), without a partitioner.
TEST(MatrixB, MovedAsTheRowsOfAWithAnEmptyRank) {
  const int rank = test::mpi_rank(), ranks = test::mpi_size();
  const auto b_config = generator(io::GeneratorKind::fem_p1_2d, 6, 5, io::FemPart::mass, true);
  const std::int64_t n = 30;
  // Original: ranks - 1 ranges, the last rank empty; current: the first rank empty.
  std::vector<std::int64_t> original_first(static_cast<std::size_t>(ranks) + 1, n),
      current_first(original_first.size(), 0);
  const int busy = std::max(1, ranks - 1);
  for (int r = 0; r < ranks; ++r) {
    original_first[r] = std::min<std::int64_t>(n, n * r / busy);
    current_first[r + 1] = ranks == 1 ? n : std::max<std::int64_t>(0, n * r / busy);
  }
  const solver::RowPartition original(original_first), current(current_first);
  std::vector<std::int64_t> original_of_local, current_of_original;
  for (std::int64_t i = current.begin(rank); i < current.end(rank); ++i) original_of_local.push_back(n - 1 - i);
  for (std::int64_t i = original.begin(rank); i < original.end(rank); ++i) current_of_original.push_back(n - 1 - i);
  solver::DistributedRows a;
  a.partition = current;
  a.rows.first_row = current.begin(rank);
  a.rows.global_rows = a.rows.global_cols = n;
  a.rows.row_offsets.assign(static_cast<std::size_t>(current.rows(rank)) + 1, 0);
  a.numbering = solver::RowNumbering(MPI_COMM_WORLD, original, current, original_of_local, current_of_original);
  const solver::DistributedRows b = solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  if (ranks > 1) {
    EXPECT_EQ(b.rows.local_rows(), rank == 0 ? 0 : current.rows(rank));
  }
  expect_renumbered_like(a, b, io::generate_rows(b_config.generator, 0, n));
}

// execution.partition: graph and local_order: band on a randomly numbered grid: B follows A's partition and
// row order.
TEST(MatrixB, FollowsAGraphPartition) {
  if (!solver::graph_partitioner_compiled()) GTEST_SKIP() << "built without PT-Scotch";
  const auto a_config = generator(io::GeneratorKind::fem_p1_2d, 10, 8, io::FemPart::stiffness, true);
  const auto b_config = generator(io::GeneratorKind::fem_p1_2d, 10, 8, io::FemPart::mass, true);
  const solver::DistributedRows a =
      apps::load_symmetric_matrix(a_config, PartitionMethod::graph, LocalOrder::band, MPI_COMM_WORLD);
  const solver::DistributedRows b = solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  EXPECT_EQ(b.partitioning.used, a.partitioning.used);
  if (test::mpi_size() > 1) {
    EXPECT_FALSE(b.numbering.is_identity());
  }
  expect_renumbered_like(a, b, io::generate_rows(b_config.generator, 0, 80));
}

// execution.local_order: band on a contiguous split (A's rows reordered on their own ranks): B's rows in A's order.
TEST(MatrixB, FollowsABandOrderOfAContiguousSplit) {
  const auto a_config = generator(io::GeneratorKind::fem_p1_2d, 10, 8, io::FemPart::stiffness, true);
  const auto b_config = generator(io::GeneratorKind::fem_p1_2d, 10, 8, io::FemPart::mass, true);
  const solver::DistributedRows a =
      apps::load_symmetric_matrix(a_config, PartitionMethod::contiguous, LocalOrder::band, MPI_COMM_WORLD);
  const solver::DistributedRows b = solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  EXPECT_FALSE(b.numbering.is_identity());
  expect_renumbered_like(a, b, io::generate_rows(b_config.generator, 0, 80));
}

// The message every rank throws, agreed (empty where none was thrown).
std::string refusal(const io::MatrixConfig& b_config, const solver::DistributedRows& a) {
  try {
    solver::load_matrix_b(b_config, a, MPI_COMM_WORLD);
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    return e.what();
  }
  return {};
}

void expect_parts(const std::string& message, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(message.empty()) << "not refused";
  for (const char* part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing: " << message;
}

TEST(MatrixB, BadMatricesAreRefusedOnEveryRank) {
  const fs::path dir = test::shared_folder("matrix_b");
  const auto a_config = generator(io::GeneratorKind::laplacian_1d, 6, 1, io::FemPart::stiffness);
  const solver::DistributedRows a =
      apps::load_symmetric_matrix(a_config, PartitionMethod::contiguous, LocalOrder::none, MPI_COMM_WORLD);
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  const std::string symmetric_head = "%%MatrixMarket matrix coordinate real symmetric\n";
  test::write_text(dir / "nonsymmetric.mtx", head + "6 6 7\n1 1 2\n2 2 2\n3 3 2\n4 4 2\n5 5 2\n6 6 2\n5 2 0.5\n");
  test::write_text(dir / "zero.mtx", symmetric_head + "6 6 6\n1 1 2\n2 2 2\n3 3 2\n4 4 0\n5 5 2\n6 6 2\n");
  test::write_text(dir / "negative.mtx", symmetric_head + "6 6 6\n1 1 2\n2 2 -1\n3 3 2\n4 4 2\n5 5 2\n6 6 2\n");
  test::write_text(dir / "missing.mtx", symmetric_head + "6 6 6\n1 1 2\n2 2 2\n3 3 2\n4 4 2\n5 5 2\n6 5 0.1\n");
  test::write_text(dir / "rectangular.mtx", head + "6 5 5\n1 1 2\n2 2 2\n3 3 2\n4 4 2\n5 5 2\n");
  test::write_text(dir / "small.mtx", symmetric_head + "5 5 5\n1 1 2\n2 2 2\n3 3 2\n4 4 2\n5 5 2\n");

  expect_parts(refusal(generator(io::GeneratorKind::fem_p1_1d, 7, 1, io::FemPart::mass), a),
               {"matrix_b: 1D fem_p1 mass 7", "is 7 x 7, but the matrix (A) is 6 x 6", "must be the size of A"});
  expect_parts(refusal(market(dir / "small.mtx"), a),
               {"matrix_b: ", "small.mtx is 5 x 5, but the matrix (A) is 6 x 6"});
  expect_parts(refusal(market(dir / "rectangular.mtx"), a),
               {"matrix_b: ", "rectangular.mtx is 6 x 5", "must be square"});
  expect_parts(refusal(market(dir / "nonsymmetric.mtx"), a),
               {"matrix_b: ", "nonsymmetric.mtx: the matrix is not symmetric: B(4, 1) = 0.5 but B(1, 4) = 0",
                "must be symmetric positive definite"});
  expect_parts(refusal(market(dir / "zero.mtx"), a), {"zero.mtx: B(3, 3) = 0 (zero-based)", "positive diagonal"});
  expect_parts(refusal(market(dir / "negative.mtx"), a), {"negative.mtx: B(1, 1) = -1 (zero-based)"});
  expect_parts(refusal(market(dir / "missing.mtx"), a), {"missing.mtx: B(5, 5) = 0 (not stored)"});
  io::MatrixConfig no_file = market(dir / "no_such.mtx");
  expect_parts(refusal(no_file, a), {"no_such.mtx"});
}

}  // namespace
}  // namespace blockeigs
