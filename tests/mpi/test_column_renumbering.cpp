// ColumnRenumbering (solver/operator/partition/renumber_columns.hpp): the new
// index of every column of a rank's rows, its own rows' from its part of the
// numbering and the others' asked of their owners; looked up in an int32
// table where every new index fits, else in int64; through the bitmap (many
// entries) and the sorted list (few entries for many columns); with a rank
// that holds no rows.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "distributed_fixtures.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/partition/renumber_columns.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs {
namespace {

constexpr std::int64_t n = 3000;

// Rows split evenly over all ranks but the last, which holds none (one rank: all of them).
solver::RowPartition partition_with_an_empty_rank() {
  const int ranks = test::mpi_size(), holding = std::max(1, ranks - 1);
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, n);
  for (int r = 0; r < holding; ++r) first[r] = r * n / holding;
  return solver::RowPartition(first);
}

// This rank's rows: each row holds each column with probability `density` (the same on every rank), sorted.
CsrRows rows_of(const solver::RowPartition& partition, double density) {
  const int rank = test::mpi_rank();
  std::mt19937_64 random(7);
  std::bernoulli_distribution take(density);
  CsrRows rows;
  rows.global_rows = rows.global_cols = n;
  rows.first_row = partition.begin(rank);
  rows.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const bool mine = i >= partition.begin(rank) && i < partition.end(rank);
    for (std::int64_t j = 0; j < n; ++j)
      if (take(random) && mine) {
        rows.col_indices.push_back(j);
        rows.values.push_back(1.0);
      }
    if (mine) rows.row_offsets.push_back(rows.nnz());
  }
  return rows;
}

// Every column's new index: a random permutation (the same on every rank) plus `offset`.
void expect_renumbered(double density, std::int64_t offset) {
  const solver::RowPartition partition = partition_with_an_empty_rank();
  const CsrRows rows = rows_of(partition, density);
  std::vector<std::int64_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), std::int64_t{0});
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(3));
  const int rank = test::mpi_rank();
  std::vector<std::int64_t> renumbered;
  for (std::int64_t i = partition.begin(rank); i < partition.end(rank); ++i)
    renumbered.push_back(permutation[i] + offset);
  const solver::ColumnRenumbering columns(MPI_COMM_WORLD, rows, partition, renumbered);
  int wrong = 0;
  for (const std::int64_t j : rows.col_indices) wrong += columns(j) != permutation[j] + offset;
  EXPECT_EQ(wrong, 0) << "density " << density << ", offset " << offset;
  // renumber() copies a row with its columns renumbered.
  if (rows.nnz() > 0) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(rows.nnz()));
    std::vector<double> values(out.size());
    columns.renumber(rows.col_indices.data(), rows.values.data(), rows.nnz(), out.data(), values.data());
    EXPECT_EQ(out[0], permutation[rows.col_indices[0]] + offset);
    EXPECT_EQ(out.back(), permutation[rows.col_indices.back()] + offset);
  }
}

TEST(ColumnRenumbering, ManyEntriesThroughTheBitmapInAnInt32Table) { expect_renumbered(0.02, 0); }

TEST(ColumnRenumbering, NewIndicesPastInt32InAnInt64Table) {
  expect_renumbered(0.02, std::int64_t{3} << 30);
  expect_renumbered(0.02, std::int64_t{1} << 31);  // the first index past int32
}

TEST(ColumnRenumbering, FewEntriesForManyColumnsThroughTheSortedList) {
  expect_renumbered(0.00002, 0);
  expect_renumbered(0.00002, std::int64_t{3} << 30);
}

}  // namespace
}  // namespace blockeigs
