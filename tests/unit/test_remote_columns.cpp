// RemoteColumns (solver/operator/partition/renumber_columns.hpp): the
// distinct columns of a rank's rows outside its range, ascending, and the
// position of each, through the bitmap (many entries for the columns) and
// through the sorted list (few entries for very many columns); and sort_row
// on short and long rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/csr_rows.hpp"
#include "solver/operator/partition/renumber_columns.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::solver::RemoteColumns;

// `rows` rows of `per_row` random distinct columns of [0, cols), sorted in each row.
CsrRows random_rows(std::int64_t rows, std::int64_t per_row, std::int64_t cols, unsigned seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::int64_t> column(0, cols - 1);
  CsrRows m;
  m.global_rows = rows;
  m.global_cols = cols;
  m.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < rows; ++i) {
    std::vector<std::int64_t> row;
    while (static_cast<std::int64_t>(row.size()) < per_row) {
      const std::int64_t j = column(random);
      if (std::find(row.begin(), row.end(), j) == row.end()) row.push_back(j);
    }
    std::sort(row.begin(), row.end());
    m.col_indices.insert(m.col_indices.end(), row.begin(), row.end());
    m.values.resize(m.col_indices.size(), 1.0);
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

void expect_remote_columns(const CsrRows& rows, std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> expected;
  for (const std::int64_t j : rows.col_indices)
    if (j < begin || j >= end) expected.push_back(j);
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  const RemoteColumns remote(rows, begin, end);
  ASSERT_EQ(remote.columns(), expected);
  for (std::size_t p = 0; p < expected.size(); ++p) EXPECT_EQ(remote.position(expected[p]), std::int64_t(p));
}

TEST(SetBits, CountsEveryBit) {
  std::mt19937_64 random(7);
  for (int n = 0; n < 1000; ++n) {
    const std::uint64_t word = n < 64 ? std::uint64_t{1} << n : random() & random();
    EXPECT_EQ(blockeigs::solver::set_bits(word), __builtin_popcountll(word)) << word;
  }
  EXPECT_EQ(blockeigs::solver::set_bits(~std::uint64_t{0}), 64);
  EXPECT_EQ(blockeigs::solver::set_bits(0), 0);
}

TEST(RemoteColumns, ManyEntriesForTheColumnsThroughTheBitmap) {
  // 2000 entries on 1000 columns, the range in the middle and at either end; columns at word edges.
  CsrRows rows = random_rows(400, 5, 1000, 3);
  rows.col_indices[0] = 0;
  rows.col_indices[rows.nnz() - 1] = 999;
  for (const auto& [begin, end] : {std::pair{300, 500}, std::pair{0, 64}, std::pair{936, 1000}, std::pair{0, 0}})
    expect_remote_columns(rows, begin, end);
}

TEST(RemoteColumns, FewEntriesForVeryManyColumnsThroughTheSortedList) {
  const CsrRows rows = random_rows(10, 3, std::int64_t{1} << 40, 5);  // a bitmap would take 256 GiB
  expect_remote_columns(rows, 0, 1 << 20);
}

TEST(RemoteColumns, NoRowsNoColumns) {
  CsrRows rows;
  rows.global_rows = rows.global_cols = 100;
  rows.row_offsets = {0};
  const RemoteColumns remote(rows, 0, 0);
  EXPECT_TRUE(remote.columns().empty());
}

TEST(SortRow, ShortAndLongRowsComeSortedWithTheirValues) {
  std::vector<std::pair<std::int64_t, double>> scratch;
  for (const std::int64_t length : {0, 1, 7, 16, 17, 32, 33, 300}) {
    std::vector<std::int64_t> cols(static_cast<std::size_t>(length));
    std::vector<double> values(cols.size());
    for (std::int64_t k = 0; k < length; ++k) {  // descending columns, each value 0.5 x its column
      cols[k] = 3 * (length - k);
      values[k] = 1.5 * double(length - k);
    }
    blockeigs::solver::sort_row(cols.data(), values.data(), length, scratch);
    for (std::int64_t k = 0; k < length; ++k) {
      EXPECT_EQ(cols[k], 3 * (k + 1)) << "length " << length << ", entry " << k;
      EXPECT_EQ(values[k], 0.5 * double(cols[k])) << "length " << length << ", entry " << k;
    }
  }
}

}  // namespace
