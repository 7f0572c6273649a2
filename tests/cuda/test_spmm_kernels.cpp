// Our CUDA SpMM kernels (row_split, merge_based), `automatic` through
// spmm::Plan, and the cuSPARSE wrapper, each against the host reference on
// awkward shapes: every n class, empty rows, one row of 100k nonzeros, rows of
// length 1, empty matrices, padded and misaligned leading dimensions, beta = 0
// with NaN-filled C, beta != 0, alpha = 0, and bitwise determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "spmm/cuda/heuristic.hpp"
#include "spmm/cuda/row_stream_blocks.hpp"
#include "test_spmm_support.hpp"
#include "tests/support/gpu_skip.hpp"
#include "tests/support/typed_precisions.hpp"

namespace blockeigs::test {
namespace {

template <class T>
class SpmmKernels : public PrecisionTest<T> {};
TYPED_TEST_SUITE(SpmmKernels, Precisions, PrecisionNames);

// 11, 17, 20, 22, 40, 46: on and around the three-vectors-a-lane shapes
// (kernel_dispatch.cuh), at 1, 2 and 4 elements a vector in both precisions.
constexpr std::int64_t all_widths[] = {1, 2, 3, 7, 11, 17, 20, 22, 32, 33, 40, 46, 65, 128, 129, 256};

// 777 x 555, lengths 0..40, one row in ten empty.
template <class T>
spmm::HostCsr<T> irregular_matrix(std::uint64_t seed) {
  return random_csr<T>(777, 555, seed, [](std::int64_t, std::mt19937_64& e) {
    return e() % 10 == 0 ? std::int64_t(0) : std::int64_t(e() % 41);
  });
}

template <class T>
void every_width_beta_zero_nan_c() {
  const auto A = irregular_matrix<T>(11);
  std::vector<Problem> problems;
  for (std::int64_t n : all_widths) problems.push_back({.n = n, .seed = std::uint64_t(n)});
  check_all_algorithms(A, problems);
}

TYPED_TEST(SpmmKernels, EveryWidth) {
  SKIP_WITHOUT_GPU();
  every_width_beta_zero_nan_c<TypeParam>();
}

template <class T>
void alpha_and_beta() {
  const auto A = irregular_matrix<T>(12);
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 3, 32, 129}) {
    problems.push_back({.n = n, .alpha = 1.5, .beta = 0.5});
    problems.push_back({.n = n, .alpha = -2.0, .beta = 1.0});
    problems.push_back({.n = n, .alpha = 0.0, .beta = 0.25});
    problems.push_back({.n = n, .alpha = 0.0, .beta = 0.0});
  }
  check_all_algorithms(A, problems);
  // alpha == 0 must not read A or B: NaN in B leaves C = beta * C (ours; the
  // cuSPARSE wrapper makes no such promise).
  std::vector<Problem> nan_b;
  for (std::int64_t n : {1, 33}) nan_b.push_back({.n = n, .alpha = 0.0, .beta = 0.5, .nan_b = true});
  check_all_algorithms(A, nan_b, {Algorithm::row_split, Algorithm::merge_based, Algorithm::automatic});
}

TYPED_TEST(SpmmKernels, AlphaAndBeta) {
  SKIP_WITHOUT_GPU();
  alpha_and_beta<TypeParam>();
}

// The wide variants (8 B rows in flight per lane: fp64 at n = 16 and 32) on
// rows they are chosen for (regular, mean ~7, like the 7-point Laplacian),
// with beta = 0 over NaN, beta != 0, padded leading dimensions and a short
// last batch of rows; n = 8 and 33 beside them take the usual kernels.
TEST(SpmmKernels, WideVariantsFp64) {
  SKIP_WITHOUT_GPU();
  const auto A =
      random_csr<double>(3001, 2999, 71, [](std::int64_t, std::mt19937_64& e) { return std::int64_t(4 + e() % 7); });
  const double mean = double(A.nnz()) / double(A.rows);
  ASSERT_TRUE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, mean, 10.0}, 8));
  ASSERT_TRUE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, mean, 10.0}, 16));
  ASSERT_TRUE(spmm::cuda::wide_unroll_pays(Algorithm::merge_based, {A.rows, mean, 10.0}, 8));
  std::vector<Problem> problems;
  for (std::int64_t n : {8, 16, 32, 33}) {
    problems.push_back({.n = n, .seed = std::uint64_t(n)});
    problems.push_back({.n = n, .alpha = -1.5, .beta = 0.5, .seed = std::uint64_t(n + 1)});
    problems.push_back({.n = n, .ldb = n + 6, .ldc = n + 2, .seed = std::uint64_t(n + 2)});
  }
  check_all_algorithms(A, problems);
  // The rule: short, skewed or (for row-split) long rows keep the usual kernels.
  EXPECT_FALSE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, 2.0, 2.0}, 8));
  EXPECT_FALSE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, 7.0, 1000.0}, 8));
  EXPECT_FALSE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, 30.0, 40.0}, 8));
  EXPECT_FALSE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, 12.0, 14.0}, 16));
  EXPECT_TRUE(spmm::cuda::wide_unroll_pays(Algorithm::row_split, {A.rows, 12.0, 14.0}, 8));
  EXPECT_FALSE(spmm::cuda::wide_unroll_pays(Algorithm::merge_based, {A.rows, 2.0, 2.0}, 8));
}

// Regular rows take several rounds of loads a lane (row_split_passes): rows of
// 50-64 nonzeros, each a few batches of a few lanes, at the widths that trade
// nonzero lanes for rows per warp.
template <class T>
void regular_rows_several_passes() {
  const auto A =
      random_csr<T>(2500, 1800, 72, [](std::int64_t, std::mt19937_64& e) { return std::int64_t(50 + e() % 15); });
  const spmm::cuda::RowShape shape{A.rows, double(A.nnz()) / double(A.rows), 64.0};
  ASSERT_GT(spmm::cuda::row_split_passes(shape, 16, precision_of<T>()), 1.0);
  std::vector<Problem> problems;
  for (std::int64_t n : {4, 5, 8, 12, 16, 24, 32, 48, 64})
    problems.push_back({.n = n, .beta = n % 3 == 0 ? 0.5 : 0.0, .seed = std::uint64_t(n)});
  check_all_algorithms(A, problems, {Algorithm::row_split, Algorithm::automatic});
}

TYPED_TEST(SpmmKernels, RegularRowsSeveralPasses) {
  SKIP_WITHOUT_GPU();
  regular_rows_several_passes<TypeParam>();
}

