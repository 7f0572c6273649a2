// execution.local_order at np 1-4: the band order narrows each rank's band
// after a graph partition or on a scattered contiguous split, keeps the
// ranges, the halo and the input's matrix, keeps no order that widens the
// band, and composes with the numbering; empty rows, a rank without rows,
// long rows, the same order at any number of threads.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
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

TEST(LocalOrder, BandAfterTheGraphPartitionNarrowsEachRanksBand) {
  if (!can_partition()) GTEST_SKIP() << "built without PT-Scotch";
  const DistributedRows kept = load(grid3d(16, true), PartitionMethod::graph, LocalOrder::none);
  EXPECT_EQ(kept.local_order.used, LocalOrder::none);
  EXPECT_FALSE(kept.local_order.measured);
  // The same distribution, then ordered as distribute_rows does with `auto`.
  DistributedRows band = kept;
  solver::order_rows_locally(band, LocalOrder::automatic, MPI_COMM_WORLD);
  ASSERT_EQ(band.local_order.used, LocalOrder::band);
  EXPECT_NE(band.local_order.orderer.find("reverse Cuthill-McKee"), std::string::npos) << band.local_order.orderer;
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
  EXPECT_EQ(scattered.local_order.used, LocalOrder::band);
  EXPECT_LT(scattered.local_order.after.profile_fraction, solver::kAutoProfileFraction);
  expect_input_matrix(scattered, io::generate_rows(config.generator, 0, 3600));
}

// A cube of 6^3 trilinear elements (26 neighbours a row) in its natural
// numbering on each rank (rank 1, where there is one, without rows): scattered
// enough for `auto` to try the band order, whose breadth-first levels from a
// corner (cube shells) are wider than the natural order's planes. `auto`
// keeps the natural order and says why; `band` applies it and says that
// it widens the band.
TEST(LocalOrder, AutoKeepsNoOrderThatWidensTheBand) {
  io::GeneratorSpec cube;
  cube.kind = io::GeneratorKind::fem_p1_3d;
  cube.nx = cube.ny = cube.nz = 6;
  const CsrRows one = io::generate_rows(cube, 0, 216);
  const int ranks = test::mpi_size(), cubes = std::max(1, ranks - 1);
  CsrRows whole;  // `cubes` copies of `one` on the diagonal
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
  const CsrRows whole = chain_with_empty_rows(64);
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
  const CsrRows power = test::power_law_matrix(500, 400, 11);
  std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
  for (std::int64_t i = 0; i < power.global_rows; ++i) {
    entries[{i, i}] += 500.0;
    for (std::int64_t k = power.row_offsets[i]; k < power.row_offsets[i + 1]; ++k) {
      entries[{i, power.col_indices[k]}] += power.values[k];
      entries[{power.col_indices[k], i}] += power.values[k];
    }
  }
  CsrRows whole;
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

}  // namespace
}  // namespace blockeigs
