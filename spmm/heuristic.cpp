#include "spmm/heuristic.hpp"
#include "spmm/cuda/row_stream_blocks.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace blockeigs::spmm::cuda {
namespace {

// ---------------------------------------------------------------------------
// TUNING TABLE: row_split or merge_based, per precision and block width.
// At n = 1, row_split where its stream body pays (row_stream_pays, below).
// Otherwise merge_based when rows < row_split_min_rows, or max_row > skew *
// mean_row, or mean_row < short_mean; row_split otherwise. A width n uses
// the first row with n <= max_n (n = 100 the row of 128). Fitted by
// bench/scripts/fit_heuristic.py: within 5% of our faster kernel in 96.1% / 96.9% of
// 1422 H100 cases, fp32 / fp64 (docs/benchmarks/spmm.md#heuristic-table).
// ---------------------------------------------------------------------------
constexpr double never = std::numeric_limits<double>::infinity();
struct Limits {
  double skew;        // merge_based when max_row > skew * mean_row
  double short_mean;  // merge_based when mean_row < short_mean
};
struct Rule {
  std::int64_t max_n;  // applies to n <= max_n (and above the previous row)
  Limits fp32;
  Limits fp64;
};
constexpr std::array<Rule, 10> rules = {{
    {1, {14, 0}, {14, 0}},     // n = 1:        fp32 72/79, fp64 76/79 within 5% (skewed rows now take
                               //               row_split's stream body first: row_stream_pays)
    {2, {14, 0}, {34, 0}},     // n = 2:        fp32 73/79, fp64 75/79
    {3, {24, 0}, {24, 0}},     // n = 3:        the general merge body, as fp64 n = 4
    {4, {34, 0}, {24, 0}},     // n = 4:        fp32 75/79, fp64 74/79
    {8, {120, 0}, {170, 0}},   // n = 5..8:     fp32 78/79, fp64 78/79
    {16, {120, 0}, {220, 0}},  // n = 9..16:    fp32 78/79, fp64 75/79
    {32, {170, 0}, {220, 0}},  // n = 17..32:   fp32 74/79, fp64 71/79
    {64, {14, 0}, {70, 0}},    // n = 33..64:   refitted for merge_segment_items, see below
    {128, {70, 3}, {50, 3}},   // n = 65..128:   fp64 refitted for the flat fix-up, see below
    {256, {50, 3}, {170, 0}},  // n = 129..256:  fp32 refitted for the flat fix-up
}};

// Fewer rows than this cannot keep the GPU busy with one row per group:
// merge_based (H100: dense 8k x 2k prefers row_split to n = 64, 2k x 8k merge
// from n = 4; docs/benchmarks/spmm.md#heuristic-min-rows).
constexpr std::int64_t row_split_min_rows = 4096;

// row_split_passes: rounds of U B-row loads per lane that row_split plans a
// mean row for, on regular rows only (longest <= regular_max_skew x mean).
// H100: up to 1.14x in geomean at fp32 n = 16 (docs/benchmarks/spmm.md#heuristic-passes).
constexpr double regular_max_skew = 3;
struct Passes {
  std::int64_t max_n;  // applies to n <= max_n (and above the previous row)
  double fp32, fp64;
};
constexpr std::array<Passes, 7> row_split_passes_table = {{
    {2, 1, 1},
    {4, 2, 1},
    {8, 2, 4},
    {16, 4, 8},
    {32, 8, 8},
    {64, 4, 1},
    {256, 1, 1},  // one column lane group a warp from here: no nonzero lanes to trade
}};

// Merge kernel segment sizes: 4 waves of 64 warps per SM, segments of 32 to
// 1024 items. Estimate, not measured; the segments for wide B rows below are.
constexpr int merge_waves = 4;
constexpr int merge_warps_per_sm = 64;
constexpr std::int64_t merge_min_items = 32;
constexpr std::int64_t merge_max_items = 1024;
// Shorter segments for wide B rows (merge_segment_items): rows a segment =
// max(8, 4 KB / row bytes) from n = 33. H100: merge_based 1.29x faster in
// geomean over 474 cases (docs/benchmarks/spmm.md#heuristic-segments).
constexpr std::int64_t merge_short_segments_min_width = 33;
constexpr double merge_segment_output_bytes = 4096;
constexpr double merge_segment_min_rows = 8;

// merge_uses_spmv_body: skew (longest row / mean) above which the SpMV body
// wins at n = 1 (and at n = 2 and 4). H200, fp64: it wins on every matrix of
// skew > 30, loses on every one < 9 (docs/benchmarks/spmm.md#heuristic-spmv-skew).
constexpr double merge_spmv_min_skew = 14;

// The SpMV body's own partition: 2 waves of its 32 resident warps per SM,
// boundaries snapped back by at most a quarter segment. H200: the 24 matrices of
// skew > 14 4.6% / 7.8% faster (docs/benchmarks/spmm.md#heuristic-spmv-partition).
constexpr int merge_spmv_waves = 2;
constexpr int merge_spmv_warps_per_sm = 32;
constexpr std::int64_t merge_spmv_slack_divisor = 4;

// merge_order_pays: rows of at least this many segments. H100: merge_based
// 1.2-4.9x faster where a row spans many segments and rows share their columns
// (docs/benchmarks/spmm.md#heuristic-merge-order).
constexpr double merge_order_min_segments_per_row = 4;

// Dense rows to merge_based (choose_algorithm): rows that cover at least half
// the columns and span merge_order's four segments, from 64-byte B rows.
// H100: dense_8kx2k 1.04-1.53x over row_split (docs/benchmarks/spmm.md#heuristic-dense-rows).
constexpr double dense_rows_min_density = 0.5;
constexpr std::int64_t dense_rows_merge_min_row_bytes = 64;

// row_stream_pays: n = 1 on skewed rows (skew >= 8, or >= 4 with short rows) or
// scattered columns. H100: 1.01-1.35x over the faster other body on all 24
// matrices of skew >= 13 (docs/benchmarks/spmm.md#heuristic-row-stream).
constexpr double row_stream_min_skew = 8;
constexpr double row_stream_min_skew_short_rows = 4;
constexpr double row_stream_short_row = 16;
constexpr double row_stream_min_scattered = 0.9;

// wide_unroll_pays: the Wide shapes (eight B rows in flight) at fp64 n = 16 and
// 32 on regular rows of moderate mean. H200: row_split 1.18-1.40x at n = 16
// (docs/benchmarks/spmm.md#heuristic-wide-unroll).
constexpr double wide_row_split_min_mean = 4.5;
constexpr double wide_row_split_max_mean_n16 = 16;
constexpr double wide_row_split_max_mean_n32 = 9;
constexpr double wide_row_split_max_skew = 8;
constexpr double wide_merge_min_mean = 3;

// row_split_chunk_batches: blocks of K batches a warp in row order, instead
// of the persistent grid, from 512-byte B rows. H100: 1.16-1.38x in geomean
// (docs/benchmarks/spmm.md#heuristic-chunk-batches).
constexpr std::int64_t chunked_min_row_bytes = 512;
constexpr std::int64_t chunked_wide_row_bytes = 1024;
constexpr int chunk_batches_narrow = 8;  // B rows of 512 to 1023 bytes
constexpr int chunk_batches_wide = 4;    // B rows of 1 KB and more
// Chunks only where they make this many waves of resident blocks: few-row
// matrices took up to 0.17x the persistent grid's time with chunks that fill
// a fraction of the device (docs/benchmarks/spmm.md#heuristic-chunk-waves).
constexpr std::int64_t chunked_min_waves = 2;
// Irregular long rows: mean >= 10, longest more than regular_max_skew and at
// most 100 times the mean: chunks from 128-byte B rows. H100: 1.21x in geomean
// over their 36 cases (docs/benchmarks/spmm.md#heuristic-long-rows).
constexpr std::int64_t chunked_long_rows_min_row_bytes = 128;
constexpr double chunked_long_mean = 10;
constexpr double chunked_very_long_mean = 64;
constexpr double chunked_max_skew = 100;
constexpr int chunk_batches_very_long = 2;
// Balance: K is halved while the heaviest warp is above an even share and
// halving cuts it by a quarter or more. H100: vsp_befref 1.25-1.96x at
// 512-2048-byte rows (docs/benchmarks/spmm.md#heuristic-balance).
constexpr std::int64_t balanced_chunks_min_row_bytes = 512;
constexpr double balanced_chunks_min_cut = 0.75;

// column_slab: split B and C into column slabs where B's band of rows (mean
// span) outgrows 0.4 of L2, rows of mean >= 5. H100: 18 cases 1.04-1.66x
// faster and none 3% slower (docs/benchmarks/spmm.md#heuristic-column-slab).
constexpr double slab_l2_share = 0.4;
constexpr double slab_min_mean = 5;
constexpr std::array<std::int64_t, 2> slab_row_bytes = {512, 256};  // widest first

// The row of a width table for n: the first with n <= max_n, the last above them all.
template <class Row, std::size_t N>
const Row& row_for_width(const std::array<Row, N>& table, std::int64_t n) {
  for (const Row& r : table)
    if (n <= r.max_n) return r;
  return table.back();
}

// The longest row at most regular_max_skew times the mean.
bool regular_rows(const RowShape& shape) { return shape.max <= regular_max_skew * shape.mean; }

}  // namespace