// Host side only: the rule, and the lanes it gives.
TEST(SpmmHeuristic, RowSplitPassesOnlyOnRegularRows) {
  using spmm::cuda::nonzero_lanes;
  using spmm::cuda::row_split_passes;
  const spmm::cuda::RowShape regular{100000, 17.0, 24.0}, skewed{100000, 17.0, 1000.0};
  EXPECT_EQ(row_split_passes(regular, 16, Precision::fp32), 4.0);
  EXPECT_EQ(row_split_passes(regular, 20, Precision::fp64), 8.0);  // the n <= 32 row
  EXPECT_EQ(row_split_passes(regular, 1, Precision::fp32), 1.0);
  EXPECT_EQ(row_split_passes(regular, 256, Precision::fp64), 1.0);
  EXPECT_EQ(row_split_passes(regular, 1000, Precision::fp64), 1.0);
  for (std::int64_t n : {1, 4, 8, 16, 32, 64}) {
    EXPECT_EQ(row_split_passes(skewed, n, Precision::fp32), 1.0) << n;
    EXPECT_EQ(row_split_passes(skewed, n, Precision::fp64), 1.0) << n;
  }
  // fp32 n = 16: 4 column lanes, 4 loads a lane. One round for a mean row
  // of 17 needs 8 lanes (one row a warp); four rounds 2 (four rows a warp).
  EXPECT_EQ(nonzero_lanes(17.0, 4, 4), 8);
  EXPECT_EQ(nonzero_lanes(17.0, 4, 4, 4.0), 2);
  EXPECT_EQ(nonzero_lanes(17.0, 4, 4, 8.0), 1);
  EXPECT_EQ(nonzero_lanes(1000.0, 4, 4), 8);  // at most 32 / GC
  EXPECT_EQ(nonzero_lanes(1000.0, 32, 4), 1);
}

TEST(SpmmHeuristic, MergeOrderAcrossRowsOnlyForLongRegularRows) {
  // Rows spanning at least four segments, the longest at most 3x the mean.
  EXPECT_TRUE(spmm::cuda::merge_order_pays({32, 524288, 524288}, 512));
  EXPECT_TRUE(spmm::cuda::merge_order_pays({8192, 2048, 2048}, 512));
  EXPECT_FALSE(spmm::cuda::merge_order_pays({8192, 2048, 2048}, 1024));     // two segments a row
  EXPECT_FALSE(spmm::cuda::merge_order_pays({32768, 512, 512}, 512));       // one
  EXPECT_FALSE(spmm::cuda::merge_order_pays({100000, 3000, 100000}, 512));  // skewed
}

TEST(SpmmHeuristic, ShorterMergeSegmentsForWideRows) {
  constexpr auto fp32 = Precision::fp32;
  constexpr auto fp64 = Precision::fp64;
  // 2M rows of mean 4 on 132 SMs: 10M items make segments of 512.
  const spmm::cuda::RowShape short_rows{2000000, 4.0, 10.0};
  const std::int64_t general = spmm::cuda::merge_items_per_segment(2000000, 8000000, 132);
  ASSERT_EQ(general, 512);
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 1, fp32, 132), general);
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 32, fp32, 132), general);  // up to 32 columns
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 32, fp64, 132), general);
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 33, fp32, 132), 128);  // 31 rows of 5 items: 155
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 64, fp32, 132), 64);   // 16 rows: 80
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 33, fp64, 132), 64);   // 15.5 rows: 78
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 128, fp32, 132), 32);  // 8 rows: 40
  EXPECT_EQ(spmm::cuda::merge_segment_items(short_rows, 256, fp64, 132), 32);  // 8 rows (the floor): 40
  // Rows of mean 50: 16 rows would be 816 items, nearer the general 1024
  // than 512; 8 rows at 2 KB make 408, so 512.
  const spmm::cuda::RowShape long_rows{2000000, 50.0, 60.0};
  EXPECT_EQ(spmm::cuda::merge_segment_items(long_rows, 64, fp32, 132), 1024);
  EXPECT_EQ(spmm::cuda::merge_segment_items(long_rows, 256, fp64, 132), 512);
  // Small matrices already have the shortest segments.
  EXPECT_EQ(spmm::cuda::merge_segment_items({1000, 4.0, 10.0}, 256, fp64, 132), 32);
  // The merge kernel builds one partition per run of widths: never longer
  // segments for a wider block.
  for (const auto& shape : {short_rows, long_rows, spmm::cuda::RowShape{300000, 13.0, 4000.0}})
    for (const Precision precision : {fp32, fp64})
      for (std::int64_t n = 2; n <= 256; ++n)
        EXPECT_LE(spmm::cuda::merge_segment_items(shape, n, precision, 132),
                  spmm::cuda::merge_segment_items(shape, n - 1, precision, 132))
            << n;
}

TEST(SpmmHeuristic, RowSplitChunksByRowBytesAndRowLengths) {
  using spmm::cuda::row_split_chunk_batches;
  const std::int64_t resident = 132 * 4, many = 1 << 20;
  const spmm::cuda::RowShape short_rows{many, 7.0, 7.0}, long_rows{many, 25.0, 300.0}, regular_long{many, 26.5, 27.0},
      very_long{many, 101.0, 484.0}, dense_long{many, 512.0, 512.0}, very_skewed{many, 14.0, 1531.0};
  // Narrow B rows: the persistent grid, but for irregular long rows from 128 bytes.
  EXPECT_EQ(row_split_chunk_batches(16, Precision::fp32, long_rows, many, resident), 0);
  EXPECT_EQ(row_split_chunk_batches(32, Precision::fp32, short_rows, many, resident), 0);
  EXPECT_EQ(row_split_chunk_batches(32, Precision::fp32, long_rows, many, resident), 8);
  EXPECT_EQ(row_split_chunk_batches(16, Precision::fp64, long_rows, many, resident), 8);
  EXPECT_EQ(row_split_chunk_batches(16, Precision::fp64, regular_long, many, resident), 0);
  EXPECT_EQ(row_split_chunk_batches(32, Precision::fp64, very_skewed, many, resident), 0);
  // From 512 bytes: 8 batches, 4 from 1 KB; 2 for irregular rows of mean >= 64.
  EXPECT_EQ(row_split_chunk_batches(128, Precision::fp32, short_rows, many, resident), 8);
  EXPECT_EQ(row_split_chunk_batches(256, Precision::fp32, short_rows, many, resident), 4);
  EXPECT_EQ(row_split_chunk_batches(64, Precision::fp64, very_long, many, resident), 2);
  EXPECT_EQ(row_split_chunk_batches(64, Precision::fp64, dense_long, many, resident), 8);
  EXPECT_EQ(row_split_chunk_batches(128, Precision::fp64, very_skewed, many, resident), 4);
  // Too few blocks for two waves of chunks: the persistent grid.
  EXPECT_EQ(row_split_chunk_batches(128, Precision::fp32, short_rows, 8 * 2 * resident - 1, resident), 0);
  EXPECT_EQ(row_split_chunk_batches(128, Precision::fp32, short_rows, 8 * 2 * resident, resident), 8);
  EXPECT_EQ(row_split_chunk_batches(64, Precision::fp64, very_long, 2 * 2 * resident, resident), 2);
}

