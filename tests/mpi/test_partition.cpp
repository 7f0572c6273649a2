// execution.partition at np 1-4: the graph partition balances rows and
// nonzeros, cuts the halo of a randomly numbered mesh, and moves and
// renumbers the rows so that the operator is the input's matrix under a
// permutation (its products, mapped back to the input's numbering, are the
// input's); empty rows, a rank without rows and ranks without boundary rows
// work; `auto` and the messages of a build without PT-Scotch.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators.hpp"
#include "io/renumbering.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"

namespace blockeigs {
namespace {

using solver::DistributedRows;
using solver::RowPartition;

io::MatrixConfig grid3d(std::int64_t n, bool renumber) {
  io::MatrixConfig config;
  config.generator.kind = io::GeneratorKind::laplacian_3d;
  config.generator.nx = config.generator.ny = config.generator.nz = n;
  config.generator.renumber = renumber;
  config.generator.renumber_seed = 11;
  return config;
}

DistributedRows load(const io::MatrixConfig& config, PartitionMethod method) {
  DistributedRows m = solver::load_distributed_rows(config, MPI_COMM_WORLD);
  solver::distribute_rows(m, method, MPI_COMM_WORLD);
  return m;
}

// A matrix every rank holds whole, distributed by `partition` as load_distributed_rows would.
DistributedRows from_whole(const io::CsrRows& whole, const RowPartition& partition) {
  DistributedRows m;
  const int rank = test::mpi_rank();
  m.rows = io::slice_rows(whole, partition.begin(rank), partition.end(rank));
  m.partition = partition;
  m.numbering = solver::RowNumbering::identity(MPI_COMM_WORLD, partition);
  m.global_nnz = whole.nnz();
  return m;
}

long long total_halo(const DistributedRows& m) {
  const auto context = spmm::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, m.rows, m.partition);
  long long mine = A.halo_plan().halo_rows(), total = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

// The operator of `m` applied to a block given in the input's numbering and
// mapped back equals the input matrix `whole` times that block.
void expect_input_matrix(const DistributedRows& m, const io::CsrRows& whole) {
  constexpr std::int64_t cols = 3;
  const int rank = test::mpi_rank();
  const RowPartition& input = m.numbering.original();
  const std::vector<double> x_all = test::hashed_block(0, whole.global_rows, cols, 5);
  const std::vector<double> x_mine(x_all.begin() + input.begin(rank) * cols, x_all.begin() + input.end(rank) * cols);
  const std::vector<double> x = m.numbering.from_original_rows(MPI_COMM_WORLD, x_mine, cols);
  const std::int64_t local = m.partition.rows(rank);
  ASSERT_EQ(static_cast<std::int64_t>(x.size()), local * cols);

  const auto context = spmm::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, m.rows, m.partition);
  spmm::DenseBlock<double> X(Space::host, local, cols), Y(Space::host, local, cols);
  std::copy(x.begin(), x.end(), X.data());
  A.apply(1.0, X.cview(), 0.0, Y.view());
  const std::vector<double> y(Y.data(), Y.data() + local * cols);
  const std::vector<double> y_input = m.numbering.to_original_rows(MPI_COMM_WORLD, y, cols);