int row_split_chunk_batches(std::int64_t n, Precision precision, const RowShape& shape, std::int64_t blocks,
                            std::int64_t resident, int rows_per_warp) {
  const std::int64_t row_bytes = n * (precision == Precision::fp32 ? 4 : 8);
  const bool irregular_long =
      shape.mean >= chunked_long_mean && !regular_rows(shape) && shape.max <= chunked_max_skew * shape.mean;
  int chunk = 0;
  if (row_bytes >= chunked_min_row_bytes) {
    chunk = irregular_long && shape.mean >= chunked_very_long_mean ? chunk_batches_very_long
            : row_bytes < chunked_wide_row_bytes                   ? chunk_batches_narrow
                                                                   : chunk_batches_wide;
  } else if (row_bytes >= chunked_long_rows_min_row_bytes && irregular_long) {
    chunk = chunk_batches_narrow;
  }
  if (chunk > 0 && row_bytes >= balanced_chunks_min_row_bytes && rows_per_warp == 1) {
    const double share = shape.mean * double(shape.rows) / (double(resident) * row_split_block_warps);
    const double* heaviest = shape.heaviest_warp;
    for (int c = std::countr_zero(unsigned(chunk));
         c > 0 && heaviest[c] > share && heaviest[c - 1] <= balanced_chunks_min_cut * heaviest[c]; --c)
      chunk /= 2;
  }
  return chunk > 0 && blocks >= chunk * chunked_min_waves * resident ? chunk : 0;
}