TEST(SpmmHeuristic, RowSplitChunksShortenUntilTheHeaviestWarpHoldsAnEvenShare) {
  const std::int64_t resident = 132 * 4, many = 1 << 20;
  // Even share: 14 * 2^20 nonzeros over 132 * 4 * 8 warps, 3475 of them.
  auto shape = [&](double max, std::array<double, 4> heaviest) {
    spmm::cuda::RowShape s{many, 14.0, max};
    std::copy(heaviest.begin(), heaviest.end(), s.heaviest_warp);
    return s;
  };
  const auto run = shape(1531, {1531, 3062, 6124, 12248});  // one warp's 2^c long rows in a chunk of 2^c
  const auto scattered = shape(1531, {1531, 1545, 1570, 1620});
  const auto huge_row = shape(1531, {5000, 5010, 5020, 5050});   // above the share at every size
  const auto two_rows = shape(1531, {2467, 4100, 4340, 4413});   // falls a quarter only at 1
  const auto irregular = shape(300, {1531, 3062, 6124, 12248});  // skew 21: chunked from 128 bytes
  struct Case {
    const char* what;
    std::int64_t n;
    Precision precision;
    spmm::cuda::RowShape shape;
    std::int64_t blocks, resident;
    int rows_per_warp, expected;
  };
  const Case cases[] = {
      // From 512 bytes: halved while the heaviest warp is above the share
      // and halving cuts it by a quarter.
      {"run, 512 B", 128, Precision::fp32, run, many, resident, 1, 2},
      {"run, 1 KB", 128, Precision::fp64, run, many, resident, 1, 2},
      {"run, 2 KB", 256, Precision::fp64, run, many, resident, 1, 2},
      {"scattered, 512 B", 128, Precision::fp32, scattered, many, resident, 1, 8},
      {"scattered, 1 KB", 256, Precision::fp32, scattered, many, resident, 1, 4},
      {"one huge row", 128, Precision::fp32, huge_row, many, resident, 1, 8},
      {"two long rows", 128, Precision::fp32, two_rows, many, resident, 1, 8},
      // Twice the resident blocks halve the share (1738): chunks of 1.
      {"run, half the share", 128, Precision::fp32, run, many, 2 * resident, 1, 1},
      // The two-wave guard is taken on the shorter chunk.
      {"run, few blocks", 128, Precision::fp32, run, 2 * 2 * resident, resident, 1, 2},
      // Below 512 bytes, or several rows a warp batch: not applied.
      {"run, 256 B (skew > 100)", 32, Precision::fp64, run, many, resident, 1, 0},
      {"irregular, 256 B", 32, Precision::fp64, irregular, many, resident, 1, 8},
      {"run, two rows a batch", 128, Precision::fp32, run, many, resident, 2, 8},
  };
  for (const Case& c : cases)
    EXPECT_EQ(spmm::cuda::row_split_chunk_batches(c.n, c.precision, c.shape, c.blocks, c.resident, c.rows_per_warp),
              c.expected)
        << c.what;
}

TEST(SpmmHeuristic, DenseRowsTakeMergeFrom64ByteRows) {
  using spmm::cuda::choose_algorithm;
  // 8192 rows of all 2048 columns: four merge segments a row on 132 SMs.
  spmm::cuda::RowShape dense{8192, 2048.0, 2048.0, 2048}, sparse = dense, one_segment{32768, 512.0, 512.0, 512};
  sparse.cols = 16384;  // the same rows over 8x the columns: density 1/8
  EXPECT_EQ(choose_algorithm(dense, 16, Precision::fp32, 132), Algorithm::merge_based);
  EXPECT_EQ(choose_algorithm(dense, 32, Precision::fp32, 132), Algorithm::merge_based);
  EXPECT_EQ(choose_algorithm(dense, 256, Precision::fp32, 132), Algorithm::merge_based);
  EXPECT_EQ(choose_algorithm(dense, 8, Precision::fp64, 132), Algorithm::merge_based);
  // Below 64-byte rows, on sparser rows, rows of one segment, or with the
  // SM count not known: the table's row_split.
  EXPECT_EQ(choose_algorithm(dense, 15, Precision::fp32, 132), Algorithm::row_split);
  EXPECT_EQ(choose_algorithm(dense, 8, Precision::fp32, 132), Algorithm::row_split);
  EXPECT_EQ(choose_algorithm(dense, 7, Precision::fp64, 132), Algorithm::row_split);
  EXPECT_EQ(choose_algorithm(sparse, 256, Precision::fp32, 132), Algorithm::row_split);
  EXPECT_EQ(choose_algorithm(one_segment, 256, Precision::fp32, 132), Algorithm::row_split);
  EXPECT_EQ(choose_algorithm(dense, 256, Precision::fp32), Algorithm::row_split);
  // Many more SMs cut shorter segments: still four or more a row.
  EXPECT_EQ(choose_algorithm(dense, 256, Precision::fp32, 1024), Algorithm::merge_based);
}

TEST(SpmmHeuristic, RowShapeOnTheHost) {
  // 70 rows of one nonzero, but rows 8, 16 and 24 (warp slot 0 of the first
  // chunks) of 10: pairs {0, 8} and {16, 24}, the run 0-24, and 0-56.
  std::vector<std::int32_t> offsets{0};
  for (int i = 0; i < 70; ++i) offsets.push_back(offsets.back() + (i == 8 || i == 16 || i == 24 ? 10 : 1));
  const auto shape = spmm::cuda::row_shape_host(offsets.data(), 70, 100, offsets.back());
  EXPECT_EQ(shape.rows, 70);
  EXPECT_DOUBLE_EQ(shape.mean, 97.0 / 70.0);
  EXPECT_EQ(shape.max, 10.0);
  EXPECT_EQ(shape.heaviest_warp[0], 10.0);
  EXPECT_EQ(shape.heaviest_warp[1], 20.0);
  EXPECT_EQ(shape.heaviest_warp[2], 31.0);
  EXPECT_EQ(shape.heaviest_warp[3], 35.0);
  const auto empty = spmm::cuda::row_shape_host(offsets.data(), 0, 0, 0);
  EXPECT_EQ(empty.max, 0.0);
  EXPECT_EQ(empty.heaviest_warp[3], 0.0);
  EXPECT_EQ(shape.scattered, 0.0);  // no column indices: not measured
}

TEST(SpmmHeuristic, ScatteredColumnsOnTheHost) {
  // Row 0: 1 and 7 stay in group 0 with 0, 8, 16 and 40 each start a new one;
  // row 1 has one nonzero and row 2 none (neither counts); row 3's 15 stays
  // with 8. So 3 moves in 6 followers.
  const std::vector<std::int32_t> offsets{0, 6, 7, 7, 9}, cols{0, 1, 7, 8, 16, 40, 5, 8, 15};
  EXPECT_DOUBLE_EQ(spmm::cuda::row_shape_host(offsets.data(), 4, 64, 9, cols.data()).scattered, 0.5);
  // Rows of one nonzero have no followers.
  const std::vector<std::int32_t> diagonal_offsets{0, 1, 2, 3}, diagonal{0, 9, 30};
  EXPECT_EQ(spmm::cuda::row_shape_host(diagonal_offsets.data(), 3, 31, 3, diagonal.data()).scattered, 0.0);
  // Spans: row 0 covers 0..40 (41 columns), row 1 one, row 3 8..15 (8); the
  // empty row 2 does not count. Unsorted columns give the same span.
  EXPECT_DOUBLE_EQ(spmm::cuda::row_shape_host(offsets.data(), 4, 64, 9, cols.data()).span, 50.0 / 3.0);
  const std::vector<std::int32_t> unsorted{40, 1, 7, 8, 16, 0, 5, 15, 8};
  EXPECT_DOUBLE_EQ(spmm::cuda::row_shape_host(offsets.data(), 4, 64, 9, unsorted.data()).span, 50.0 / 3.0);
  EXPECT_EQ(spmm::cuda::row_shape_host(diagonal_offsets.data(), 3, 31, 3, diagonal.data()).span, 1.0);
  EXPECT_EQ(spmm::cuda::row_shape_host(offsets.data(), 4, 64, 9).span, 0.0);  // no columns: not measured
}

