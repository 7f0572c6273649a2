#include "spmm/cuda/heuristic.hpp"
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
//
// At n = 1, row_split where its stream body pays (row_stream_pays, below).
// Otherwise merge_based when rows < row_split_min_rows, or max_row > skew *
// mean_row, or mean_row < short_mean; row_split otherwise. A width n uses
// the first row with n <= max_n (n = 100 the row of 128).
//
// Fitted by scripts/fit_heuristic.py (--min-rows 4096) from
// docs/benchmarks/data/2026-11-23-spmm-bench-ea12e5d-h100.csv (H100, commit
// ea12e5d, 2026-11-23, spmm-bench --suite full, beta = 0): 1422 cases (79
// matrices x 2 precisions x 9 widths with both kernels timed). Objective: the
// cases where the choice is within 5% of the faster of the two kernels, then
// the total slowdown. Fitted: 1342/1422 (94.4%); leave-one-matrix-out (each
// matrix predicted by a table fitted without it): 1303/1422 (91.6%). The run
// before it (2026-11-23-spmm-bench-row-order-first-h100.csv: the same kernels
// but for the few-row fallback of row_split_chunk_batches) fits the same
// table, and the geometric mean of both does too.
// Refitted because row_split's blocks in row order made it 1.16-1.34x faster
// where they apply (n * sizeof(T) >= 512: fp64 n >= 64, fp32 n >= 128;
// geomean over the suite against a58a989), and the
// table before (fitted on H200 runs of older kernels, 1226d88 to acf19a6; see
// this file's history) scored 89.3% / 88.0% (fp32 / fp64) on that run. Most
// skew limits rose: row_split now wins on rows up to 120-290x the mean.
// The misses left are mostly skewed graphs at n = 32-128 whose skew is below
// the limit but whose long rows still hold row_split's blocks (mbeacxc,
// polblogs, ego-Facebook, socfb-MIT8: row_split up to 1.7x the merge time)
// where other matrices of that skew prefer row_split; the dense 2k x 8k and
// 8k x 2k at n >= 128; and the 7-point Laplacian at fp64 n = 128 and fp32
// n = 256, where merge_based is 1.3x faster and nothing in the table tells
// it from the matrices of the same mean where row_split wins (column locality).
// n = 3 has no case in the suite; it runs the general merge body, as fp64
// n = 4 does, and takes that row.
// Refitted on the run after row_split_passes made row_split 4-12% faster on
// regular rows at n = 4 to 32 (docs/benchmarks/data/2026-11-23-spmm-bench-passes-h100.csv):
// the same table, 1341/1422 (94.3%) fitted, 1303 (91.6%) leave-one-matrix-out.
// Then 11354a0's row-order blocks for irregular long rows (row_split_chunk_batches)
// closed most of the mbeacxc / polblogs / ego-Facebook / socfb-MIT8 misses
// (spmm-tuning-notes 19).
// The rows for n = 33-256 refitted once more when merge_segment_items made
// the merge kernel 1.2-1.5x faster there (session 23, spmm-tuning-notes 26),
// over a full-suite run with segments of max(4, 4 KB / row bytes) rows and
// over the segment sweep read as the final max(8, ...) would pick
// (docs/benchmarks/data/2026-11-24-merge-segments-h100.tgz), putting no case
// below 0.9x of cuSPARSE first, then the cases within 5%; the values kept are
// inside the plateau both agree on. Skew limits fell from 120-1300 to 14-170:
// vsp_sctap1 (skew 244) and Oregon-2 (439) now take merge_based from n = 65.
// On the two full-suite runs at 2c8c0df
// (2026-11-24-spmm-bench-2c8c0df{,-run2}-h100.csv.xz) the whole table scores
// 95.6% / 96.3% within 5% (fp32 / fp64); fit_heuristic.py --min-rows 4096 on
// them picks 34 / 3.3 and 75 / 0, 72 / 2.9 and 75 / 3.3, 75 / 3.3 and
// 75 / 2.2 for these rows (96.6% over both precisions), within the same
// plateau. fp64 n = 17-32 keeps its limit: its segments did not change.
// Two skew limits lowered again once the flat fix-up (merge_fixup.cuh) made
// merge_based 1.02-1.27x faster on the graphs whose short segments cut many
// rows (soc-Epinions1 fp32 n = 256 1.27x, Oregon-2 1.13x; session 24,
// spmm-tuning-notes 27): on the full-suite run at 3962e1f
// (2026-11-24-spmm-bench-3962e1f-h100.csv.xz), scanning each row's limits
// alone, fp32 n = 129-256 scores 71/79 within 5% at 170, 75 over 40-70 (76
// at 15, alone), and fp64 n = 65-128 74/79 at 100, 76 over 40-70 (77 at
// 15); 50 is the middle of both plateaus. The other rows score within one
// case of their best where they are. On two full-suite runs at 15557d6
// (2026-11-24-spmm-bench-15557d6{,-run2}-h100.csv.xz) the whole table
// scores 96.1-96.2% / 96.9% within 5% (fp32 / fp64).
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
    {1, {14, 0}, {14, 0}},      // n = 1:        fp32 72/79, fp64 76/79 within 5% (skewed rows now take
                                //               row_split's stream body first: row_stream_pays)
    {2, {14, 0}, {34, 0}},      // n = 2:        fp32 73/79, fp64 75/79
    {3, {24, 0}, {24, 0}},      // n = 3:        the general merge body, as fp64 n = 4
    {4, {34, 0}, {24, 0}},      // n = 4:        fp32 75/79, fp64 74/79
    {8, {120, 0}, {170, 0}},    // n = 5..8:     fp32 78/79, fp64 78/79
    {16, {120, 0}, {220, 0}},   // n = 9..16:    fp32 78/79, fp64 75/79
    {32, {170, 0}, {220, 0}},   // n = 17..32:   fp32 74/79, fp64 71/79
    {64, {14, 0}, {70, 0}},     // n = 33..64:   refitted for merge_segment_items, see below
    {128, {70, 3}, {50, 3}},    // n = 65..128:   fp64 refitted for the flat fix-up, see below
    {256, {50, 3}, {170, 0}},   // n = 129..256:  fp32 refitted for the flat fix-up
}};