RowShape row_shape_host(const std::int32_t* row_offsets, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                        const std::int32_t* col_indices) {
  RowShape shape{rows, rows > 0 ? double(nnz) / double(rows) : 0.0, 0.0, cols};
  if (rows == 0 || nnz == 0) return shape;
  if (col_indices) {
    std::int64_t followers = 0, moved = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = std::int64_t(row_offsets[i]) + 1; j < row_offsets[i + 1]; ++j) {
        ++followers;
        moved += (col_indices[j] >> scattered_group_log2) != (col_indices[j - 1] >> scattered_group_log2);
      }
    shape.scattered = followers > 0 ? double(moved) / double(followers) : 0.0;
    std::int64_t span_sum = 0, nonempty = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
      if (row_offsets[i] == row_offsets[i + 1]) continue;
      const auto [low, high] = std::minmax_element(col_indices + row_offsets[i], col_indices + row_offsets[i + 1]);
      span_sum += std::int64_t(*high) - *low + 1;
      ++nonempty;
    }
    shape.span = nonempty > 0 ? double(span_sum) / double(nonempty) : 0.0;
  }
  constexpr int W = row_split_block_warps;
  for (int c = 0; c < chunk_sizes; ++c) {
    const std::int64_t chunk_rows = std::int64_t(W) << c;
    std::int64_t heaviest = 0;
    for (std::int64_t first = 0; first < rows; first += chunk_rows)
      for (std::int64_t w = 0; w < W; ++w) {
        std::int64_t sum = 0;
        for (std::int64_t i = first + w; i < std::min(rows, first + chunk_rows); i += W)
          sum += row_offsets[i + 1] - row_offsets[i];
        heaviest = std::max(heaviest, sum);
      }
    shape.heaviest_warp[c] = double(heaviest);
  }
  shape.max = shape.heaviest_warp[0];
  return shape;
}

bool merge_uses_spmv_body(const RowShape& shape) { return shape.max > merge_spmv_min_skew * shape.mean; }

bool wide_unroll_pays(Algorithm algorithm, const RowShape& shape, int column_lanes) {
  if (algorithm == Algorithm::merge_based) return shape.mean >= wide_merge_min_mean;
  const double max_mean = column_lanes <= 8 ? wide_row_split_max_mean_n16 : wide_row_split_max_mean_n32;
  return shape.mean >= wide_row_split_min_mean && shape.mean <= max_mean &&
         shape.max <= wide_row_split_max_skew * shape.mean;
}

bool row_stream_pays(const RowShape& shape) {
  if (shape.mean > row_stream_piece) return true;  // few long rows, in pieces
  if (shape.rows < row_split_min_rows || shape.mean <= 0) return false;
  const double skew = shape.max / shape.mean;
  return skew >= row_stream_min_skew ||
         (skew >= row_stream_min_skew_short_rows && shape.mean <= row_stream_short_row) ||
         shape.scattered >= row_stream_min_scattered;
}