TEST(SpmmHeuristic, ColumnSlabsWhereTheBandOfBRowsOutgrowsL2) {
  using spmm::cuda::column_slab;
  constexpr std::size_t l2 = 50u << 20;  // an H100's or H200's; slabs while a band is over 0.4 of it
  // The 7-point Laplacian of 128^3: a band of 32769 B rows, 16.8 MB at 512 bytes.
  spmm::cuda::RowShape lap{2097152, 7.0, 7.0, 2097152};
  lap.span = 32769;
  EXPECT_EQ(column_slab(lap, 1, Precision::fp64, 132, l2), 1);
  EXPECT_EQ(column_slab(lap, 64, Precision::fp64, 132, l2), 64);   // 16.8 MB: fits
  EXPECT_EQ(column_slab(lap, 128, Precision::fp64, 132, l2), 64);  // 33.5 MB: slabs of 512 bytes
  EXPECT_EQ(column_slab(lap, 256, Precision::fp64, 132, l2), 64);
  EXPECT_EQ(column_slab(lap, 200, Precision::fp64, 132, l2), 64);
  EXPECT_EQ(column_slab(lap, 128, Precision::fp32, 132, l2), 128);  // 512 bytes: fits
  EXPECT_EQ(column_slab(lap, 256, Precision::fp32, 132, l2), 128);
  EXPECT_EQ(column_slab(lap, 300, Precision::fp32, 132, l2), 128);  // past the table's widths too
  // A twice broader band fits only in 256-byte slabs.
  spmm::cuda::RowShape broad = lap;
  broad.span = 60000;
  EXPECT_EQ(column_slab(broad, 256, Precision::fp64, 132, l2), 32);
  EXPECT_EQ(column_slab(broad, 256, Precision::fp32, 132, l2), 64);
  EXPECT_EQ(column_slab(broad, 64, Precision::fp64, 132, l2), 32);
  EXPECT_EQ(column_slab(broad, 32, Precision::fp64, 132, l2), 32);  // a slab would be no narrower
  // Nothing fits (random columns over a million rows), or nothing to gain.
  spmm::cuda::RowShape random = lap;
  random.span = 1e6;
  EXPECT_EQ(column_slab(random, 256, Precision::fp64, 132, l2), 256);
  spmm::cuda::RowShape short_rows = lap;
  short_rows.mean = short_rows.max = 4;  // too few B rows reused to pay for reading A again
  EXPECT_EQ(column_slab(short_rows, 256, Precision::fp64, 132, l2), 256);
  spmm::cuda::RowShape skewed = lap;
  skewed.max = 14000;  // merge_based's rows: no slabs
  ASSERT_EQ(spmm::cuda::choose_algorithm(skewed, 256, Precision::fp64, 132), Algorithm::merge_based);
  EXPECT_EQ(column_slab(skewed, 256, Precision::fp64, 132, l2), 256);
  spmm::cuda::RowShape unmeasured = lap;
  unmeasured.span = 0;
  EXPECT_EQ(column_slab(unmeasured, 256, Precision::fp64, 132, l2), 256);
  EXPECT_EQ(column_slab(lap, 256, Precision::fp64, 132, 0), 256);           // L2 not known
  EXPECT_EQ(column_slab(lap, 256, Precision::fp64, 132, 256u << 20), 256);  // a larger L2 holds it
}

// Odd leading dimensions (4- or 8-byte rows only), padded aligned ones, and
// views that start one element into their buffer.
template <class T>
void leading_dimensions() {
  const auto A = irregular_matrix<T>(13);
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 4, 8, 17, 64, 129, 256}) {
    problems.push_back({.n = n, .ldb = n + 1, .ldc = n + 3});
    problems.push_back({.n = n, .beta = 0.5, .ldb = n + 4, .ldc = n + 8});
    problems.push_back({.n = n, .ldb = n + 2, .ldc = n + 2, .b_offset = 1, .c_offset = 2});
    problems.push_back({.n = n, .beta = -1.0, .b_offset = 1, .c_offset = 1});
  }
  check_all_algorithms(A, problems);
}

TYPED_TEST(SpmmKernels, LeadingDimensionsAndAlignment) {
  SKIP_WITHOUT_GPU();
  leading_dimensions<TypeParam>();
}

// n = 1 on rows skewed enough for row_split's stream body (row_stream_pays):
// blocks of short rows, long rows alone (over the long-row limit, and over a
// whole tile), rows split into pieces (the first and last rows among them),
// a run of 600 empty rows (blocks cut at the thread budget), beta = 0 over
// NaN, beta != 0, and the column as a view of wider blocks.
template <class T>
void row_stream_on_skewed_rows() {
  using spmm::cuda::row_stream_piece;
  const auto A = random_csr<T>(20000, 15000, 81, [](std::int64_t row, std::mt19937_64& e) {
    if (row >= 5000 && row < 5600) return std::int64_t(0);
    if (row == 0) return std::int64_t(2 * row_stream_piece + 3);
    if (row == 7000) return std::int64_t(spmm::cuda::row_stream_long_row + 1);
    if (row == 7001) return std::int64_t(spmm::cuda::row_stream_tile(sizeof(T)) + 1);
    if (row == 7002) return std::int64_t(3 * row_stream_piece + 2);
    if (row == 19999) return std::int64_t(row_stream_piece + 1);
    return e() % 100 == 0 ? std::int64_t(300 + e() % 2700) : std::int64_t(e() % 9);
  });
  const spmm::cuda::RowShape shape = spmm::cuda::row_shape_host(A.row_offsets.data(), A.rows, A.cols, A.nnz());
  ASSERT_TRUE(spmm::cuda::row_stream_pays(shape));
  ASSERT_EQ(spmm::cuda::choose_algorithm(shape, 1, precision_of<T>(), 132), Algorithm::row_split);
  ASSERT_EQ(spmm::cuda::row_stream_layout(A.row_offsets, spmm::cuda::row_stream_tile(sizeof(T))).split_rows,
            std::vector<std::int32_t>({0, 7002, 19999}));
  check_all_algorithms(A, {{.n = 1, .seed = 1},
                           {.n = 1, .alpha = -1.5, .beta = 0.5, .seed = 2},
                           {.n = 1, .beta = 2.0, .ldb = 3, .ldc = 2, .b_offset = 1, .c_offset = 1, .seed = 3}});
}

TYPED_TEST(SpmmKernels, RowStreamOnSkewedRows) {
  SKIP_WITHOUT_GPU();
  row_stream_on_skewed_rows<TypeParam>();
}

