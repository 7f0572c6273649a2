// execution.partition at np 1-4: the graph partition balances rows and
// nonzeros, cuts the halo of a randomly numbered mesh, and moves and
// renumbers the rows so that the operator is the input's matrix under a
// permutation (its products, mapped back to the input's numbering, are the
// input's); empty rows, a rank without rows and ranks without boundary rows
// work; `auto` and the messages of a build without PT-Scotch. And
// execution.local_order: the band order narrows each rank's band after a
// graph partition or on a scattered contiguous split, keeps the ranges, the
// halo and the input's matrix, and composes with the numbering.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators.hpp"
#include "io/renumbering.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"

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

DistributedRows load(const io::MatrixConfig& config, PartitionMethod method, LocalOrder order = LocalOrder::automatic) {
  DistributedRows m = solver::load_distributed_rows(config, MPI_COMM_WORLD);
  solver::distribute_rows(m, method, MPI_COMM_WORLD, order);
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

// Columns strictly increase within each row, as CsrRows promises.
void expect_sorted_rows(const io::CsrRows& rows) {
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i] + 1; k < rows.row_offsets[i + 1]; ++k)
      ASSERT_LT(rows.col_indices[k - 1], rows.col_indices[k]) << "local row " << i;
}

// Every input row is on exactly one rank, and the numbering maps both ways.
void expect_numbering_round_trip(const DistributedRows& m) {
  const int rank = test::mpi_rank();
  std::vector<std::int64_t> original(static_cast<std::size_t>(m.rows.local_rows()));
  for (std::int64_t i = 0; i < m.rows.local_rows(); ++i) original[i] = m.numbering.original_row(i);
  const std::vector<std::int64_t> back = m.numbering.to_original_rows(MPI_COMM_WORLD, original, 1);
  const RowPartition& input = m.numbering.original();
  ASSERT_EQ(static_cast<std::int64_t>(back.size()), input.rows(rank));
  for (std::int64_t i = 0; i < input.rows(rank); ++i) EXPECT_EQ(back[i], input.begin(rank) + i);
  EXPECT_EQ(m.numbering.from_original_rows(MPI_COMM_WORLD, back, 1), original);
}

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
  solver::hide_band_order_for_tests(true);  // such a build has no Scotch either
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
  solver::distribute_rows(m, PartitionMethod::automatic, MPI_COMM_WORLD);
  solver::hide_graph_partitioner_for_tests(false);
  solver::hide_band_order_for_tests(false);
  EXPECT_EQ(m.partitioning.used, PartitionMethod::contiguous);
  EXPECT_TRUE(m.numbering.is_identity());
  if (test::mpi_size() > 1) {
    EXPECT_NE(m.partitioning.reason.find("but this build has no PT-Scotch"), std::string::npos)
        << m.partitioning.reason;
  }
}

// --- execution.local_order ---

bool can_order() { return solver::band_order_available(); }

TEST(LocalOrder, BandAfterTheGraphPartitionNarrowsEachRanksBand) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const DistributedRows kept = load(grid3d(16, true), PartitionMethod::graph, LocalOrder::none);
  EXPECT_EQ(kept.local_order.used, LocalOrder::none);
  EXPECT_FALSE(kept.local_order.measured);
  // The same distribution, then ordered as distribute_rows does with `auto`.
  DistributedRows band = kept;
  solver::order_rows_locally(band, LocalOrder::automatic, MPI_COMM_WORLD);
  ASSERT_EQ(band.local_order.used, LocalOrder::band);
  EXPECT_NE(band.local_order.orderer.find("Gibbs-Poole-Stockmeyer"), std::string::npos) << band.local_order.orderer;
  if (test::mpi_size() > 1) {
    EXPECT_EQ(band.local_order.reason,
              "auto: after the graph partition; kept: it narrows the bandwidth or the profile");
  }
  // The ranges and the halo stay; the band narrows.
  const int rank = test::mpi_rank();
  EXPECT_EQ(band.partition.begin(rank), kept.partition.begin(rank));
  EXPECT_EQ(band.partition.end(rank), kept.partition.end(rank));
  EXPECT_EQ(total_halo(band), total_halo(kept));
  const solver::BandStats before = solver::band_stats(MPI_COMM_WORLD, kept.rows);
  const solver::BandStats after = solver::band_stats(MPI_COMM_WORLD, band.rows);
  EXPECT_EQ(band.local_order.before.bandwidth, before.bandwidth);
  EXPECT_EQ(band.local_order.after.bandwidth, after.bandwidth);
  EXPECT_EQ(band.local_order.after.profile, after.profile);
  EXPECT_LE(4 * after.profile, before.profile) << before.profile << " -> " << after.profile;
  EXPECT_LE(2 * after.bandwidth, before.bandwidth) << before.bandwidth << " -> " << after.bandwidth;
  expect_sorted_rows(band.rows);
  expect_numbering_round_trip(band);
  expect_input_matrix(band, io::generate_rows(grid3d(16, true).generator, 0, 4096));
}