Algorithm choose_algorithm(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors,
                           int reals_per_column) {
  if (n == 1 && row_stream_pays(shape)) return Algorithm::row_split;  // the stream body runs on columns
  n *= reals_per_column;                                              // the rest by a B row's values
  if (shape.rows < row_split_min_rows) return Algorithm::merge_based;
  const std::int64_t row_bytes = n * (precision == Precision::fp32 ? 4 : 8);
  if (multiprocessors > 0 && shape.cols > 0 && shape.mean >= dense_rows_min_density * double(shape.cols) &&
      row_bytes >= dense_rows_merge_min_row_bytes) {
    const auto nnz = static_cast<std::int64_t>(std::llround(shape.mean * double(shape.rows)));
    if (merge_order_pays(shape, merge_items_per_segment(shape.rows, nnz, multiprocessors)))
      return Algorithm::merge_based;
  }
  const Rule& rule = row_for_width(rules, n);
  const Limits& limits = precision == Precision::fp32 ? rule.fp32 : rule.fp64;
  const bool skewed = shape.max > limits.skew * shape.mean;  // false for skew = never
  return skewed || shape.mean < limits.short_mean ? Algorithm::merge_based : Algorithm::row_split;
}

std::int64_t column_slab(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors,
                         std::size_t l2_bytes, int reals_per_column) {
  const std::int64_t value_bytes = (precision == Precision::fp32 ? 4 : 8) * reals_per_column;  // a column's
  const double band_budget = slab_l2_share * double(l2_bytes);
  if (shape.span <= 0 || shape.mean < slab_min_mean || shape.span * double(n * value_bytes) <= band_budget ||
      choose_algorithm(shape, n, precision, multiprocessors, reals_per_column) != Algorithm::row_split)
    return n;
  for (const std::int64_t bytes : slab_row_bytes) {
    const std::int64_t width = bytes / value_bytes;
    if (width < n && shape.span * double(bytes) <= band_budget &&
        choose_algorithm(shape, width, precision, multiprocessors, reals_per_column) == Algorithm::row_split)
      return width;
  }
  return n;
}

int nonzero_lanes(double mean_row_length, int column_lanes, int unroll, double passes) {
  const int max_lanes = std::max(1, 32 / std::max(1, column_lanes));
  int lanes = 1;
  while (lanes < max_lanes && mean_row_length > passes * unroll * lanes) lanes *= 2;
  return lanes;
}

double row_split_passes(const RowShape& shape, std::int64_t n, Precision precision) {
  if (!regular_rows(shape)) return 1;
  const Passes& p = row_for_width(row_split_passes_table, n);
  return precision == Precision::fp32 ? p.fp32 : p.fp64;
}

std::int64_t merge_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors) {
  const std::int64_t target_segments =
      std::max<std::int64_t>(1, std::int64_t(merge_waves) * merge_warps_per_sm * std::max(1, multiprocessors));
  const std::int64_t wanted = (rows + nnz + target_segments - 1) / target_segments;
  std::int64_t items = merge_min_items;
  while (items < wanted && items < merge_max_items) items *= 2;
  return items;
}

std::int64_t merge_segment_items(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors) {
  const auto nnz = static_cast<std::int64_t>(std::llround(shape.mean * double(shape.rows)));
  const std::int64_t items = merge_items_per_segment(shape.rows, nnz, multiprocessors);
  if (n < merge_short_segments_min_width) return items;
  const std::int64_t row_bytes = n * (precision == Precision::fp32 ? 4 : 8);
  const double rows = std::max(merge_segment_min_rows, merge_segment_output_bytes / double(row_bytes));
  const double wanted = (shape.mean + 1) * rows;
  // The nearest power of two (by ratio), within [merge_min_items, items].
  std::int64_t shorter = merge_min_items;
  while (shorter < items && double(shorter) * std::sqrt(2.0) < wanted) shorter *= 2;
  return std::min(shorter, items);
}

bool merge_order_pays(const RowShape& shape, std::int64_t items) {
  return regular_rows(shape) && shape.mean >= merge_order_min_segments_per_row * double(items);
}

std::int64_t merge_spmv_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors) {
  const std::int64_t warps = std::int64_t(merge_spmv_waves) * merge_spmv_warps_per_sm * std::max(1, multiprocessors);
  return std::max<std::int64_t>(merge_spmv_max_chunk_items, (rows + nnz + warps - 1) / warps);
}

std::int64_t merge_spmv_slack(std::int64_t items) { return items / merge_spmv_slack_divisor; }

}  // namespace blockeigs::spmm::cuda
