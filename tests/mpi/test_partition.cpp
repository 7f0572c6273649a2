// execution.partition at np 1-4: the graph partition balances rows and
// nonzeros, cuts the halo of a randomly numbered mesh, and moves and
// renumbers the rows so that the operator is the input's matrix under a
// permutation (its products, mapped back to the input's numbering, are the
// input's); empty rows, a rank without rows and ranks without boundary rows
// work; `auto` and the messages of a build without PT-Scotch
// (execution.local_order: test_local_order.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/renumbering.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"
#include "tests/support/partition_checks.hpp"

namespace blockeigs {
namespace {

using solver::DistributedRows;
using solver::RowPartition;
using namespace test::partition_checks;

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
  expect_numbering_round_trip(m);
}

// Each rank's rows' parts from partition_graph, gathered whole: the load
// (nonzeros + 1 a row) of each part and the edges cut between parts.
struct PartStats {
  std::vector<long long> load;
  long long cut = 0;
};

PartStats part_stats(const DistributedRows& m, const std::vector<int>& part, int parts) {
  const int ranks = test::mpi_size();
  const int mine = static_cast<int>(part.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size() + 1, 0);
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < ranks; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<int> owner(static_cast<std::size_t>(offsets.back()));
  BLOCKEIGS_MPI_CHECK(
      MPI_Allgatherv(part.data(), mine, MPI_INT, owner.data(), counts.data(), offsets.data(), MPI_INT, MPI_COMM_WORLD));
  PartStats stats;
  stats.load.assign(static_cast<std::size_t>(parts), 0);
  for (std::int64_t i = 0; i < m.rows.local_rows(); ++i) {
    stats.load[part[i]] += m.rows.row_offsets[i + 1] - m.rows.row_offsets[i] + 1;
    for (std::int64_t k = m.rows.row_offsets[i]; k < m.rows.row_offsets[i + 1]; ++k)
      stats.cut += owner[m.rows.col_indices[k]] != part[i];
  }
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, stats.load.data(), parts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stats.cut, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  return stats;
}

// Sequential Scotch on rank 0 (with and without threads) and PT-Scotch on
// every rank: each part within 5% of the mean load, and the cut of a
// randomly numbered 16^3 grid near a plane's (2 x 256 edges a plane).
TEST(Partition, BothScotchPathsBalanceAndCutAPlane) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const DistributedRows m = solver::load_distributed_rows(grid3d(16, true), MPI_COMM_WORLD);
  const int parts = 3;
  for (const solver::GraphPartitionTuning tuning :
       {solver::GraphPartitionTuning{0, 0.03, 1, true}, solver::GraphPartitionTuning{0, 0.03, 2, true},
        solver::GraphPartitionTuning{0, 0.03, 1, false}}) {
    const std::vector<int> part = solver::partition_graph(MPI_COMM_WORLD, m.rows, m.partition, parts, tuning);
    ASSERT_EQ(static_cast<std::int64_t>(part.size()), m.rows.local_rows());
    for (const int p : part) ASSERT_TRUE(p >= 0 && p < parts) << p;
    const PartStats stats = part_stats(m, part, parts);
    long long total = 0;
    for (const long long l : stats.load) total += l;
    for (int p = 0; p < parts; ++p)
      EXPECT_LE(stats.load[p], 1.05 * double(total) / parts) << "part " << p << ", gathered " << tuning.gathered;
    EXPECT_LE(stats.cut, 3 * 2 * 2 * 256) << "gathered " << tuning.gathered << ", threads " << tuning.threads;
  }
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
    const auto context = dense::Context::host();
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

TEST(Partition, EmptyRowsAndARankWithoutRows) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const CsrRows whole = chain_with_empty_rows(64);
  const int ranks = test::mpi_size();
  // Rank 1 (where there is one) starts with no rows.
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) first[r] = 64 * r / ranks;
  if (ranks > 1) first[1] = 0;
  DistributedRows m = from_whole(whole, RowPartition(first));
  solver::distribute_rows(m, PartitionMethod::graph, MPI_COMM_WORLD);
  expect_input_matrix(m, whole);
}

// Complex Hermitian rows (entries where |i - j| <= 3 + (i + j) % 22: rows of 13 to 37 entries, through
// each of the row sort's paths) move as real ones do: by a graph partition (where PT-Scotch is built in), a random
// saved numbering and the band order, a rank without rows first where there are two or more; the operator stays the
// input's matrix under the numbering, every row sorted.
ComplexCsrRows complex_band(std::int64_t n) {
  ComplexCsrRows whole;
  whole.global_rows = whole.global_cols = n;
  whole.row_offsets.assign(1, 0);
  const auto upper = [](std::int64_t i, std::int64_t j) {  // the entry (i, j), i < j
    return std::complex<double>(0.01 * double(i + 1), 0.001 * double(j - i) - 0.02);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - 24); j <= std::min(n - 1, i + 24); ++j) {
      if (std::abs(i - j) > 3 + (i + j) % 22) continue;
      whole.col_indices.push_back(j);
      whole.values.push_back(j == i  ? std::complex<double>(50.0 + double(i % 7), 0.0)
                             : j > i ? upper(i, j)
                                     : std::conj(upper(j, i)));
    }
    whole.row_offsets.push_back(whole.nnz());
  }
  return whole;
}

