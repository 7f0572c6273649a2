// Choice between our two CUDA SpMM kernels, and the few tuning constants of
// the kernels themselves, from a small table fitted to spmm-bench results
// (bench/scripts/fit_heuristic.py prints a new table from a bench CSV). Host
// code, in every build (Plan names the choice); the namespace is the kernels'.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/enums.hpp"

namespace blockeigs::spmm::cuda {

// Warps of a row_split block, which RowShape::heaviest_warp assumes.
inline constexpr int row_split_block_warps = 8;
// Chunks of 1, 2, 4 and 8 batches a warp (row_split_chunk_batches).
inline constexpr int chunk_sizes = 4;
// RowShape::scattered's groups of columns: 2^3 = 8, a 32-byte sector of fp32.
inline constexpr int scattered_group_log2 = 3;

// What the table looks at in a matrix: all known at plan build.
struct RowShape {
  std::int64_t rows = 0;
  double mean = 0.0;      // nonzeros per row
  double max = 0.0;       // nonzeros of the longest row
  std::int64_t cols = 0;  // 0: not known (the dense-rows rule of choose_algorithm is off)
  // heaviest_warp[c]: the most nonzeros one warp takes when row_split runs
  // one row a batch in chunks of 2^c batches a warp: chunk b holds rows
  // [b * 8 * 2^c, (b + 1) * 8 * 2^c), and warp w of its block the rows w,
  // w + 8, ... in it. heaviest_warp[0] is max. All zero: not measured (the
  // chunk rule then keeps the table's chunk).
  double heaviest_warp[chunk_sizes] = {};
  // Of the nonzeros that follow another in their row, the fraction whose
  // column is in another aligned group of 8 columns than the one before it:
  // with sorted columns, how often a row's next B entry at n = 1 is in a new
  // 32-byte sector (fp32). Near 1 for rows of random columns (a mesh numbered
  // without regard to its neighbours, a random matrix), 0.2-0.8 for banded
  // and clustered ones. 0: not measured, or no row has two nonzeros.
  double scattered = 0.0;
  // Mean over the rows with nonzeros of (largest - smallest column + 1): the
  // band of B rows that rows near each other read, which row_split's rows in
  // flight share through L2 (32769 for a 7-point Laplacian of 128^3, a
  // copy's rows for a block-diagonal graph, all columns for a random
  // matrix). 0: not measured.
  double span = 0.0;
};

// The shape of a CSR matrix whose row offsets (and column indices, if not
// null: `scattered` and `span`) are in device memory: two small reduction
// kernels (the longest row and heaviest_warp by max, `scattered` and `span`
// by integer counts; exact, so deterministic) and a copy back; waits for the
// device. For a Plan, once at build.
RowShape row_shape(const std::int32_t* device_row_offsets, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                   const std::int32_t* device_col_indices = nullptr);
// The same from arrays in host memory: the device version's reference.
RowShape row_shape_host(const std::int32_t* row_offsets, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                        const std::int32_t* col_indices = nullptr);

// row_split or merge_based for a matrix of this shape multiplied by a block of
// n columns in `precision`, each column `reals_per_column` values of it (2
// for complex values; the rules but the first go by a B row's bytes): at n = 1
// row_split wherever its stream body pays
// (row_stream_pays); otherwise merge_based when there are too few rows to fill
// the GPU one row per group of lanes (a 2 x 8M block), when the longest row is
// many times the mean (row-split leaves the other lanes of a warp idle behind
// it), or when rows are very short at wide n; row_split otherwise. Also
// merge_based for dense rows (at least half the columns) that the merge
// kernel takes across rows (merge_order_pays, with the segments it cuts on
// `multiprocessors` SMs; 0: not known, rule off) from 128-byte B rows: they
// share their B rows, which the across-rows order reads in step through L1,
// where row_split's warps each sweep all of B on their own.
Algorithm choose_algorithm(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors = 0,
                           int reals_per_column = 1);

// Columns of B and C that the automatic choice multiplies at once for a block
// of n columns: n, or slabs of 512 or 256 bytes of B row (one launch each,
// which reads A again) where the band of B rows (span x row bytes) is more
// than slab_l2_share of an L2 of `l2_bytes` and a slab's band is not: there
// the rows in flight find the B rows their neighbours read still in L2. Only
// where row_split runs at both widths on rows of slab_min_mean nonzeros or
// more (shorter rows reuse too few B rows to pay for the extra passes).
std::int64_t column_slab(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors,
                         std::size_t l2_bytes, int reals_per_column = 1);

// Lanes of a row group that split the row's nonzeros (GK, a power of two at
// most 32 / GC), given the GC lanes that split its columns and the U nonzeros
// whose B rows one lane loads at once: the fewest lanes that let a mean row
// be done in `passes` rounds of U loads per lane. Fewer lanes per row means
// more rows per warp, so more independent loads in flight, but a warp's
// rounds are those of its longest row.
int nonzero_lanes(double mean_row_length, int column_lanes, int unroll, double passes = 1.0);

// The rounds row_split plans a mean row for (nonzero_lanes' `passes`): more
// than one at n = 4 to 64 on regular rows (the longest at most a few times
// the mean), where fewer lanes per row measured faster; one elsewhere.
double row_split_passes(const RowShape& shape, std::int64_t n, Precision precision);

// Merge path items (rows + nonzeros) per warp segment of the merge kernel:
// enough segments for `waves` full waves of warps on the device, between the
// table's bounds (a power of two).
std::int64_t merge_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors);

// The merge kernel's segment for blocks of n columns: merge_items_per_segment,
// or shorter for blocks wider than 32 columns: about max(8, 4 KB / row bytes)
// rows of mean length, so that the rows the resident warps hold at once, and
// the B rows they gather, stay a narrow band that L2 keeps (a power of two,
// at least the table's lower bound).
std::int64_t merge_segment_items(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors);

