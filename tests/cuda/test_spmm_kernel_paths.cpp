// Each kernel's own paths against the host reference. Row-split: the wide
// variants, several passes on regular rows, the n = 1 stream body on skewed
// rows, chunks in row order for wide B rows. Merge: one row of 100k nonzeros,
// the fix-up kernels, short segments for wide B rows, segments across long
// regular rows, and the narrow (SpMV) body.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "spmm/heuristic.hpp"
#include "spmm/cuda/row_stream_blocks.hpp"
#include "test_spmm_support.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/typed_precisions.hpp"

namespace blockeigs::test {
namespace {

template <class T>
class SpmmKernels : public GpuTest {};
TYPED_TEST_SUITE(SpmmKernels, Precisions, PrecisionNames);

// A test in one precision: SpmmKernels.Name beside the typed SpmmKernels/Fp32.Name,
// so its fixture lives in a namespace of its own.
namespace one_precision {
class SpmmKernels : public GpuTest {};

// The wide variants (8 B rows in flight per lane: fp64 at n = 16 and 32) on
// rows they are chosen for (regular, mean ~7, like the 7-point Laplacian),
// with beta = 0 over NaN, beta != 0, padded leading dimensions and a short
// last batch of rows; n = 8 and 33 beside them take the usual kernels.
TEST_F(SpmmKernels, WideVariantsFp64) {
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
}  // namespace one_precision

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

TYPED_TEST(SpmmKernels, RegularRowsSeveralPasses) { regular_rows_several_passes<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, RowStreamOnSkewedRows) { row_stream_on_skewed_rows<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, OneRowOf100kNonzeros) { long_row<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, MergeFixupKernels) { merge_fixup_kernels<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, ShortMergeSegments) { short_merge_segments<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, MergeOrderAcrossRows) { merge_order_across_rows<TypeParam>(); }

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

TYPED_TEST(SpmmKernels, MergeSpmvBody) { merge_spmv_body<TypeParam>(); }

}  // namespace
}  // namespace blockeigs::test
