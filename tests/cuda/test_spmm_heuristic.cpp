// The SpMM heuristic (spmm/heuristic.hpp): its rules on the host
// (row-split passes and chunks, merge segments and order, the n = 1 stream
// body, dense rows, the row shape, column slabs), and `automatic` through
// spmm::Plan on the device: resolved to our kernels from the row shape
// measured there, in column slabs where the band of B rows outgrows the L2.
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
  const dense::Context context = dense::Context::cuda(0);
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

TYPED_TEST(SpmmKernels, ColumnSlabs) { column_slabs<TypeParam>(); }

// A test in one precision: SpmmKernels.Name beside the typed SpmmKernels/Fp32.Name,
// so its fixture lives in a namespace of its own.
namespace one_precision {
class SpmmKernels : public GpuTest {};

TEST_F(SpmmKernels, PlanResolvesAutomaticToOurKernels) {
  EXPECT_TRUE(spmm::algorithm_available(Algorithm::row_split, Space::device));
  EXPECT_TRUE(spmm::algorithm_available(Algorithm::merge_based, Space::device));
  EXPECT_FALSE(spmm::algorithm_available(Algorithm::row_split, Space::host));
  const dense::Context context = dense::Context::cuda(0);
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
}  // namespace one_precision

}  // namespace
}  // namespace blockeigs::test