TEST(LocalOrder, BandOnAContiguousSplitKeepsTheInputsRanges) {
  if (!can_order()) GTEST_SKIP() << "built without Scotch";
  const DistributedRows m = load(grid3d(12, true), PartitionMethod::contiguous, LocalOrder::band);
  EXPECT_EQ(m.partitioning.used, PartitionMethod::contiguous);
  EXPECT_EQ(m.local_order.used, LocalOrder::band);
  EXPECT_FALSE(m.numbering.is_identity());
  const int rank = test::mpi_rank();
  EXPECT_EQ(m.partition.begin(rank), m.numbering.original().begin(rank));
  EXPECT_EQ(m.partition.end(rank), m.numbering.original().end(rank));
  EXPECT_LE(4 * m.local_order.after.profile, m.local_order.before.profile);
  expect_numbering_round_trip(m);
  expect_input_matrix(m, io::generate_rows(grid3d(12, true).generator, 0, 1728));
}

TEST(LocalOrder, AutoOrdersAScatteredSplitAndKeepsANaturalOne) {
  io::MatrixConfig config;
  config.generator.kind = io::GeneratorKind::laplacian_2d;
  config.generator.stencil = 5;
  config.generator.nx = config.generator.ny = 60;
  const DistributedRows natural = load(config, PartitionMethod::contiguous);
  EXPECT_EQ(natural.local_order.used, LocalOrder::none);
  EXPECT_TRUE(natural.local_order.measured);
  EXPECT_TRUE(natural.numbering.is_identity());
  EXPECT_LT(natural.local_order.before.profile_fraction, solver::kAutoProfileFraction);
  EXPECT_NE(natural.local_order.reason.find(", under 10.0%"), std::string::npos) << natural.local_order.reason;
  config.generator.renumber = true;
  const DistributedRows scattered = load(config, PartitionMethod::contiguous);
  EXPECT_GT(scattered.local_order.before.profile_fraction, solver::kAutoProfileFraction);
  EXPECT_NE(scattered.local_order.reason.find("auto: profile up to"), std::string::npos)
      << scattered.local_order.reason;
  if (!can_order()) {
    EXPECT_EQ(scattered.local_order.used, LocalOrder::none);
    return;
  }
  EXPECT_EQ(scattered.local_order.used, LocalOrder::band);
  EXPECT_LT(scattered.local_order.after.profile_fraction, solver::kAutoProfileFraction);
  expect_input_matrix(scattered, io::generate_rows(config.generator, 0, 3600));
}