// Fewer rows than this cannot keep the GPU busy with one row per group:
// merge_based. Fitted with the table above (best of 0, 1024, 2048, 4096, 8192,
// 16384, 32768; same run): the suite's dense_2kx8k (2048 rows) prefers merge
// at n >= 4, dense_8kx2k (8192 rows) prefers row_split up to n = 64 (H100,
// ea12e5d; merge_based 1.2-1.3x faster from n = 128).
constexpr std::int64_t row_split_min_rows = 4096;

// row_split_passes: rounds of U B-row loads per lane that row_split plans a
// mean row for. H100, row_split alone on the full suite at n = 1 to 64 (72
// matrices: all but the few-row dense blocks and the power-law rows), once
// with each of 1, 2, 4 and 8 passes
// (docs/benchmarks/data/2026-11-23-row-split-passes{1,2,4,8}-h100.csv;
// spmm-tuning-notes 19). Geometric-mean speedup over one pass, with the
// passes applied where the longest row is at most regular_max_skew x the
// mean and one pass elsewhere:
//   width   fp32 P = 2 / 4 / 8       fp64 P = 2 / 4 / 8
//   1       0.986 0.941 0.911        0.980 0.932 0.902
//   2       0.983 0.940 0.908        1.007 0.979 0.920
//   4       1.041 1.028 0.976        1.010 0.977 0.922
//   8       1.050 1.056 1.011        1.046 1.059 1.045
//   16      1.083 1.131 1.136        1.004 1.031 1.047
//   32      1.048 1.090 1.119        1.006 1.016 1.024
//   64      1.021 1.034 1.048        1.000 1.002 1.003
// Taken: the best geomean whose worst case is at least 0.85x and that slows
// at most two matrices by more than 5%, if it gains 1% or more. Regular
// rows gain up to 2x (fp32 n = 16: nos3, bcsstk09, Trefethen; fp64 n = 8:
// 1.6x): more rows per warp put more independent B-row loads in flight and
// drop the butterfly. The losses are uniform_1M_x32 (random columns over a
// B larger than L2: 0.87-0.93x) and a few matrices at 0.88-0.94x. On skewed
// rows more rows per warp wait on the longest (vsp_befref 0.5x at 4 passes),
// so they keep one pass, as does the merge kernel (its pieces are cut by
// segments, not rows: not measured).
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
// Shorter segments for wide B rows (merge_segment_items). A warp walks its
// segment's rows in order while every resident warp walks its own, so the
// rows in flight span resident warps x rows a segment: with the segments
// above (512 items for the suite's 10M-nonzero matrices, ~55 rows of mean
// 8.4), 4224 warps of an H100 span 230k rows, several replicas of
// vsp_model1's 45k, whose B rows at 512 bytes are then read 3.8 times from
// DRAM (L2 hits 23%, against cuSPARSE's 69% with 24 nonzeros a warp).
// H100, the full suite at n = 64-256, merge_based with segments of 16, 32,
// 64, 128 and 256 items against these (docs/benchmarks/data/
// 2026-11-24-merge-segments-h100.tgz; spmm-tuning-notes 26): the best size
// grows with the mean row (cut rows cost carries) and shrinks with the row
// bytes. Rows a segment = max(8, 4 KB / row bytes) fits: merge_based 1.29x
// faster in geomean over 474 cases, 0.94 of each case's best size. A floor
// of 4 or 6 rows scores 1.31-1.32x (0.96 of the best) but cuts the long
// rows of the social graphs with hub rows (soc-Epinions1) into so many
// pieces that their 1-2 KB cases fall to 0.75-0.89x of cuSPARSE, where 8
// rows keep them at 1.02-1.05x. email-Enron and wiki-Vote, of the same kind,
// still fit worst, at 0.8-0.86 of their best segments (128-256). Applied to
// blocks wider than 32 columns, where the table's rows (n = 33-64, 65-128,
// 129-256) were refitted with it; fp32 n = 33-63 (132-252-byte rows) follow
// the same rule unmeasured.
constexpr std::int64_t merge_short_segments_min_width = 33;
constexpr double merge_segment_output_bytes = 4096;
constexpr double merge_segment_min_rows = 8;