  std::vector<double> expected, scale;
  test::reference_rows(whole, x_all, cols, input.begin(rank), input.end(rank), expected, scale, 1.1e-16);
  ASSERT_EQ(y_input.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(std::abs(y_input[i] - expected[i]), scale[i / cols] + 1e-300) << "input row " << i / cols;
}

bool can_partition() { return solver::graph_partitioner_compiled(); }

TEST(Partition, GraphBalancesRowsAndNonzerosAndKeepsEveryRow) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const DistributedRows m = load(grid3d(14, true), PartitionMethod::graph);
  const int ranks = test::mpi_size(), rank = test::mpi_rank();
  EXPECT_EQ(m.partitioning.used, ranks > 1 ? PartitionMethod::graph : PartitionMethod::contiguous);
  // Cost nnz + rows per rank within 5% of the mean (PT-Scotch is asked for 3%).
  const long long mine = m.rows.nnz() + m.rows.local_rows();
  std::vector<long long> cost(static_cast<std::size_t>(ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_LONG_LONG, cost.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD));
  long long sum = 0;
  for (const long long c : cost) sum += c;
  EXPECT_EQ(sum, m.global_nnz + m.partition.global_rows());
  for (int r = 0; r < ranks; ++r) EXPECT_LE(cost[r], 1.05 * double(sum) / ranks) << "rank " << r;
  // Each rank owns a contiguous range of the new numbering, and every input row is on exactly one rank.
  EXPECT_EQ(m.rows.first_row, m.partition.begin(rank));
  std::vector<std::int64_t> original(static_cast<std::size_t>(m.rows.local_rows()));
  for (std::int64_t i = 0; i < m.rows.local_rows(); ++i) original[i] = m.numbering.original_row(i);
  const std::vector<std::int64_t> back = m.numbering.to_original_rows(MPI_COMM_WORLD, original, 1);
  const RowPartition& input = m.numbering.original();
  ASSERT_EQ(static_cast<std::int64_t>(back.size()), input.rows(rank));
  for (std::int64_t i = 0; i < input.rows(rank); ++i) EXPECT_EQ(back[i], input.begin(rank) + i);
  // And back again.
  EXPECT_EQ(m.numbering.from_original_rows(MPI_COMM_WORLD, back, 1), original);
}

TEST(Partition, GraphCutsTheHaloOfARenumberedMesh) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const long long natural = total_halo(load(grid3d(16, false), PartitionMethod::contiguous));
  const long long scattered = total_halo(load(grid3d(16, true), PartitionMethod::contiguous));
  const DistributedRows graph = load(grid3d(16, true), PartitionMethod::graph);
  const long long partitioned = total_halo(graph);
  if (test::mpi_size() == 1) {
    EXPECT_EQ(partitioned, 0);
    return;
  }
  EXPECT_LE(partitioned, 2 * natural) << "natural " << natural << ", renumbered " << scattered;
  EXPECT_LE(5 * partitioned, scattered) << "natural " << natural << ", renumbered " << scattered;
  expect_input_matrix(graph, io::generate_rows(grid3d(16, true).generator, 0, 4096));
}

TEST(Partition, SameEigenvaluesAsTheNaturalOrdering) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  auto eigenvalues = [](const DistributedRows& m) {
    const auto context = spmm::Context::host();
    solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, m.rows, m.partition);
    solver::LobpcgOptions options;
    options.k = 5;
    options.tolerance = 1e-9;
    options.max_iterations = 3000;
    const auto result = solver::lobpcg<double>(A, options);
    EXPECT_TRUE(result.all_converged());
    return result.eigenvalues;
  };
  const std::vector<double> natural = eigenvalues(load(grid3d(9, false), PartitionMethod::contiguous));
  const std::vector<double> renumbered = eigenvalues(load(grid3d(9, true), PartitionMethod::graph));
  ASSERT_EQ(natural.size(), renumbered.size());
  for (std::size_t j = 0; j < natural.size(); ++j)
    EXPECT_LE(std::abs(natural[j] - renumbered[j]), 1e-10 * natural[j]) << "pair " << j;
}

// A 1D chain with holes: rows 10-14 and 40 have no entries at all (not even a diagonal).
io::CsrRows chain_with_empty_rows(std::int64_t n) {
  auto empty = [](std::int64_t i) { return (i >= 10 && i < 15) || i == 40; };
  io::CsrRows whole;
  whole.global_rows = whole.global_cols = n;
  whole.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!empty(i)) {
      for (std::int64_t j : {i - 1, i, i + 1}) {
        if (j < 0 || j >= n || empty(j)) continue;
        whole.col_indices.push_back(j);
        whole.values.push_back(j == i ? 2.0 + 0.01 * double(i) : -1.0);
      }
    }
    whole.row_offsets.push_back(whole.nnz());
  }
  return whole;
}

TEST(Partition, EmptyRowsAndARankWithoutRows) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const io::CsrRows whole = chain_with_empty_rows(64);
  const int ranks = test::mpi_size();
  // Rank 1 (where there is one) starts with no rows.
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) first[r] = 64 * r / ranks;
  if (ranks > 1) first[1] = 0;
  DistributedRows m = from_whole(whole, RowPartition(first));
  solver::distribute_rows(m, PartitionMethod::graph, MPI_COMM_WORLD);
  expect_input_matrix(m, whole);
}

