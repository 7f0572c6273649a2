#include "spmm/cuda/heuristic.hpp"

#include <algorithm>
#include <array>

namespace blockeigs::spmm::cuda {
namespace {

// ---------------------------------------------------------------------------
// TUNING TABLE -- to be re-fitted from spmm-bench on H100/H200
// (spmm-bench --csv results.csv; python3 scripts/fit_heuristic.py results.csv).
//
// merge_based when the mean row length is below the threshold, row_split
// otherwise. Starting point: Yang, Buluc and Owens (Euro-Par 2018), whose
// measured crossover on their K40c setup was a mean row length of 9.35 for
// every n. Each constant gets a comment with the measurement behind it
// (device, commit, date, cases) when it is re-fitted.
// ---------------------------------------------------------------------------
struct Threshold {
  std::int64_t max_n;  // applies to n <= max_n (and above the previous row)
  double fp32;         // mean row length below which merge_based wins
  double fp64;
};
constexpr std::array<Threshold, 5> merge_below = {{
    {1, 9.35, 9.35},    // SpMV       -- paper's rule, not yet measured on Hopper
    {4, 9.35, 9.35},    // n = 2..4   -- paper's rule, not yet measured on Hopper
    {16, 9.35, 9.35},   // n = 5..16  -- paper's rule, not yet measured on Hopper
    {64, 9.35, 9.35},   // n = 17..64 -- paper's rule, not yet measured on Hopper
    {256, 9.35, 9.35},  // n >= 65    -- paper's rule, not yet measured on Hopper
}};

// Fewer rows than this cannot keep an H100 busy with one row per group (132
// SMs x 64 warps x 2 waves, a row per warp for wide blocks): merge_based.
// Estimate, not yet measured.
constexpr std::int64_t row_split_min_rows = 16384;

// GK: rounds of U B-row loads per lane for a mean row. 1 keeps each lane's
// share of a row in one round of loads (a row costs one load latency) while
// packing as many rows per warp as possible. Estimate, not yet measured.
constexpr double passes_per_row = 1.0;

// Merge kernel segment sizes: 4 waves of 64 warps per SM, segments of 32 to
// 1024 items. Estimate, not yet measured.
constexpr int merge_waves = 4;
constexpr int merge_warps_per_sm = 64;
constexpr std::int64_t merge_min_items = 32;
constexpr std::int64_t merge_max_items = 1024;

}  // namespace

Algorithm choose_algorithm(double mean_row_length, std::int64_t n, Precision precision,
                           std::int64_t rows) {
  if (rows < row_split_min_rows) return Algorithm::merge_based;
  const Threshold* row = &merge_below.back();
  for (const Threshold& t : merge_below)
    if (n <= t.max_n) {
      row = &t;
      break;
    }
  const double threshold = precision == Precision::fp32 ? row->fp32 : row->fp64;
  return mean_row_length < threshold ? Algorithm::merge_based : Algorithm::row_split;
}

int nonzero_lanes(double mean_row_length, int column_lanes, int unroll) {
  const int max_lanes = std::max(1, 32 / std::max(1, column_lanes));
  int lanes = 1;
  while (lanes < max_lanes && mean_row_length > passes_per_row * unroll * lanes) lanes *= 2;
  return lanes;
}

std::int64_t merge_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors) {
  const std::int64_t target_segments =
      std::max<std::int64_t>(1, std::int64_t(merge_waves) * merge_warps_per_sm * std::max(1, multiprocessors));
  const std::int64_t wanted = (rows + nnz + target_segments - 1) / target_segments;
  std::int64_t items = merge_min_items;
  while (items < wanted && items < merge_max_items) items *= 2;
  return items;
}

}  // namespace blockeigs::spmm::cuda