// merge_uses_spmv_body: skew (longest row / mean) above which the SpMV body
// wins at n = 1 (and at n = 2 and 4, where the table sends such matrices to
// merge_based from skew 14-34 on: H200, 177ff37, the narrow body 1.1-3.7x
// faster than the general one on all but the short-row p2p graphs). From the
// merge times of the general body (0361183) and the SpMV body (79794c2) on
// the H200, fp64: it wins on every matrix with skew
// above 30 (0.36-0.88x the time), loses on every one below 9 (1.1-1.9x),
// and between them mostly wins above 14 (ca-GrQc 15: 0.69x, polblogs 16:
// 0.94x, astro-ph 25: 0.86x; ego-Facebook 24: 1.08x) and loses below (cyl6
// 14: 1.49x, email-Eu-core 13: 1.05x).
constexpr double merge_spmv_min_skew = 14;

// The SpMV body's own partition: 2 waves of its 32 resident warps per SM
// (4 blocks of 256), boundaries snapped back by at most a quarter segment.
// H200, full n = 1 suite at 80aa5fa against the general partition (segments
// of 32-1024 items, a power of two, snapped back by half a segment): the 24
// matrices of skew > 14 4.6% (fp32) and 7.8% (fp64) faster in geomean, up
// to 1.2x (rajat19 fp64, Oregon-2 fp32 1.12x), slower on p2p-Gnutella31, 24
// (4M rows of mean 2.4: 0.92x) and soc-Epinions1 (0.96x). 1 wave was only
// tried with the (dropped) cp.async body: slower than 2 on 7 of 7 matrices in
// fp64, mixed in fp32; 4 waves and other slacks not tried.
constexpr int merge_spmv_waves = 2;
constexpr int merge_spmv_warps_per_sm = 32;
constexpr std::int64_t merge_spmv_slack_divisor = 4;

// merge_order_pays: rows of at least this many segments. H100, the dense
// blocks of the suite at n = 16-256, the order against path order (two runs
// each, 2026-11-23-merge-order-*): merge_based 1.2-4.9x faster wherever a
// row spans many segments and rows share their columns (dense_32x512k fp32
// n = 256 4769 -> 1273 us, dense_8x2M 3.7-4.4x at n >= 64, dense_2kx8k
// 1.2-2.7x); dense_8kx2k (four segments a row) 1.05-1.45x; rows16k_x2048
// (four a row, columns apart) within 1%. Rows of one segment or fewer are
// not reordered (dense_32kx512 and the like: no B row is shared anyway
// beyond what L2 already catches).
constexpr double merge_order_min_segments_per_row = 4;