DistributedRows from_whole_complex(const ComplexCsrRows& whole, const RowPartition& partition) {
  DistributedRows m;
  m.complex = true;
  m.complex_rows = slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank()));
  m.partition = partition;
  m.numbering = solver::RowNumbering::identity(MPI_COMM_WORLD, partition);
  m.global_nnz = whole.nnz();
  return m;
}

// A x for x given in the input's numbering, through the operator on m's rows, equals whole * x.
void expect_input_matrix_complex(const DistributedRows& m, const ComplexCsrRows& whole) {
  constexpr std::int64_t cols = 2;
  const int rank = test::mpi_rank();
  const RowPartition& input = m.numbering.original();
  const auto x_at = [](std::int64_t i, std::int64_t c) {
    return std::complex<double>(std::sin(0.3 * double(i) + double(c)), std::cos(0.7 * double(i) - double(c)));
  };
  std::vector<std::complex<double>> x_mine;
  for (std::int64_t i = input.begin(rank); i < input.end(rank); ++i)
    for (std::int64_t c = 0; c < cols; ++c) x_mine.push_back(x_at(i, c));
  const std::vector<std::complex<double>> x = m.numbering.from_original_rows(MPI_COMM_WORLD, x_mine, cols);
  const std::int64_t local = m.partition.rows(rank);
  ASSERT_EQ(static_cast<std::int64_t>(x.size()), local * cols);
  const auto context = dense::Context::host();
  solver::DistributedOperator<std::complex<double>> A(MPI_COMM_WORLD, context, m.complex_rows, m.partition);
  dense::DenseBlock<std::complex<double>> X(Space::host, local, cols), Y(Space::host, local, cols);
  std::copy(x.begin(), x.end(), X.data());
  A.apply(1.0, X.cview(), 0.0, Y.view());
  const std::vector<std::complex<double>> y(Y.data(), Y.data() + local * cols);
  const std::vector<std::complex<double>> y_input = m.numbering.to_original_rows(MPI_COMM_WORLD, y, cols);
  ASSERT_EQ(static_cast<std::int64_t>(y_input.size()), input.rows(rank) * cols);
  for (std::int64_t i = input.begin(rank); i < input.end(rank); ++i)
    for (std::int64_t c = 0; c < cols; ++c) {
      std::complex<double> want = 0;
      for (std::int64_t k = whole.row_offsets[i]; k < whole.row_offsets[i + 1]; ++k)
        want += whole.values[k] * x_at(whole.col_indices[k], c);
      EXPECT_LE(std::abs(y_input[(i - input.begin(rank)) * cols + c] - want), 1e-12 * (1 + std::abs(want)))
          << "input row " << i << ", column " << c;
    }
}

void expect_sorted_complex_rows(const ComplexCsrRows& rows) {
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i] + 1; k < rows.row_offsets[i + 1]; ++k)
      ASSERT_LT(rows.col_indices[k - 1], rows.col_indices[k]) << "local row " << i;
}

TEST(Partition, ComplexRowsMoveAsRealOnesDo) {
  constexpr std::int64_t n = 150;
  const ComplexCsrRows whole = complex_band(n);
  const int ranks = test::mpi_size();
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) first[r] = n * r / ranks;
  if (ranks > 1) first[1] = 0;  // rank 1 starts with no rows
  const RowPartition start(first);
  // A random saved numbering: row i of the input becomes row perm(i), the ranges kept.
  const io::RandomPermutation perm(n, 5);
  std::vector<std::int64_t> renumbered;
  for (std::int64_t i = start.begin(test::mpi_rank()); i < start.end(test::mpi_rank()); ++i)
    renumbered.push_back(perm.renumbered_of(i));
  {
    DistributedRows m = from_whole_complex(whole, start);
    solver::distribute_by_numbering(m, start, renumbered, "a test's numbering", MPI_COMM_WORLD);
    EXPECT_TRUE(m.rows.row_offsets.empty()) << "complex rows stay in complex_rows";
    expect_sorted_complex_rows(m.complex_rows);
    expect_input_matrix_complex(m, whole);
  }
  for (const PartitionMethod method : {PartitionMethod::contiguous, PartitionMethod::graph}) {
    if (method == PartitionMethod::graph && !can_partition()) continue;
    DistributedRows m = from_whole_complex(whole, start);
    solver::distribute_rows(m, method, MPI_COMM_WORLD, can_partition() ? LocalOrder::band : LocalOrder::none);
    EXPECT_EQ(m.partitioning.used, ranks > 1 ? method : PartitionMethod::contiguous);
    expect_sorted_complex_rows(m.complex_rows);
    expect_input_matrix_complex(m, whole);
  }
}

// Equal, disconnected chains, randomly numbered: the partitioner gives each
// rank whole chains, so that no rank has a boundary row.
TEST(Partition, RanksWithoutBoundaryRows) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const int ranks = test::mpi_size();
  const std::int64_t chain = 40, n = chain * ranks;
  const io::RandomPermutation perm(n, 3);
  CsrRows whole;
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
              std::string::npos)
        << e.what();
  }
  solver::distribute_rows(m, PartitionMethod::automatic, MPI_COMM_WORLD, LocalOrder::none);
  solver::hide_graph_partitioner_for_tests(false);
  EXPECT_EQ(m.partitioning.used, PartitionMethod::contiguous);
  EXPECT_TRUE(m.numbering.is_identity());
  if (test::mpi_size() > 1) {
    EXPECT_NE(m.partitioning.reason.find("but this build has no PT-Scotch"), std::string::npos)
        << m.partitioning.reason;
  }
}

}  // namespace
}  // namespace blockeigs