TEST(SpmmHeuristic, RowStreamOnlyForSkewedRowsAtOneColumn) {
  using spmm::cuda::row_stream_pays;
  using spmm::cuda::RowShape;
  EXPECT_TRUE(row_stream_pays(RowShape{1000000, 20.0, 160.0}));   // skew 8
  EXPECT_FALSE(row_stream_pays(RowShape{1000000, 20.0, 159.0}));  // skew below 8, rows not short
  EXPECT_TRUE(row_stream_pays(RowShape{1000000, 16.0, 64.0}));    // skew 4 on short rows (FA)
  EXPECT_FALSE(row_stream_pays(RowShape{1000000, 16.0, 63.0}));
  EXPECT_FALSE(row_stream_pays(RowShape{1000000, 17.0, 68.0}));
  EXPECT_FALSE(row_stream_pays(RowShape{98892, 101.5, 484.0}));     // mbeacxc: long rows, skew 4.8
  EXPECT_FALSE(row_stream_pays(RowShape{1000000, 7.0, 7.0}));       // a regular mesh
  EXPECT_TRUE(row_stream_pays(RowShape{1000000, 8.0, 100000.0}));   // very long rows go in pieces
  EXPECT_FALSE(row_stream_pays(RowShape{1000, 2.0, 500.0}));        // skewed, but too few rows
  EXPECT_TRUE(row_stream_pays(RowShape{8, 2097152.0, 2097152.0}));  // few rows, each in pieces
  EXPECT_FALSE(row_stream_pays(RowShape{1000, double(spmm::cuda::row_stream_piece), 4096.0}));
  // Regular rows of scattered columns (wing_nodal, a random matrix) from
  // row_split_min_rows rows.
  RowShape scattered{1000000, 14.0, 28.0};
  scattered.scattered = 0.9;
  EXPECT_TRUE(row_stream_pays(scattered));
  scattered.scattered = 0.89;
  EXPECT_FALSE(row_stream_pays(scattered));
  RowShape few_scattered{4095, 14.0, 28.0};
  few_scattered.scattered = 1.0;
  EXPECT_FALSE(row_stream_pays(few_scattered));
  EXPECT_FALSE(row_stream_pays(RowShape{1000000, 0.0, 0.0}));
  const RowShape skewed{1000000, 5.0, 1500.0};
  EXPECT_EQ(spmm::cuda::choose_algorithm(skewed, 1, Precision::fp32), Algorithm::row_split);
  EXPECT_EQ(spmm::cuda::choose_algorithm(skewed, 2, Precision::fp32), Algorithm::merge_based);
  EXPECT_EQ(spmm::cuda::choose_algorithm({8, 2097152.0, 2097152.0}, 1, Precision::fp64), Algorithm::row_split);
  EXPECT_EQ(spmm::cuda::choose_algorithm({8, 2097152.0, 2097152.0}, 2, Precision::fp64), Algorithm::merge_based);
}

TEST(SpmmKernels, BlocksWiderThanOneLaunch) {
  SKIP_WITHOUT_GPU();
  const auto A = irregular_matrix<double>(14);
  check_all_algorithms(A, {{.n = 300}, {.n = 513, .beta = 0.5, .ldb = 515, .ldc = 520}});
  const auto Af = irregular_matrix<float>(15);
  check_all_algorithms(Af, {{.n = 257, .beta = 2.0}});
}

// Wide B rows on a tall matrix: row_split's blocks in row order, a few
// batches a warp (row_split_chunk_batches), with a short last chunk, empty
// rows, odd widths, padded leading dimensions and beta != 0. Tall enough that
// the chunks make their waves on any device of up to 8 blocks an SM.
template <class T>
void row_order_chunks(std::initializer_list<std::int64_t> widths) {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const std::int64_t rows = 2048 * std::int64_t(sms) + 37;
  const auto A = random_csr<T>(rows, rows, 16, [](std::int64_t, std::mt19937_64& e) {
    return e() % 10 == 0 ? std::int64_t(0) : std::int64_t(1 + e() % 6);
  });
  constexpr Precision precision = precision_of<T>();
  std::vector<Problem> problems;
  for (std::int64_t n : widths) {
    // One row a warp, 8 a block, at these widths (32 column lanes).
    const spmm::cuda::RowShape shape{rows, double(A.nnz()) / double(rows), 6.0};
    ASSERT_GT(spmm::cuda::row_split_chunk_batches(n, precision, shape, (rows + 7) / 8, std::int64_t(sms) * 8), 0);
    problems.push_back({.n = n, .seed = std::uint64_t(n)});
    problems.push_back({.n = n, .alpha = -1.5, .beta = 0.5, .ldb = n + 3, .ldc = n + 1});
  }
  check_all_algorithms(A, problems, {Algorithm::row_split});
}

// B rows of 512 and about 1024 bytes in each precision.
TYPED_TEST(SpmmKernels, RowOrderChunks) {
  SKIP_WITHOUT_GPU();
  if constexpr (std::is_same_v<TypeParam, float>)
    row_order_chunks<float>({128, 256});
  else
    row_order_chunks<double>({64, 129});
}

template <class T>
void long_row() {
  // One row of 100k nonzeros alone, and among 5000 short rows.
  const auto alone = random_csr<T>(1, 120000, 21, [](std::int64_t, std::mt19937_64&) { return std::int64_t(100000); });
  const auto among = random_csr<T>(5000, 120000, 22, [](std::int64_t i, std::mt19937_64& e) {
    return i == 2500 ? std::int64_t(100000) : std::int64_t(e() % 9);
  });
  // And among 20000 rows that are mostly empty (runs of 96, longer than the
  // 32-row window the merge kernel's n = 1 body looks ahead).
  const auto sparse_rows = random_csr<T>(20000, 120000, 23, [](std::int64_t i, std::mt19937_64& e) {
    return i == 10000 ? std::int64_t(100000) : i % 97 == 0 ? std::int64_t(1 + e() % 40) : std::int64_t(0);
  });
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 2, 4, 7, 33, 256}) problems.push_back({.n = n});
  problems.push_back({.n = 17, .alpha = 0.5, .beta = 2.0});
  problems.push_back({.n = 2, .alpha = 2.0, .beta = -1.0, .ldb = 5, .ldc = 2});
  problems.push_back({.n = 1, .alpha = -1.5, .beta = 0.5, .ldb = 3, .ldc = 2});
  check_all_algorithms(alone, problems);
  check_all_algorithms(among, problems);
  check_all_algorithms(sparse_rows, problems);
}

// The merge fix-up's two kernels (merge_fixup.cuh) in one launch: segments of
// 32 steps cut rows of 900-1200 nonzeros into 28-38 pieces, on both sides of
// the flat kernel's limit of 32 (the same lengths as the host test
// MergeCarryPlan.OnlyRowsOfManyPiecesTakeTheTreeFixup, which checks that both
// sides are reached), and rows of 40 into two.
template <class T>
void merge_fixup_kernels() {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const auto A = random_csr<T>(129, 5000, 96, [](std::int64_t i, std::mt19937_64&) {
    const std::int64_t lengths[3] = {900 + 7 * (i / 3), 40, 0};
    return lengths[i % 3];
  });
  ASSERT_EQ(spmm::cuda::merge_items_per_segment(A.rows, A.nnz(), sms), 32);
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 8, 32}) problems.push_back({.n = n, .seed = std::uint64_t(n)});
  problems.push_back({.n = 33, .alpha = -1.5, .beta = 0.5, .ldb = 35, .ldc = 34});
  problems.push_back({.n = 129, .alpha = 2.0, .beta = 1.0, .ldb = 131, .ldc = 130, .b_offset = 1});
  check_all_algorithms(A, problems, {Algorithm::merge_based});
}

TYPED_TEST(SpmmKernels, MergeFixupKernels) {
  SKIP_WITHOUT_GPU();
  merge_fixup_kernels<TypeParam>();
}