// Whether the merge kernel takes its segments across rows
// (merge_order_across_rows) rather than in path order: for regular rows that
// each span several segments of `items` (dense blocks of few long rows).
bool merge_order_pays(const RowShape& shape, std::int64_t items);

// Whether row_split multiplies a single column with its stream body
// (row_stream_spmv.cuh) rather than a group of lanes per row: skewed rows
// (the longest at least row_stream_min_skew times the mean, or
// row_stream_min_skew_short_rows times a mean of at most
// row_stream_short_row) or scattered columns (RowShape::scattered at least
// row_stream_min_scattered) from row_split_min_rows rows, or rows longer on
// average than a piece of the body (row_stream_piece) however few.
// choose_algorithm sends such matrices to row_split at n = 1.
bool row_stream_pays(const RowShape& shape);

// Whether the merge kernel multiplies blocks of up to merge_spmv_max_width
// columns with its narrow (SpMV) body (each lane walks a few consecutive
// merge items) rather than the general one (a group of lanes per row piece):
// only for skewed rows, where a long row's piece would be one lane's serial
// loop; on regular rows the SpMV body's per-step bookkeeping makes it
// 1.1-1.9x slower (n = 1).
bool merge_uses_spmv_body(const RowShape& shape);

// The SpMV body's own partition (merge_spmv.cu): segments as long as the
// work divided among `merge_spmv_waves` waves of resident warps, so that each
// warp walks many chunks and fewer warps start and end; boundaries snap back
// to a row start `merge_spmv_slack(items)` away at most.
std::int64_t merge_spmv_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors);
std::int64_t merge_spmv_slack(std::int64_t items);

// The SpMV body walks its segment in chunks of 32 lanes x this many merge
// items (merge_spmv.cu). Odd, so that lanes reading their own runs of
// nonzeros from shared memory hit different banks. H200, n = 1, 8 skewed
// matrices (docs/benchmarks/spmm.md): fp32 9 beat 5, 7 and 8 by 2-6%; fp64 7 beat 5, 8 and 9
// by 4-10% (with 64 registers; more blocks per SM spilled in fp64).
inline constexpr int merge_spmv_items_per_lane_fp32 = 9;
inline constexpr int merge_spmv_items_per_lane_fp64 = 7;
// n = 2 and 4: each item carries n products, so fewer items per lane keep
// the chunk's loads in registers. H200, the 27 skewed matrices of the full
// suite: at n = 2 fp32 7 items tied 9 (which spilled) and beat 5
// and 11 by 4-5% in geomean, fp64 5 items at 3 blocks per SM tied 3 and 7;
// at n = 4 fp32 5 items beat 3 by 8% and 7 by 3%.
inline constexpr int merge_spmv2_items_per_lane_fp32 = 7;
inline constexpr int merge_spmv2_items_per_lane_fp64 = 5;
inline constexpr int merge_spmv4_items_per_lane_fp32 = 5;
inline constexpr int merge_spmv_max_chunk_items = 32 * 9;
inline constexpr int merge_spmv_max_width = 4;  // widest block the narrow body takes

// Block widths the narrow body takes: 1 and 2, and 4 in fp32. fp64 at n = 4
// (32-byte items, 3 a lane to fit 48 KB of shared memory) was slower than the
// general body on 14 of the 24 skewed matrices (H200, docs/benchmarks/spmm.md).
constexpr bool merge_spmv_takes(std::int64_t n, Precision precision) {
  return n == 1 || n == 2 || (n == 4 && precision == Precision::fp32);
}

// Whether a kernel (row_split or merge_based) takes its wide variant, 8
// nonzeros' B rows in flight per lane instead of 4 at a quarter less
// occupancy, for a shape that has one (fp64 with 8 or 16 column lanes: n = 16
// and 32). It pays where rows are long enough to fill the wider passes but
// not so long that row-split would trade nonzero lanes for them, and (for
// row-split) regular: on short or skewed rows the lost occupancy costs more.
bool wide_unroll_pays(Algorithm algorithm, const RowShape& shape, int column_lanes);

// Row-split's schedule for wide B rows: 0 for the persistent grid (each warp
// strides over the whole matrix), or the number of consecutive batches each
// warp of a block takes before the block ends, blocks launched in row order.
// The persistent warps drift apart as rows differ in cost, and once B's rows
// are wide the rows in flight then touch more of B than L2 keeps; blocks that
// live for a few batches keep the rows in flight a narrow band. `blocks` is
// the launch's size at one batch a warp, `resident` the blocks the device
// holds at once: a matrix of few rows (a dense 8k x 2k) keeps the persistent
// grid, which chunks would leave part of the device idle for. Irregular long
// rows (mean >= 10, the longest 3 to 100 times the mean) take chunks from
// 128-byte B rows on, where the persistent warps' prefetch across batches
// matters less than their drift; from 512 bytes, when the mean is 64 or more,
// shorter chunks, so that a block does not hold its SM's slot waiting on one
// warp. From 512 bytes (one row a warp batch: `rows_per_warp` 1) the chunk
// is also halved while its heaviest warp (RowShape::heaviest_warp) holds more
// than an even share of the matrix over the resident warps and halving cuts
// that warp's load by a quarter or more: a run of long rows (vsp_befref)
// would otherwise keep one block's warps working through it long after the
// rest are done.
int row_split_chunk_batches(std::int64_t n, Precision precision, const RowShape& shape, std::int64_t blocks,
                            std::int64_t resident, int rows_per_warp = 1);

}  // namespace blockeigs::spmm::cuda