// A cube of 6^3 trilinear elements (26 neighbours a row) in its natural
// numbering on each rank (rank 1, where there is one, without rows): scattered
// enough for `auto` to try the band order, whose breadth-first levels from a
// corner (cube shells) are wider than the natural order's planes. `auto`
// keeps the natural order and says why; `band` applies Scotch's and says that
// it widens the band.
TEST(LocalOrder, AutoKeepsNoOrderThatWidensTheBand) {
  if (!can_order()) GTEST_SKIP() << "built without Scotch";
  io::GeneratorSpec cube;
  cube.kind = io::GeneratorKind::fem_p1_3d;
  cube.nx = cube.ny = cube.nz = 6;
  const io::CsrRows one = io::generate_rows(cube, 0, 216);
  const int ranks = test::mpi_size(), cubes = std::max(1, ranks - 1);
  io::CsrRows whole;  // `cubes` copies of `one` on the diagonal
  whole.global_rows = whole.global_cols = 216 * cubes;
  whole.row_offsets.assign(1, 0);
  for (int c = 0; c < cubes; ++c)
    for (std::int64_t i = 0; i < 216; ++i) {
      for (std::int64_t k = one.row_offsets[i]; k < one.row_offsets[i + 1]; ++k) {
        whole.col_indices.push_back(216 * c + one.col_indices[k]);
        whole.values.push_back(one.values[k]);
      }
      whole.row_offsets.push_back(whole.nnz());
    }
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r) first[r + 1] = first[r] + (r == 1 ? 0 : 216);

  DistributedRows kept = from_whole(whole, RowPartition(first));
  const std::vector<std::int64_t> natural = kept.rows.col_indices;
  solver::distribute_rows(kept, PartitionMethod::contiguous, MPI_COMM_WORLD, LocalOrder::automatic);
  EXPECT_EQ(kept.local_order.used, LocalOrder::none);
  EXPECT_TRUE(kept.local_order.measured);
  EXPECT_GE(kept.local_order.before.profile_fraction, solver::kAutoProfileFraction);
  const std::string not_kept =
      "not kept: it narrows neither the bandwidth (" + std::to_string(kept.local_order.before.bandwidth) + " -> ";
  EXPECT_NE(kept.local_order.reason.find(not_kept), std::string::npos) << kept.local_order.reason;
  EXPECT_TRUE(kept.numbering.is_identity());
  EXPECT_EQ(kept.rows.col_indices, natural);

  DistributedRows band = from_whole(whole, RowPartition(first));
  solver::distribute_rows(band, PartitionMethod::contiguous, MPI_COMM_WORLD, LocalOrder::band);
  EXPECT_EQ(band.local_order.used, LocalOrder::band);
  EXPECT_EQ(band.local_order.reason, "as set, though it narrows neither the bandwidth nor the profile");
  EXPECT_EQ(band.local_order.before.bandwidth, kept.local_order.before.bandwidth);
  EXPECT_GT(band.local_order.after.bandwidth, band.local_order.before.bandwidth);
  EXPECT_GT(band.local_order.after.profile, band.local_order.before.profile);
  EXPECT_EQ(band.local_order.after.bandwidth, solver::band_stats(MPI_COMM_WORLD, band.rows).bandwidth);
  expect_sorted_rows(band.rows);
  expect_input_matrix(band, whole);
}

// Empty rows, and rank 1 (where there is one) with no rows, ordered by band
// on the contiguous split and after a graph partition.
TEST(LocalOrder, EmptyRowsAndARankWithoutRows) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const io::CsrRows whole = chain_with_empty_rows(64);
  const int ranks = test::mpi_size();
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) first[r] = 64 * r / ranks;
  if (ranks > 1) first[1] = 0;
  for (const PartitionMethod method : {PartitionMethod::contiguous, PartitionMethod::graph}) {
    DistributedRows m = from_whole(whole, RowPartition(first));
    solver::distribute_rows(m, method, MPI_COMM_WORLD, LocalOrder::band);
    EXPECT_EQ(m.local_order.used, LocalOrder::band);
    expect_numbering_round_trip(m);
    expect_input_matrix(m, whole);
  }
}

