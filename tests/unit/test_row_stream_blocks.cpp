// The layout of row_split's n = 1 stream body (spmm/cuda/row_stream_blocks.hpp):
// every row in exactly one block, in order; no block over its thread or
// nonzero budget; rows over the long-row limit alone; runs of empty rows cut
// at the thread budget; rows over the piece length cut into equal pieces
// that cover the row exactly, launched by their place in the row.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spmm/cuda/row_stream_blocks.hpp"

namespace blockeigs {
namespace {

using spmm::cuda::row_stream_layout;
using spmm::cuda::row_stream_long_row;
using spmm::cuda::row_stream_piece;
using spmm::cuda::row_stream_threads;
using spmm::cuda::row_stream_tile;
using spmm::cuda::RowStreamLayout;

// The tiles of fp32 (1536 nonzeros) and fp64 (1024).
constexpr int tiles[] = {row_stream_tile(4), row_stream_tile(8)};
constexpr int fp64_tile = row_stream_tile(8);

std::vector<std::int32_t> offsets_of(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> offsets{0};
  for (std::int32_t l : lengths) offsets.push_back(offsets.back() + l);
  return offsets;
}

void expect_valid_layout(const std::vector<std::int32_t>& lengths, int tile) {
  SCOPED_TRACE("tile " + std::to_string(tile));
  const std::vector<std::int32_t> offsets = offsets_of(lengths);
  const RowStreamLayout layout = row_stream_layout(offsets, tile);
  const std::vector<std::int32_t>& first = layout.block_rows;
  const auto rows = static_cast<std::int32_t>(lengths.size());
  ASSERT_GE(first.size(), 1u);
  EXPECT_EQ(first.front(), 0);
  EXPECT_EQ(first.back(), rows);
  std::vector<std::int32_t> expected_split;
  for (std::size_t b = 0; b + 1 < first.size(); ++b) {
    const std::int32_t r0 = first[b], r1 = first[b + 1];
    ASSERT_LT(r0, r1) << "block " << b << " is empty";
    if (r1 - r0 == 1 && lengths[r0] > row_stream_long_row) {  // a long row alone
      if (lengths[r0] > row_stream_piece) expected_split.push_back(r0);
      continue;
    }
    EXPECT_LE(r1 - r0, row_stream_threads) << "block " << b;
    EXPECT_LE(offsets[r1] - offsets[r0], tile) << "block " << b;
    for (std::int32_t r = r0; r < r1; ++r) EXPECT_LE(lengths[r], row_stream_long_row) << "row " << r;
  }
  // The split rows are exactly the rows over the piece length; each row's
  // pieces start at its first nonzero, ascend, differ in length by at most
  // one, are no longer than row_stream_piece and end at the row's end.
  ASSERT_EQ(layout.split_rows, expected_split);
  ASSERT_EQ(layout.split_first_piece.size(), layout.split_rows.size() + 1);
  ASSERT_EQ(layout.piece_rows.size(), layout.piece_begins.size());
  EXPECT_EQ(layout.split_first_piece.front(), 0);
  EXPECT_EQ(std::size_t(layout.split_first_piece.back()), layout.piece_rows.size());
  for (std::size_t i = 0; i < layout.split_rows.size(); ++i) {
    const std::int32_t row = layout.split_rows[i];
    const std::int32_t p0 = layout.split_first_piece[i], p1 = layout.split_first_piece[i + 1];
    ASSERT_GE(p1 - p0, 2) << "row " << row;
    EXPECT_EQ(layout.piece_begins[p0], offsets[row]) << "row " << row;
    std::int32_t shortest = INT32_MAX, longest = 0;
    for (std::int32_t p = p0; p < p1; ++p) {
      EXPECT_EQ(layout.piece_rows[p], row);
      const std::int32_t end = p + 1 < p1 ? layout.piece_begins[p + 1] : offsets[row + 1];
      shortest = std::min(shortest, end - layout.piece_begins[p]);
      longest = std::max(longest, end - layout.piece_begins[p]);
    }
    EXPECT_LE(longest, row_stream_piece) << "row " << row;
    EXPECT_LE(longest - shortest, 1) << "row " << row;
  }
  // The launch order: every piece once, by its place in its row, then by row.
  ASSERT_EQ(layout.piece_order.size(), layout.piece_rows.size());
  std::vector<std::int32_t> place(layout.piece_rows.size()), seen(layout.piece_rows.size(), 0);
  for (std::size_t i = 0; i < layout.split_rows.size(); ++i)
    for (std::int32_t p = layout.split_first_piece[i]; p < layout.split_first_piece[i + 1]; ++p)
      place[p] = p - layout.split_first_piece[i];
  for (std::size_t k = 0; k < layout.piece_order.size(); ++k) {
    const std::int32_t p = layout.piece_order[k];
    ASSERT_TRUE(p >= 0 && std::size_t(p) < seen.size()) << k;
    EXPECT_EQ(seen[p]++, 0) << "piece " << p << " launched twice";
    if (k == 0) continue;
    const std::int32_t q = layout.piece_order[k - 1];
    EXPECT_TRUE(place[q] < place[p] || (place[q] == place[p] && layout.piece_rows[q] < layout.piece_rows[p])) << k;
  }
}

TEST(RowStreamLayout, TilesOfEachPrecision) {
  EXPECT_EQ(row_stream_tile(4), 1536);
  EXPECT_EQ(row_stream_tile(8), 1024);
  EXPECT_GE(row_stream_piece, row_stream_tile(4));  // a split row never fits a tile
}

TEST(RowStreamLayout, EmptyAndSingleRows) {
  for (const int tile : tiles) {
    EXPECT_EQ(row_stream_layout({0}, tile).block_rows, std::vector<std::int32_t>({0}));
    EXPECT_EQ(row_stream_layout({0, 5}, tile).block_rows, std::vector<std::int32_t>({0, 1}));
    const RowStreamLayout one_long = row_stream_layout({0, 5000}, tile);
    EXPECT_EQ(one_long.block_rows, std::vector<std::int32_t>({0, 1}));
    EXPECT_EQ(one_long.split_rows, std::vector<std::int32_t>({0}));
    EXPECT_EQ(one_long.piece_begins, std::vector<std::int32_t>({0, 2500}));
    EXPECT_TRUE(row_stream_layout({0, row_stream_piece}, tile).split_rows.empty());  // at the limit: one block
  }
}

TEST(RowStreamLayout, LongRowsStandAlone) {
  // 10 short rows, a long one, 10 short ones: three blocks.
  for (const int tile : tiles) {
    std::vector<std::int32_t> lengths(21, 3);
    lengths[10] = row_stream_long_row + 1;
    EXPECT_EQ(row_stream_layout(offsets_of(lengths), tile).block_rows, std::vector<std::int32_t>({0, 10, 11, 21}));
    lengths[10] = row_stream_long_row;  // at the limit it streams with the others
    EXPECT_EQ(row_stream_layout(offsets_of(lengths), tile).block_rows, std::vector<std::int32_t>({0, 21}));
  }
}

TEST(RowStreamLayout, ThreadAndNonzeroBudgets) {
  for (const int tile : tiles) {
    // 1000 empty rows: blocks of exactly row_stream_threads rows.
    EXPECT_EQ(row_stream_layout(offsets_of(std::vector<std::int32_t>(1000, 0)), tile).block_rows,
              std::vector<std::int32_t>({0, 256, 512, 768, 1000}));
    expect_valid_layout(std::vector<std::int32_t>(1000, 0), tile);
  }
  // Rows of 100: ten fit fp64's tile of 1024 and fifteen fp32's of 1536,
  // the next one does not.
  EXPECT_EQ(row_stream_layout(offsets_of(std::vector<std::int32_t>(25, 100)), fp64_tile).block_rows,
            std::vector<std::int32_t>({0, 10, 20, 25}));
  EXPECT_EQ(row_stream_layout(offsets_of(std::vector<std::int32_t>(25, 100)), row_stream_tile(4)).block_rows,
            std::vector<std::int32_t>({0, 15, 25}));
}

TEST(RowStreamLayout, SplitRowsInEqualPieces) {
  // A row of 3 * 4096 + 2 nonzeros in 4 pieces, one of 4097 in 2; short
  // rows, an empty one and a long unsplit row around them.
  std::vector<std::int32_t> lengths{7, 3 * row_stream_piece + 2, 0, 5, row_stream_piece + 1, 300, 2};
  for (const int tile : tiles) {
    const RowStreamLayout layout = row_stream_layout(offsets_of(lengths), tile);
    EXPECT_EQ(layout.split_rows, std::vector<std::int32_t>({1, 4}));
    EXPECT_EQ(layout.split_first_piece, std::vector<std::int32_t>({0, 4, 6}));
    EXPECT_EQ(layout.piece_order, std::vector<std::int32_t>({0, 4, 1, 5, 2, 3}));  // first pieces, then second, ...
    expect_valid_layout(lengths, tile);
  }
}

TEST(RowStreamLayout, RandomSkewedRows) {
  std::mt19937_64 engine(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::int32_t> lengths(1 + engine() % 5000);
    for (auto& l : lengths) {
      const auto u = engine() % 1000;
      l = u < 200   ? 0
          : u < 950 ? std::int32_t(1 + engine() % 12)
          : u < 995 ? std::int32_t(engine() % 3000)
                    : std::int32_t(engine() % 40000);
    }
    for (const int tile : tiles) expect_valid_layout(lengths, tile);
  }
}

}  // namespace
}  // namespace blockeigs