// The merge kernel's shorter segments for wide B rows (merge_segment_items):
// a matrix big enough that its general segments are longer than those, with
// empty rows and one row in 500 of 200-3000 nonzeros that the short segments
// cut into many carried pieces.
template <class T>
void short_merge_segments() {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const std::int64_t rows = 3100 * std::int64_t(sms) + 11;
  const auto A = random_csr<T>(rows, rows, 95, [](std::int64_t i, std::mt19937_64& e) {
    if (i % 500 == 7) return std::int64_t(200 + e() % 2801);
    return e() % 8 == 0 ? std::int64_t(0) : std::int64_t(1 + e() % 8);
  });
  double longest = 0;
  for (std::int64_t i = 0; i < A.rows; ++i)
    longest = std::max(longest, double(A.row_offsets[std::size_t(i) + 1] - A.row_offsets[std::size_t(i)]));
  const spmm::cuda::RowShape shape{rows, double(A.nnz()) / double(rows), longest};
  const std::int64_t general = spmm::cuda::merge_items_per_segment(rows, A.nnz(), sms);
  for (std::int64_t n : {129, 256})
    ASSERT_LT(spmm::cuda::merge_segment_items(shape, n, precision_of<T>(), sms), general) << n;
  std::vector<Problem> problems;
  problems.push_back({.n = 129, .seed = 129});
  problems.push_back({.n = 256, .alpha = -1.5, .beta = 0.5, .ldb = 260, .ldc = 257, .b_offset = 1});
  problems.push_back({.n = 8, .alpha = 2.0, .beta = 1.0});  // the general segments, after the short ones
  check_all_algorithms(A, problems, {Algorithm::merge_based});
}

TYPED_TEST(SpmmKernels, ShortMergeSegments) {
  SKIP_WITHOUT_GPU();
  short_merge_segments<TypeParam>();
}

TYPED_TEST(SpmmKernels, OneRowOf100kNonzeros) {
  SKIP_WITHOUT_GPU();
  long_row<TypeParam>();
}

// Few long regular rows, the shape for which the merge kernel takes its
// segments across rows (merge_order_across_rows): 60 rows of 15000-25000
// nonzeros, with a few rows of 0-2 between, so that segment boundaries fall
// at every offset of a row and next to short ones.
template <class T>
void merge_order_across_rows() {
  const auto A = random_csr<T>(60, 40000, 91, [](std::int64_t i, std::mt19937_64& e) -> std::int64_t {
    return i % 9 == 4 ? std::int64_t(e() % 3) : std::int64_t(15000 + e() % 10000);
  });
  int multiprocessors = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const double mean = double(A.nnz()) / double(A.rows);
  double longest = 0;
  for (std::int64_t i = 0; i < A.rows; ++i)
    longest = std::max(longest, double(A.row_offsets[std::size_t(i) + 1] - A.row_offsets[std::size_t(i)]));
  ASSERT_TRUE(spmm::cuda::merge_order_pays({A.rows, mean, longest},
                                           spmm::cuda::merge_items_per_segment(A.rows, A.nnz(), multiprocessors)));
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 3, 32, 65, 129}) problems.push_back({.n = n, .seed = std::uint64_t(n)});
  problems.push_back({.n = 20, .alpha = -0.5, .beta = 1.5, .ldb = 23, .ldc = 21});
  check_all_algorithms(A, problems);
}

TYPED_TEST(SpmmKernels, MergeOrderAcrossRows) {
  SKIP_WITHOUT_GPU();
  merge_order_across_rows<TypeParam>();
}

// The merge kernel's narrow body (n = 1, 2, and 4 in fp32; fp64 at n = 4
// takes the general body) on a matrix big enough that its segments hold
// several chunks (the sums carried from chunk to chunk): rows of 20000 that
// span dozens of segments, rows of 300-500 that segment boundaries cut, runs
// of 2000 empty rows (longer than a chunk's row window, and whole segments),
// stretches of rows of one nonzero (chunks that end at the row window), short
// random rows between. beta = 0 over NaN, beta != 0,
// padded leading dimensions, and views whose rows start off the vector
// boundary (the body then loads B element by element).
template <class T>
void merge_spmv_body() {
  const auto A = random_csr<T>(2000000, 2000000, 81, [](std::int64_t i, std::mt19937_64& e) -> std::int64_t {
    if (i % 100003 == 7) return 20000;
    if ((i / 2000) % 50 == 3) return 0;
    if ((i / 5000) % 40 == 11) return 1;
    if (i % 1009 == 0) return std::int64_t(300 + e() % 200);
    return std::int64_t(e() % 8);
  });
  int multiprocessors = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  ASSERT_GT(spmm::cuda::merge_spmv_items_per_segment(A.rows, A.nnz(), multiprocessors),
            spmm::cuda::merge_spmv_max_chunk_items)
      << "segments of one chunk: the test would miss the sums carried between chunks";
  const double mean = double(A.nnz()) / double(A.rows);
  ASSERT_TRUE(spmm::cuda::merge_uses_spmv_body({A.rows, mean, 20000.0}));
  const std::vector<Problem> problems = {{.n = 1, .seed = 5},
                                         {.n = 1, .alpha = -1.5, .beta = 0.5, .ldb = 3, .ldc = 2, .seed = 6},
                                         {.n = 1, .beta = 1.0, .b_offset = 1, .c_offset = 1, .seed = 7},
                                         {.n = 2, .seed = 8},
                                         {.n = 2, .alpha = 0.75, .beta = -0.5, .ldb = 4, .ldc = 5, .seed = 9},
                                         {.n = 2, .ldb = 3, .ldc = 3, .seed = 10},
                                         {.n = 2, .beta = 1.0, .b_offset = 1, .c_offset = 1, .seed = 11},
                                         {.n = 4, .seed = 12},
                                         {.n = 4, .alpha = -1.0, .beta = 0.25, .ldb = 8, .ldc = 6, .seed = 13},
                                         {.n = 4, .ldb = 5, .ldc = 4, .b_offset = 2, .seed = 14}};
  check_all_algorithms(A, problems, {Algorithm::merge_based, Algorithm::automatic});
}

TYPED_TEST(SpmmKernels, MergeSpmvBody) {
  SKIP_WITHOUT_GPU();
  merge_spmv_body<TypeParam>();
}

TEST(SpmmKernels, RowsOfLengthOneAndOnlyEmptyRows) {
  SKIP_WITHOUT_GPU();
  const auto ones = random_csr<double>(3000, 2000, 31, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  const auto empty = random_csr<double>(500, 300, 32, [](std::int64_t, std::mt19937_64&) { return std::int64_t(0); });
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 2, 33, 128}) {
    problems.push_back({.n = n});
    problems.push_back({.n = n, .beta = 0.5});
  }
  check_all_algorithms(ones, problems);
  check_all_algorithms(empty, problems);
  const auto ones_f = random_csr<float>(3000, 2000, 33, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  check_all_algorithms(ones_f, problems);
}

TEST(SpmmKernels, EmptyMatrices) {
  SKIP_WITHOUT_GPU();
  // 0 x k: nothing to do. m x 0: B has no rows, C = beta * C.
  const auto no_rows = random_csr<double>(0, 40, 41, [](std::int64_t, std::mt19937_64&) { return std::int64_t(3); });
  const auto no_cols = random_csr<double>(50, 0, 42, [](std::int64_t, std::mt19937_64&) { return std::int64_t(3); });
  const std::vector<Problem> problems = {{.n = 1}, {.n = 7, .beta = 0.5}, {.n = 129, .beta = 0.0}};
  check_all_algorithms(no_rows, problems);
  check_all_algorithms(no_cols, problems);
}

