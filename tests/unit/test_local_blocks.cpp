// The split of a rank's rows into the diagonal and off-diagonal blocks,
// checked against a direct dense reading of the rows on awkward shapes:
// rows with only remote columns, empty rows, no diagonal entry, columns on
// both sides of the rank's range, an empty rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "solver/operator/local_blocks.hpp"
#include "test_matrices.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::solver::LocalBlocks;

CsrRows random_rows(std::int64_t n, std::int64_t first, std::int64_t m, std::uint64_t seed) {
  return blockeigs::test::random_local_rows(n, first, m, seed);
}

template <class T>
void check_split(const CsrRows& rows) {
  const LocalBlocks<T> b = blockeigs::solver::split_local_rows<T>(rows);
  const std::int64_t m = rows.local_rows(), begin = rows.first_row;
  const auto D = b.diagonal.view();
  const auto O = b.off_diagonal.view();
  ASSERT_EQ(D.rows, m);
  ASSERT_EQ(O.rows, static_cast<std::int64_t>(b.off_diagonal_rows.size()));
  ASSERT_EQ(O.cols, static_cast<std::int64_t>(b.halo_columns.size()));
  for (std::size_t h = 1; h < b.halo_columns.size(); ++h) ASSERT_LT(b.halo_columns[h - 1], b.halo_columns[h]);
  std::int64_t r = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    // The row as the blocks give it back, in global columns.
    std::vector<std::pair<std::int64_t, T>> got;
    for (std::int32_t k = D.row_offsets[i]; k < D.row_offsets[i + 1]; ++k)
      got.push_back({begin + D.col_indices[k], D.values[k]});
    if (r < O.rows && b.off_diagonal_rows.data()[r] == i) {
      ASSERT_LT(O.row_offsets[r], O.row_offsets[r + 1]) << "an off-diagonal row without entries";
      for (std::int32_t k = O.row_offsets[r]; k < O.row_offsets[r + 1]; ++k)
        got.push_back({b.halo_columns[O.col_indices[k]], O.values[k]});
      ++r;
    }
    std::sort(got.begin(), got.end());
    std::vector<std::pair<std::int64_t, T>> want;
    T diagonal = 0;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      want.push_back({rows.col_indices[k], static_cast<T>(rows.values[k])});
      if (rows.col_indices[k] == begin + i) diagonal = static_cast<T>(rows.values[k]);
    }
    EXPECT_EQ(got, want) << "row " << i;
    EXPECT_EQ(b.diagonal_entries.data()[i], diagonal) << "row " << i;
    for (std::int32_t k = D.row_offsets[i] + 1; k < D.row_offsets[i + 1]; ++k)
      EXPECT_LT(D.col_indices[k - 1], D.col_indices[k]) << "row " << i << " unsorted";
  }
  EXPECT_EQ(r, O.rows);
  const auto shape = blockeigs::solver::local_block_shape(rows);
  EXPECT_EQ(shape.halo_columns, b.halo_columns);
  EXPECT_EQ(shape.diagonal_nnz, D.nnz);
  EXPECT_EQ(shape.off_diagonal_nnz, O.nnz);
  EXPECT_EQ(shape.off_diagonal_rows, O.rows);
}

TEST(LocalBlocks, MiddleRangeMatchesTheRows) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    check_split<double>(random_rows(200, 60, 70, seed));
    check_split<float>(random_rows(200, 60, 70, seed));
  }
}

TEST(LocalBlocks, FirstAndLastRanges) {
  check_split<double>(random_rows(50, 0, 17, 4));
  check_split<double>(random_rows(50, 33, 17, 5));
}

TEST(LocalBlocks, WholeMatrixHasNoHalo) {
  const CsrRows rows = random_rows(40, 0, 40, 6);
  const auto b = blockeigs::solver::split_local_rows<double>(rows);
  EXPECT_TRUE(b.halo_columns.empty());
  EXPECT_EQ(b.off_diagonal.rows(), 0);
  check_split<double>(rows);
}

TEST(LocalBlocks, OnlyRemoteColumnsAndEmptyRank) {
  CsrRows rows;
  rows.global_rows = rows.global_cols = 10;
  rows.first_row = 4;
  rows.row_offsets = {0, 2, 2, 3};  // row 4: columns 0 and 9; row 5 empty; row 6: column 3
  rows.col_indices = {0, 9, 3};
  rows.values = {1, 2, 3};
  check_split<double>(rows);
  CsrRows none;
  none.global_rows = none.global_cols = 10;
  none.first_row = 10;
  none.row_offsets = {0};
  check_split<double>(none);
}

}  // namespace