// Long rows (a power-law pattern made symmetric, rows up to ~400 entries)
// and short ones, ordered by band on the contiguous split and after a graph partition.
TEST(LocalOrder, LongRowsKeepTheirEntries) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const io::CsrRows power = test::power_law_matrix(500, 400, 11);
  std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
  for (std::int64_t i = 0; i < power.global_rows; ++i) {
    entries[{i, i}] += 500.0;
    for (std::int64_t k = power.row_offsets[i]; k < power.row_offsets[i + 1]; ++k) {
      entries[{i, power.col_indices[k]}] += power.values[k];
      entries[{power.col_indices[k], i}] += power.values[k];
    }
  }
  io::CsrRows whole;
  whole.global_rows = whole.global_cols = power.global_rows;
  whole.row_offsets.assign(1, 0);
  for (std::int64_t i = 0, at = 0; i < whole.global_rows; ++i) {
    for (auto e = entries.lower_bound({i, 0}); e != entries.end() && e->first.first == i; ++e, ++at) {
      whole.col_indices.push_back(e->first.second);
      whole.values.push_back(e->second);
    }
    whole.row_offsets.push_back(at);
  }
  for (const PartitionMethod method : {PartitionMethod::contiguous, PartitionMethod::graph}) {
    DistributedRows m = from_whole(whole, RowPartition::balanced(whole.row_offsets, test::mpi_size()));
    solver::distribute_rows(m, method, MPI_COMM_WORLD, LocalOrder::band);
    EXPECT_EQ(m.local_order.used, LocalOrder::band);
    expect_sorted_rows(m.rows);
    expect_input_matrix(m, whole);
  }
}

// RowNumbering::reordered: a second local permutation (here a reversal) on
// top of a graph partition's numbering, or of the identity.
TEST(LocalOrder, ReorderedNumberingComposes) {
  for (const PartitionMethod method : {PartitionMethod::contiguous, PartitionMethod::graph}) {
    if (method == PartitionMethod::graph && !can_partition()) continue;
    const DistributedRows m = load(grid3d(8, true), method, LocalOrder::none);
    const std::int64_t rows = m.rows.local_rows();
    std::vector<std::int64_t> position(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) position[i] = rows - 1 - i;
    const solver::RowNumbering reversed = m.numbering.reordered(MPI_COMM_WORLD, position);
    EXPECT_FALSE(reversed.is_identity());
    for (std::int64_t i = 0; i < rows; ++i) EXPECT_EQ(reversed.original_row(position[i]), m.numbering.original_row(i));
    // A block holding each row's input index comes back as the input's ranges, in order.
    std::vector<std::int64_t> original(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) original[i] = reversed.original_row(i);
    const std::vector<std::int64_t> back = reversed.to_original_rows(MPI_COMM_WORLD, original, 1);
    const int rank = test::mpi_rank();
    ASSERT_EQ(static_cast<std::int64_t>(back.size()), reversed.original().rows(rank));
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i], reversed.original().begin(rank) + std::int64_t(i));
    EXPECT_EQ(reversed.from_original_rows(MPI_COMM_WORLD, back, 1), original);
  }
}

// The messages of a build without Scotch's band ordering, in any build.
TEST(LocalOrder, WithoutScotchBandIsAnErrorAndAutoKeepsTheOrder) {
  solver::hide_band_order_for_tests(true);
  DistributedRows m = solver::load_distributed_rows(grid3d(10, true), MPI_COMM_WORLD);
  try {
    solver::distribute_rows(m, PartitionMethod::contiguous, MPI_COMM_WORLD, LocalOrder::band);
    ADD_FAILURE() << "band without Scotch was accepted";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("execution.local_order: band needs Scotch, which this build"),
              std::string::npos)
        << e.what();
  }
  solver::distribute_rows(m, PartitionMethod::contiguous, MPI_COMM_WORLD, LocalOrder::automatic);
  solver::hide_band_order_for_tests(false);
  EXPECT_EQ(m.local_order.used, LocalOrder::none);
  EXPECT_TRUE(m.numbering.is_identity());
  EXPECT_NE(m.local_order.reason.find("but this build has no Scotch"), std::string::npos) << m.local_order.reason;
}

}  // namespace
}  // namespace blockeigs