// The kernels step between B's rows in 32-bit byte strides: a larger stride
// (more than one row) is refused before any launch, with the value named.
// One B row needs no stride, whatever its leading dimension.
TEST(SpmmKernels, RowStridesPast4GiBAreRefused) {
  SKIP_WITHOUT_GPU();
  const spmm::Context context = spmm::Context::cuda(0);
  const auto two = random_csr<double>(3, 2, 71, [](std::int64_t, std::mt19937_64&) { return std::int64_t(2); });
  const auto one = random_csr<double>(3, 1, 72, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  spmm::CsrMatrix<double> A2(Space::device, two), A1(Space::device, one);
  spmm::Buffer<double> c(Space::device, 3), b(Space::device, 1);
  device_sync();
  const std::int64_t huge_ld = (std::int64_t(1) << 29) + 1;  // 8 * ld > 2^32 bytes
  for (Algorithm algorithm : {Algorithm::row_split, Algorithm::merge_based}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    // Never dereferenced: the operands are checked first.
    const spmm::ConstDenseView<double> far(Space::device, 2, 1, huge_ld, reinterpret_cast<const double*>(b.data()));
    auto kernel2 = make_device_spmm<double>(algorithm, context, A2.view());
    try {
      kernel2->multiply(1.0, far, 0.0, spmm::DenseView<double>{Space::device, 3, 1, 1, c.data()});
      ADD_FAILURE() << "a 4 GiB row stride was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(huge_ld)), std::string::npos) << e.what();
    }
    // One row: B(0, 0) only. A1 is 3 x 1, so C = A1 * b.
    const double b0 = 2.5;
    ASSERT_EQ(cudaMemcpy(b.data(), &b0, sizeof b0, cudaMemcpyHostToDevice), cudaSuccess);
    auto kernel1 = make_device_spmm<double>(algorithm, context, A1.view());
    kernel1->multiply(1.0, spmm::ConstDenseView<double>(Space::device, 1, 1, huge_ld, b.data()), 0.0,
                      spmm::DenseView<double>{Space::device, 3, 1, 1, c.data()});
    context.synchronize();
    std::vector<double> got(3);
    ASSERT_EQ(cudaMemcpy(got.data(), c.data(), sizeof(double) * 3, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], one.values[i] * b0) << i;
  }
}

// Skewed rows (so the merge kernel has carries): two runs give the same bits.
TEST(SpmmKernels, DeterministicBits) {
  SKIP_WITHOUT_GPU();
  const auto A = random_csr<double>(20000, 20000, 51, [](std::int64_t i, std::mt19937_64& e) {
    return i % 997 == 0 ? std::int64_t(3000 + e() % 3000) : std::int64_t(e() % 12);
  });
  const spmm::Context context = spmm::Context::cuda(0);
  spmm::CsrMatrix<double> device(Space::device, A);
  device_sync();
  for (Algorithm algorithm : {Algorithm::row_split, Algorithm::merge_based, Algorithm::automatic}) {
    auto kernel = make_device_spmm<double>(algorithm, context, device.view());
    for (std::int64_t n : {1, 2, 4, 17, 128}) {
      const Problem p{.n = n, .beta = 0.5};
      std::vector<double> first, second;
      ASSERT_TRUE(check_against_reference(*kernel, algorithm, context, A, p, &first));
      ASSERT_TRUE(check_against_reference(*kernel, algorithm, context, A, p, &second));
      ASSERT_EQ(first.size(), second.size());
      EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(double)), 0)
          << to_string(algorithm) << " n=" << n << " gave different bits on two runs";
    }
  }
}

// The tolerance of these tests and of spmm-bench's check: positive and finite
// for every row length (the old L eps / (1 - L eps) went negative at a row of
// 8.4M in fp32), the deterministic bound for short rows, and still tight
// enough on a long fp32 row to reject a result with 1% of its terms dropped.
TEST(SpmmKernels, SumErrorBoundStaysMeaningful) {
  const double e32 = std::numeric_limits<float>::epsilon(), e64 = std::numeric_limits<double>::epsilon();
  const std::int64_t lengths[] = {1, 2, 16, 100002, 8388610, std::int64_t(1) << 31};
  for (std::int64_t l : lengths) {
    for (double eps : {e32, e64}) {
      const double g = spmm::sum_error_bound(l, eps), le = double(l) * eps;
      EXPECT_GT(g, 0.0) << l;
      EXPECT_LT(g, 0.05) << l;  // fp32, 2^31 terms: 0.022
      if (le < 0.5) {
        EXPECT_LE(g, le / (1.0 - le)) << l;  // never looser than the worst case
      }
    }
  }
  EXPECT_DOUBLE_EQ(spmm::sum_error_bound(3, e32), 3 * e32 / (1 - 3 * e32));
  // Row of 100k products of uniform [-1, 1) values: sum |a b| ~ 25000, the sum
  // itself ~ 100 (random signs); 1000 dropped terms move it by ~ 10.
  EXPECT_LT(2.0 * spmm::sum_error_bound(100002, e32) * 25000.0, 10.0);
}

// Rows i of 9 nonzeros spread over columns i - h .. i + h: a band of 2h + 1
// B rows, as a mesh numbered layer by layer has.
template <class T>
spmm::HostCsr<T> banded_matrix(std::int64_t rows, std::int64_t h, std::uint64_t seed) {
  return csr_from_columns<T>(rows, rows, seed, [&](std::int64_t i, std::mt19937_64&) {
    std::vector<std::int32_t> cols;
    for (std::int64_t k = -4; k <= 4; ++k)
      cols.push_back(static_cast<std::int32_t>(std::clamp<std::int64_t>(i + k * h / 4, 0, rows - 1)));
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    return cols;
  });
}

// `automatic` in column slabs: a band of B rows sized to this device's L2,
// so that 1-KB (fp32) and 2-KB (fp64) rows of B outgrow it and 512-byte
// slabs do not; the slabbed product against the reference at widths that
// split evenly and unevenly, padded and offset, beta = 0 over NaN and not.
template <class T>
void column_slabs() {
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  const std::int64_t h = std::max<std::int64_t>(4096, std::int64_t(0.4 * l2 / 640) / 2);
  const auto A = banded_matrix<T>(4 * h, h, 71);
  const spmm::Context context = spmm::Context::cuda(0);
  spmm::CsrMatrix<T> device(Space::device, A);
  device_sync();
  spmm::Plan<T> plan(context, device.view());
  const spmm::cuda::RowShape shape =
      spmm::cuda::row_shape_host(A.row_offsets.data(), A.rows, A.cols, A.nnz(), A.col_indices.data());
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const std::int64_t slab_cols = 512 / std::int64_t(sizeof(T));
  for (std::int64_t n : {1, 64, 129, 200, 256, 300})
    EXPECT_EQ(plan.column_slab(n),
              spmm::cuda::column_slab(shape, n, precision_of<T>(), sms, static_cast<std::size_t>(l2)))
        << n;
  EXPECT_EQ(plan.column_slab(256), slab_cols);
  EXPECT_EQ(plan.column_slab(slab_cols), slab_cols);
  spmm::Plan<T> explicit_row_split(context, device.view(), Algorithm::row_split);
  EXPECT_EQ(explicit_row_split.column_slab(256), 256);  // only `automatic` slabs
  std::vector<Problem> problems;
  for (std::int64_t n : {129, 200, 256}) {
    problems.push_back({.n = n, .seed = std::uint64_t(n)});
    problems.push_back({.n = n, .beta = 0.5, .ldb = n + 4, .ldc = n + 8, .seed = std::uint64_t(n) + 1});
    problems.push_back({.n = n, .ldb = n + 1, .ldc = n + 3, .b_offset = 1, .c_offset = 2});
  }
  check_all_algorithms(A, problems, {Algorithm::automatic});
}