// Equal, disconnected chains, randomly numbered: the partitioner gives each
// rank whole chains, so that no rank has a boundary row.
TEST(Partition, RanksWithoutBoundaryRows) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const int ranks = test::mpi_size();
  const std::int64_t chain = 40, n = chain * ranks;
  const io::RandomPermutation perm(n, 3);
  io::CsrRows whole;
  whole.global_rows = whole.global_cols = n;
  whole.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t natural = perm.natural_of(i);
    std::vector<std::pair<std::int64_t, double>> row{{i, 2.0}};
    if (natural % chain != 0) row.emplace_back(perm.renumbered_of(natural - 1), -1.0);
    if (natural % chain != chain - 1) row.emplace_back(perm.renumbered_of(natural + 1), -1.0);
    std::sort(row.begin(), row.end());
    for (const auto& [j, v] : row) {
      whole.col_indices.push_back(j);
      whole.values.push_back(v);
    }
    whole.row_offsets.push_back(whole.nnz());
  }
  DistributedRows m = from_whole(whole, RowPartition::balanced(whole.row_offsets, ranks));
  solver::distribute_rows(m, PartitionMethod::graph, MPI_COMM_WORLD);
  EXPECT_EQ(total_halo(m), 0);
  expect_input_matrix(m, whole);
}

TEST(Partition, AutoKeepsASmallContiguousHaloAndPartitionsALargeOne) {
  // A 200 x 200 grid in slabs: each rank's halo is one or two 200-row lines, under 5% of its rows at np 4.
  io::MatrixConfig config;
  config.generator.kind = io::GeneratorKind::laplacian_2d;
  config.generator.stencil = 5;
  config.generator.nx = config.generator.ny = 200;
  const DistributedRows natural = load(config, PartitionMethod::automatic);
  EXPECT_EQ(natural.partitioning.used, PartitionMethod::contiguous);
  EXPECT_TRUE(natural.numbering.is_identity());
  config.generator.renumber = true;
  const DistributedRows scattered = load(config, PartitionMethod::automatic);
  if (test::mpi_size() == 1 || !can_partition()) {
    EXPECT_EQ(scattered.partitioning.used, PartitionMethod::contiguous);
    return;
  }
  EXPECT_GT(natural.partitioning.contiguous_halo, 0.0);
  EXPECT_LT(natural.partitioning.contiguous_halo, solver::kAutoHaloFraction);
  EXPECT_EQ(scattered.partitioning.used, PartitionMethod::graph);
  EXPECT_GT(scattered.partitioning.contiguous_halo, solver::kAutoHaloFraction);
  EXPECT_NE(scattered.partitioning.reason.find("auto: contiguous halo up to"), std::string::npos)
      << scattered.partitioning.reason;
}

// The messages of a build without PT-Scotch, in any build.
TEST(Partition, WithoutPtScotchGraphIsAnErrorAndAutoStaysContiguous) {
  solver::hide_graph_partitioner_for_tests(true);
  DistributedRows m = solver::load_distributed_rows(grid3d(12, true), MPI_COMM_WORLD);
  try {
    solver::distribute_rows(m, PartitionMethod::graph, MPI_COMM_WORLD);
    ADD_FAILURE() << "graph without PT-Scotch was accepted";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("execution.partition: graph needs PT-Scotch, which this build"),
              std::string::npos) << e.what();
  }
  solver::distribute_rows(m, PartitionMethod::automatic, MPI_COMM_WORLD);
  solver::hide_graph_partitioner_for_tests(false);
  EXPECT_EQ(m.partitioning.used, PartitionMethod::contiguous);
  EXPECT_TRUE(m.numbering.is_identity());
  if (test::mpi_size() > 1) {
    EXPECT_NE(m.partitioning.reason.find("but this build has no PT-Scotch"), std::string::npos) << m.partitioning.reason;
  }
}

}  // namespace
}  // namespace blockeigs
