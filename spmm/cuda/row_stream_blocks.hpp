// The work layout of row_split's n = 1 stream body (row_stream_spmv.cuh):
// runs of consecutive short rows sized for one thread block, long rows a
// block each, and very long rows cut into pieces of several blocks. Plain
// C++, so that the host tests include it with g++.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace blockeigs::spmm::cuda {

inline constexpr int row_stream_threads = 256;
// Loads a thread keeps in flight in the strided sums (long rows, pieces and
// the split rows' partials).
inline constexpr int row_stream_items = 4;
// Nonzeros a thread loads before storing its products, in a block of short
// rows: 6 for 4-byte values, 4 for 8-byte ones; 8 lost in both
// (docs/benchmarks/spmm.md#kernel-notes).
constexpr int row_stream_tile_items(int value_bytes) { return value_bytes == 4 ? 6 : 4; }
// A block of short rows holds at most this many nonzeros.
constexpr int row_stream_tile(int value_bytes) { return row_stream_threads * row_stream_tile_items(value_bytes); }
// Rows above this take a block alone: a group of at most 32 lanes would add
// more than 8 products a lane while the rest of its block waits.
inline constexpr int row_stream_long_row = 256;
// Rows above this are cut into pieces of at most this many nonzeros, a block
// each, so that no block walks more than four rounds of loads while the rest
// of the grid has finished (a power-law row of 100,000 nonzeros was one
// block's serial walk, longer than the whole multiply of the other rows).
inline constexpr int row_stream_piece = 4 * row_stream_items * row_stream_threads;

struct RowStreamLayout {
  // The first row of each block, then the row count. A block holds
  // consecutive rows, at most row_stream_threads of them and `tile`
  // nonzeros, or a single row longer than
  // row_stream_long_row (a split row's block does nothing: its pieces
  // below do the work).
  std::vector<std::int32_t> block_rows;
  // Pieces of the rows longer than row_stream_piece, in row order, each
  // row's pieces consecutive and of equal length (to one nonzero): the row
  // and first nonzero of each piece. A piece ends where the next piece of
  // its row starts, or at its row's end.
  std::vector<std::int32_t> piece_rows;
  std::vector<std::int32_t> piece_begins;
  // The split rows and where their pieces start in the lists above, then
  // the piece count (split_rows.size() + 1 entries).
  std::vector<std::int32_t> split_rows;
  std::vector<std::int32_t> split_first_piece{0};
  // The order the pieces are launched in: by their place in their row, then
  // by row (every split row's first piece, then every second piece, ...), so
  // that rows sharing their columns (a dense block of a few rows) read each
  // stretch of B while it is in L2 rather than once per row from DRAM
  // (docs/benchmarks/spmm.md#kernel-notes).
  std::vector<std::int32_t> piece_order;
};

// From the rows + 1 row offsets, for blocks of short rows of at most `tile`
// nonzeros (row_stream_tile of the value size).
inline RowStreamLayout row_stream_layout(const std::vector<std::int32_t>& row_offsets, int tile) {
  const auto rows = static_cast<std::int32_t>(row_offsets.size()) - 1;
  RowStreamLayout layout;
  std::vector<std::int32_t> place;  // each piece's place in its row
  layout.block_rows.push_back(0);
  auto length = [&](std::int32_t r) { return row_offsets[r + 1] - row_offsets[r]; };
  std::int32_t r = 0;
  while (r < rows) {
    if (length(r) > row_stream_long_row) {
      if (length(r) > row_stream_piece) {
        const std::int64_t l = length(r), pieces = (l + row_stream_piece - 1) / row_stream_piece;
        layout.split_rows.push_back(r);
        for (std::int64_t p = 0; p < pieces; ++p) {
          layout.piece_rows.push_back(r);
          layout.piece_begins.push_back(row_offsets[r] + static_cast<std::int32_t>(l * p / pieces));
          place.push_back(static_cast<std::int32_t>(p));
        }
        layout.split_first_piece.push_back(static_cast<std::int32_t>(layout.piece_rows.size()));
      }
      layout.block_rows.push_back(++r);  // a long row alone
      continue;
    }
    const std::int32_t start = r;
    while (r < rows && r - start < row_stream_threads) {
      if (length(r) > row_stream_long_row || row_offsets[r + 1] - row_offsets[start] > tile) break;
      ++r;
    }
    layout.block_rows.push_back(r);
  }
  layout.piece_order.resize(place.size());
  std::iota(layout.piece_order.begin(), layout.piece_order.end(), 0);
  std::stable_sort(layout.piece_order.begin(), layout.piece_order.end(),
                   [&](std::int32_t x, std::int32_t y) { return place[x] < place[y]; });
  return layout;
}

}  // namespace blockeigs::spmm::cuda