TYPED_TEST(SpmmKernels, ColumnSlabs) {
  SKIP_WITHOUT_GPU();
  column_slabs<TypeParam>();
}

TEST(SpmmKernels, PlanResolvesAutomaticToOurKernels) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(spmm::algorithm_available(Algorithm::row_split, Space::device));
  EXPECT_TRUE(spmm::algorithm_available(Algorithm::merge_based, Space::device));
  EXPECT_FALSE(spmm::algorithm_available(Algorithm::row_split, Space::host));
  const spmm::Context context = spmm::Context::cuda(0);
  const auto short_rows =
      random_csr<float>(40000, 40000, 61, [](std::int64_t, std::mt19937_64&) { return std::int64_t(3); });
  const auto long_rows =
      random_csr<double>(40000, 40000, 62, [](std::int64_t, std::mt19937_64&) { return std::int64_t(64); });
  spmm::CsrMatrix<float> s(Space::device, short_rows);
  spmm::CsrMatrix<double> l(Space::device, long_rows);
  device_sync();
  spmm::Plan<float> ps(context, s.view());
  spmm::Plan<double> pl(context, l.view());
  // Resolved once, from the heuristic's table; wider blocks use the n = 256
  // choice. Random columns: scattered, so the n = 1 stream body.
  const auto shape_of = [](const auto& a) {
    return spmm::cuda::row_shape_host(a.row_offsets.data(), a.rows, a.cols, a.nnz(), a.col_indices.data());
  };
  const spmm::cuda::RowShape short_shape = shape_of(short_rows), long_shape = shape_of(long_rows);
  EXPECT_GT(short_shape.scattered, 0.9);
  EXPECT_GT(long_shape.scattered, 0.9);
  EXPECT_TRUE(spmm::cuda::row_stream_pays(short_shape));
  for (std::int64_t n = 1; n <= 300; ++n) {
    const std::int64_t t = std::min<std::int64_t>(n, spmm::max_tabulated_width);
    EXPECT_EQ(ps.algorithm_for(n), spmm::cuda::choose_algorithm(short_shape, t, Precision::fp32)) << n;
    EXPECT_EQ(pl.algorithm_for(n), spmm::cuda::choose_algorithm(long_shape, t, Precision::fp64)) << n;
    EXPECT_TRUE(ps.algorithm_for(n) == Algorithm::row_split || ps.algorithm_for(n) == Algorithm::merge_based);
  }
  // The shape the table sees, with the longest row measured on the device:
  // one row of 3000 among 4999 rows of 2 (and every tenth row empty).
  const auto skewed = random_csr<double>(5000, 5000, 63, [](std::int64_t i, std::mt19937_64&) {
    return i == 4321 ? std::int64_t(3000) : i % 10 == 0 ? std::int64_t(0) : std::int64_t(2);
  });
  spmm::CsrMatrix<double> k(Space::device, skewed);
  device_sync();
  const spmm::cuda::RowShape shape =
      spmm::cuda::row_shape(k.view().row_offsets, skewed.rows, skewed.cols, skewed.nnz());
  EXPECT_EQ(shape.rows, 5000);
  EXPECT_EQ(shape.cols, 5000);
  EXPECT_EQ(shape.max, 3000.0);
  EXPECT_DOUBLE_EQ(shape.mean, double(skewed.nnz()) / 5000.0);
  // Its chunk statistic against the host's, here and on row counts around
  // the 64-row chunks, with runs of long rows and empty ones.
  const auto on_host = spmm::cuda::row_shape_host(skewed.row_offsets.data(), skewed.rows, skewed.cols, skewed.nnz());
  for (int c = 0; c < spmm::cuda::chunk_sizes; ++c) EXPECT_EQ(shape.heaviest_warp[c], on_host.heaviest_warp[c]) << c;
  EXPECT_EQ(shape.scattered, 0.0);  // not asked for
  const auto skewed_scatter =
      spmm::cuda::row_shape(k.view().row_offsets, skewed.rows, skewed.cols, skewed.nnz(), k.view().col_indices);
  EXPECT_EQ(skewed_scatter.scattered, spmm::cuda::row_shape_host(skewed.row_offsets.data(), skewed.rows, skewed.cols,
                                                                 skewed.nnz(), skewed.col_indices.data())
                                          .scattered);
  for (const std::int64_t rows : {1, 7, 63, 64, 65, 1000, 70001}) {
    const auto runs = random_csr<double>(rows, 300, 91, [](std::int64_t i, std::mt19937_64& e) {
      return (i / 40) % 7 == 3 ? std::int64_t(150 + e() % 100) : i % 5 == 0 ? std::int64_t(0) : std::int64_t(e() % 6);
    });
    spmm::CsrMatrix<double> r(Space::device, runs);
    device_sync();
    const auto gpu =
        spmm::cuda::row_shape(r.view().row_offsets, runs.rows, runs.cols, runs.nnz(), r.view().col_indices);
    const auto cpu =
        spmm::cuda::row_shape_host(runs.row_offsets.data(), runs.rows, runs.cols, runs.nnz(), runs.col_indices.data());
    EXPECT_EQ(gpu.max, cpu.max) << rows;
    EXPECT_EQ(gpu.scattered, cpu.scattered) << rows;
    EXPECT_EQ(gpu.span, cpu.span) << rows;
    if (rows >= 1000) {
      EXPECT_GT(cpu.scattered, 0.0) << rows;
    }
    for (int c = 0; c < spmm::cuda::chunk_sizes; ++c)
      EXPECT_EQ(gpu.heaviest_warp[c], cpu.heaviest_warp[c]) << rows << " " << c;
  }
  EXPECT_EQ(spmm::cuda::row_shape(l.view().row_offsets, 40000, long_rows.cols, long_rows.nnz()).max, 64.0);
  // A row 1000 times the mean: a group of lanes a row would leave a warp's
  // other lanes idle behind it, so merge_based at n = 2; at n = 1 row_split's
  // stream body, which splits work by nonzeros. The same mean without the
  // long row: row_split.
  EXPECT_EQ(spmm::cuda::choose_algorithm(shape, 2, Precision::fp64), Algorithm::merge_based);
  EXPECT_EQ(spmm::cuda::choose_algorithm(shape, 2, Precision::fp32), Algorithm::merge_based);
  EXPECT_EQ(spmm::cuda::choose_algorithm(shape, 1, Precision::fp64), Algorithm::row_split);
  EXPECT_EQ(spmm::cuda::choose_algorithm({shape.rows, shape.mean, 3.0}, 1, Precision::fp64), Algorithm::row_split);
  // Few rows: row-split cannot fill the GPU, whatever the mean row length.
  EXPECT_EQ(spmm::cuda::choose_algorithm({2, 1e6, 1e6}, 64, Precision::fp64), Algorithm::merge_based);
  // Explicit choices stay as asked.
  spmm::Plan<float> rs(context, s.view(), Algorithm::row_split);
  EXPECT_EQ(rs.algorithm_for(5), Algorithm::row_split);
  EXPECT_EQ(rs.requested_algorithm(), Algorithm::row_split);
}
}  // namespace
}  // namespace blockeigs::test