// Dense rows to merge_based (choose_algorithm): rows that cover at least half
// the columns (any two then share at least 2 * density - 1 of them) and span
// merge_order's four segments, from 64-byte B rows. H100, 8590026, two
// full-suite runs: the suite's only such matrix with row_split_min_rows rows
// or more, dense_8kx2k (8192 rows of 2048, four segments a row), merge_based against
// row_split fp32 n = 16 / 32 / 64 / 128 / 256: 0.91-0.95 / 1.10 / 1.06 / 1.05
// / 1.51x; fp64 n = 8 / 16 / 32 / 64 / 128 / 256: 1.03 / 1.04 / 1.13 / 1.04 /
// 1.53 / 1.33x. rows16k_x2048 (the same row length over 16k columns, density
// 1/8: merge_based 0.5-0.9x) and dense_32kx512 (one segment a row) stay
// with the table. The limit was 128 bytes until the flat fix-up took the 17
// us that 8192 cut rows cost the merge kernel (merge_fixup.cuh): then, at
// 3962e1f, merge_based against row_split at 64 bytes: fp32 n = 16 1.13x,
// fp64 n = 8 1.14x; at 32 bytes (fp32 n = 8) 0.92x (82 against 75 us).
constexpr double dense_rows_min_density = 0.5;
constexpr std::int64_t dense_rows_merge_min_row_bytes = 64;

// row_stream_pays: H100, spmm-bench --suite full --n 1 at bc74ad8 plus the
// stream body (spmm-tuning-notes 23; data/2026-11-24-row-stream-n1-ab-h100.tgz),
// one binary with the stream body forced on every matrix and then off. Against
// the faster of row_split's group-per-row body and merge_based:
//  - skew (longest row over the mean) 13-12,366, all 24 such matrices: the
//    stream body 1.01-1.35x faster in both precisions, the very long rows
//    (vsp_model1 17,663, power-law 100,000) now in pieces included;
//  - skew 7-9: rajat11 1.02-1.06x, socfb-MIT8 0.98x / 1.18x;
//  - skew 4-7 with short rows: FA (mean 6.8) 1.17x / 1.33x, rajat11 and add32
//    level, 1138_bus (mean 3.6) 0.92-0.95x; but mbeacxc (mean 101, skew 4.8)
//    0.66x / 0.79x: a warp a row suits long rows whatever their spread;
//  - regular rows (skew <= 3.5): 0.79-0.98x on every mesh and dense block,
//    except uniform_1M_x32 (random columns, 1.19x / 1.24x; not separable by
//    row lengths from dense_512kx32, 0.92x);
//  - few rows longer than a piece (dense 32 x 512k to 2k x 8k): 1.07-1.14x
//    over merge_based, in pieces; 2 and 8 rows (2 x 8M, 8 x 2M) 1.11-1.14x
//    once the pieces were launched across rows (data/2026-11-24-row-stream-
//    piece-order-h100.tar.xz), 0.90-1.09x before.
//  - scattered columns (RowShape::scattered >= 0.9): wing_nodal (0.98),
//    vsp_barth5 (1.0) and the random uniform_1M_x32 and uniform_2M_x4 (1.0);
//    every other matrix of the suite with skew below 8 is at 0.84 or less
//    (662_bus, cage11). The stream body there, against row_split's group of
//    lanes a row (H100, 59d373a and the rule alternating, two runs each;
//    data/2026-11-24-scattered-n1-h100.tgz): uniform_1M_x32 1.19x / 1.26x,
//    wing_nodal 1.11x / 1.21x, vsp_barth5 1.12x / 1.10x, uniform_2M_x4
//    1.00x / 1.02x; the same rows of local columns (dense_512kx32, every row
//    the same 32) lost 0.92-0.95x with it, so row lengths alone could not
//    choose it.
constexpr double row_stream_min_skew = 8;
constexpr double row_stream_min_skew_short_rows = 4;
constexpr double row_stream_short_row = 16;
constexpr double row_stream_min_scattered = 0.9;

// wide_unroll_pays: from the full suite on the H200 at 8c1059d (every fp64
// n = 16 and 32 case wide) against b2fe87a (none wide), time ratio per
// matrix (spmm-tuning-notes section 10). Row-split gained 1.18-1.40x on
// regular rows of mean 4.7-16 at n = 16 (the 7-point Laplacian 1.32x, gr_30_30
// 1.38x, cage10 1.33x) but only up to mean ~9 at n = 32 (bcsstm12, 13.3:
// 0.86x); it lost 0.69-0.92x on rows shorter than 4 (dense_8Mx2, luxembourg,
// the bus matrices) and 0.77-0.87x on skewed ones (soc-Epinions1, Oregon-2,
// power-law: longest row > 8x the mean). Merge, whose occupancy does not
// change (fp64 takes 3 blocks per SM either way), gained 1.1-1.8x almost
// everywhere from mean 2.1 up and lost only on rows of 2 (0.76-0.86x).
constexpr double wide_row_split_min_mean = 4.5;
constexpr double wide_row_split_max_mean_n16 = 16;
constexpr double wide_row_split_max_mean_n32 = 9;
constexpr double wide_row_split_max_skew = 8;
constexpr double wide_merge_min_mean = 3;

// row_split_chunk_batches: H100, spmm-bench on ten replicated and generated
// matrices at n = 64-256 (lap7pt, add32, 1138_bus, cage10/11, wing_nodal,
// delaunay_n16, bcsstk09, p2p-Gnutella31, PGPgiantcompo, FA), the persistent
// grid against blocks of K batches a warp in row order, geomean speedup of
// row_split (docs/benchmarks/data/2026-11-23-spmm-row-order-*-h100.csv):
//   B row bytes     256    512          1024         2048
//   K = 2           0.76   1.03         1.19 / 1.16  1.35
//   K = 4           0.91   1.16 / 1.16  1.27 / 1.23  1.38
//   K = 8           1.01   1.18 / 1.19  1.25 / 1.22  1.28
// (fp32 n = 64 | fp64 n = 64 / fp32 n = 128 | fp64 n = 128 / fp32 n = 256 |
// fp64 n = 256). Up to 2.1x on the matrices whose row costs vary (cage11,
// wing_nodal, FA, bcsstk09); 0.85-0.92x on short regular rows (add32,
// 1138_bus, the 7-point Laplacian), where the persistent warps keep in step
// and prefetch across batches. Narrower rows keep the persistent grid (at
// n = 16, blocks of 8 batches cost 5-10% and of 32 batches 13-16%).
constexpr std::int64_t chunked_min_row_bytes = 512;
constexpr std::int64_t chunked_wide_row_bytes = 1024;
constexpr int chunk_batches_narrow = 8;  // B rows of 512 to 1023 bytes
constexpr int chunk_batches_wide = 4;    // B rows of 1 KB and more
// Chunks only where they make this many waves of resident blocks: on the
// first full-suite run the matrices of 8k-16k rows (dense_8kx2k, 16k rows of
// 2048) and fewer took up to 0.17x the persistent grid's time, their chunks
// filling a fraction of the device; the replicated matrices make hundreds.
// 2 rather than the 4 first fitted, for the long-row matrices of 100k-130k
// rows (mbeacxc, socfb-MIT8), which make 2-3 waves of chunks of 8.
constexpr std::int64_t chunked_min_waves = 2;
// Irregular long rows: mean >= 10, longest more than regular_max_skew and at
// most 100 times the mean. H100, row_split alone on 15 suite matrices at
// n = 16-256, once with each chunk of 1, 2, 4, 8 batches a warp and with the
// persistent grid (docs/benchmarks/data/2026-11-23-row-split-chunks-*-h100.csv),
// then the whole suite with a first rule (2026-11-23-spmm-bench-chunks-h100.csv
// against -passes-; spmm-tuning-notes 19). At 128-511-byte B rows, chunks of 8
// against the persistent grid: irregular long rows 1.21x in geomean over
// their 36 cases (mbeacxc, socfb-MIT8, ego-Facebook, polblogs up to 1.6x;
// bcsstk08 0.87x the worst); regular long rows 0.98x (lap27pt, msc04515 down
// to 0.74x), short rows 0.85-1.0x (lap7pt, delaunay, add32), vsp_befref
// (skew 110) 0.5x: those keep the persistent grid. From 512 bytes: chunks of 2
// instead of 8 on irregular rows of mean >= 64 (mbeacxc, socfb-MIT8) 1.2-1.8x
// (1.02-1.10 at 1 KB), on regular ones (dense 32k x 512) 0.92x. Rows far
// longer than the rest (skew > 100) split: vsp_befref 1.9x with chunks of 1
// at 512 bytes, adder_dcop, rajat01, Oregon-2 and as20000102 0.72-0.80x; they
// keep 8.
constexpr std::int64_t chunked_long_rows_min_row_bytes = 128;
constexpr double chunked_long_mean = 10;
constexpr double chunked_very_long_mean = 64;
constexpr double chunked_max_skew = 100;
constexpr int chunk_batches_very_long = 2;
// Balance: from 512 bytes every matrix takes chunks, and a run of long rows
// falls to one block, whose 8 warps then each take K of them in turn. H100,
// row_split alone with chunks of 1, 2, 4, 8 at 512-2048-byte B rows
// (docs/benchmarks/data/2026-11-23-row-split-chunks-k*-h100.csv), against the
// heaviest warp's nonzeros over an even share, nnz / (4 blocks an SM x 132 SMs
// x 8 warps), at K = 8 / 4 / 2 / 1:
//   vsp_befref  3.61 / 2.25 / 1.22 / 0.65   512 B: 1417 / 995 / 764 / 728 us
//   email-Enron 1.16 / 0.81 / 0.73 / 0.57   512 B:  975 / 934 / 986 / 1102 us
//   mbeacxc     1.03 / 0.80 / 0.41 / 0.20   512 B:  475 / 431 / 398 / 391 us
// and every other of the 15 matrices below 0.7 at K = 8. For those the
// table's K was within 6% of their best, except the 7-point Laplacian, whose best is 4
// at 512 bytes and 8 at 1 KB (1.11-1.16x). Its warps are balanced, so this
// rule has nothing to say there. So K is halved while its heaviest warp is
// above the share and halving cuts it by a quarter or more: shorter chunks
// lose locality, and pay only where they shorten the tail. A first rule
// without the cut (the largest K within the share) measured 1.25-1.96x on
// vsp_befref at 512-2048 bytes and 1.04-1.05x on email-Enron at 512, but
// 0.97x on vsp_sctap1 (1.27 / 1.25 / 1.18 / 0.71: K = 8 -> 1) and 0.93x on
// soc-Epinions1 (1.64 / 1.32 / 1.08 / 0.74) at 512 (H100, against f0e192e,
// two runs; data/2026-11-24-balanced-chunks-*); the cut keeps those at 8.
// Oregon-2 (one row of 2432, the heaviest warp 1.03-1.06 at every K) stays
// at 8: chunks of 1 measured 0.72-0.80x there.
constexpr std::int64_t balanced_chunks_min_row_bytes = 512;
constexpr double balanced_chunks_min_cut = 0.75;

// column_slab: H100, spmm-bench's automatic at n = 64-256 over the full suite
// with B and C split into column slabs of 256 and 512 bytes of B row and
// unsplit, alternating on one machine (data/2026-11-24-column-slabs-h100.tgz;
// spmm-tuning-notes 25). Slabs gained where a band of B rows that does not fit
// in L2 fits once split: rows16k_x2048 fp64 n = 256 (span 16384, 33.5 MB of
// band) 1.54x, vsp_barth5 (span 23227) 1.24-1.66x from 1-KB rows, the
// 7-point Laplacian (32769) 1.15-1.18x from 1 KB with 512-byte slabs (1.40x
// with 256), delaunay_n16 1.08-1.12x, lap27pt fp64 n = 256 1.10x. They lost
// where the band already fits (bcsstk*, span < 1000: 0.5-0.9x), on rows of
// 2-4 nonzeros whatever the band (p2p-Gnutella31 0.74-0.81x, uniform_2M_x4
// 0.95-0.97x), and on the merge kernel's dense few-row blocks, whose rows read
// B in step (dense_512x32k 0.66-0.88x). Of the thresholds tried (band share
// 0.32-0.64 of the 50 MB L2, mean 0-5, span's median, mean, nnz-weighted mean
// and 90th percentile), the mean span, share 0.4 and mean 5 took 18 cases
// 1.04-1.66x faster and none 3% slower.
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
    for (int c = std::countr_zero(unsigned(chunk)); c > 0 && heaviest[c] > share &&
                                                    heaviest[c - 1] <= balanced_chunks_min_cut * heaviest[c];
         --c)
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

Algorithm choose_algorithm(const RowShape& shape, std::int64_t n, Precision precision, int multiprocessors) {
  if (n == 1 && row_stream_pays(shape)) return Algorithm::row_split;
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
                         std::size_t l2_bytes) {
  const std::int64_t value_bytes = precision == Precision::fp32 ? 4 : 8;
  const double band_budget = slab_l2_share * double(l2_bytes);
  if (shape.span <= 0 || shape.mean < slab_min_mean || shape.span * double(n * value_bytes) <= band_budget ||
      choose_algorithm(shape, n, precision, multiprocessors) != Algorithm::row_split)
    return n;
  for (const std::int64_t bytes : slab_row_bytes) {
    const std::int64_t width = bytes / value_bytes;
    if (width < n && shape.span * double(bytes) <= band_budget &&
        choose_algorithm(shape, width, precision, multiprocessors) == Algorithm::row_split)
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
