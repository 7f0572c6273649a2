// The device split of a rank's rows against its host twin, array for array
// and bit for bit, on the awkward shapes of test_local_blocks.cpp and a few
// more: rows longer than a warp, an empty rank, rows without entries, a rank
// whose rows have no diagonal-block entries at all.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "solver/operator/local_blocks.hpp"
#include "dense/context.hpp"
#include "test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::solver::LocalBlocks;
namespace spmm = blockeigs::spmm;
namespace dense = blockeigs::dense;
using blockeigs::Space;

template <class U>
std::vector<U> host_copy(const dense::Buffer<U>& b) {
  return b.to_host();
}

template <class T>
void expect_same_csr(const spmm::CsrMatrix<T>& host, const spmm::CsrMatrix<T>& device, const char* what) {
  const auto h = host.view(), d = device.view();
  EXPECT_EQ(d.space, Space::device) << what;
  ASSERT_EQ(h.rows, d.rows) << what;
  ASSERT_EQ(h.cols, d.cols) << what;
  ASSERT_EQ(h.nnz, d.nnz) << what;
  const auto count = [](std::int64_t n) { return static_cast<std::size_t>(n); };
  std::vector<std::int32_t> offsets(count(d.rows + 1)), cols(count(d.nnz));
  std::vector<T> values(count(d.nnz));
  dense::copy_bytes(offsets.data(), Space::host, d.row_offsets, Space::device, offsets.size() * 4);
  dense::copy_bytes(cols.data(), Space::host, d.col_indices, Space::device, cols.size() * 4);
  dense::copy_bytes(values.data(), Space::host, d.values, Space::device, values.size() * sizeof(T));
  EXPECT_EQ(offsets, std::vector<std::int32_t>(h.row_offsets, h.row_offsets + h.rows + 1)) << what;
  EXPECT_EQ(cols, std::vector<std::int32_t>(h.col_indices, h.col_indices + h.nnz)) << what;
  EXPECT_EQ(values, std::vector<T>(h.values, h.values + h.nnz)) << what;
}

template <class T>
void expect_same_split(const dense::Context& context, const CsrRows& rows) {
  const LocalBlocks<T> host = blockeigs::solver::split_local_rows<T>(rows);
  const LocalBlocks<T> device = blockeigs::solver::split_local_rows_on_device<T>(context, rows);
  expect_same_csr(host.diagonal, device.diagonal, "diagonal block");
  expect_same_csr(host.off_diagonal, device.off_diagonal, "off-diagonal block");
  EXPECT_EQ(host.halo_columns, device.halo_columns);
  EXPECT_EQ(device.off_diagonal_rows.space(), Space::device);
  EXPECT_EQ(host_copy(host.off_diagonal_rows), host_copy(device.off_diagonal_rows));
  EXPECT_EQ(host_copy(host.diagonal_entries), host_copy(device.diagonal_entries));
}

// Rows [first, first + m) of an n x n matrix, each with `length` columns
// spread over the whole matrix (a dense band crossing the rank's range).
CsrRows long_rows(std::int64_t n, std::int64_t first, std::int64_t m, std::int64_t length) {
  CsrRows rows;
  rows.global_rows = rows.global_cols = n;
  rows.first_row = first;
  rows.row_offsets = {0};
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t e = 0; e < length; ++e) {
      rows.col_indices.push_back((e * n) / length + (i % (n / length)));
      rows.values.push_back(1.0 / double(1 + i + e));
    }
    rows.row_offsets.push_back(static_cast<std::int64_t>(rows.col_indices.size()));
  }
  return rows;
}

class LocalBlocksDevice : public blockeigs::test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    context_ = std::make_unique<dense::Context>(dense::Context::cuda(0));
  }
  std::unique_ptr<dense::Context> context_;
};

TEST_F(LocalBlocksDevice, RandomRangesMatchTheHostSplit) {
  using blockeigs::test::random_local_rows;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    expect_same_split<double>(*context_, random_local_rows(200, 60, 70, seed));
    expect_same_split<float>(*context_, random_local_rows(200, 60, 70, seed));
    expect_same_split<double>(*context_, random_local_rows(5000, 0, 2500, seed));
    expect_same_split<double>(*context_, random_local_rows(5000, 4000, 1000, seed));
  }
}

TEST_F(LocalBlocksDevice, WholeMatrixAndLongRows) {
  expect_same_split<double>(*context_, blockeigs::test::random_local_rows(300, 0, 300, 7));
  expect_same_split<double>(*context_, long_rows(10000, 3000, 200, 1000));
  expect_same_split<float>(*context_, long_rows(10000, 0, 50, 5000));
}

TEST_F(LocalBlocksDevice, EmptyRankEmptyRowsAndOnlyRemoteColumns) {
  CsrRows remote;
  remote.global_rows = remote.global_cols = 10;
  remote.first_row = 4;
  remote.row_offsets = {0, 2, 2, 3};  // row 4: columns 0 and 9; row 5 empty; row 6: column 3
  remote.col_indices = {0, 9, 3};
  remote.values = {1, 2, 3};
  expect_same_split<double>(*context_, remote);
  CsrRows none;
  none.global_rows = none.global_cols = 10;
  none.first_row = 10;
  none.row_offsets = {0};
  expect_same_split<double>(*context_, none);
  CsrRows empty_rows;
  empty_rows.global_rows = empty_rows.global_cols = 10;
  empty_rows.first_row = 2;
  empty_rows.row_offsets = {0, 0, 0, 0};
  expect_same_split<double>(*context_, empty_rows);
}

// split_local_rows(context, rows) leaves the blocks in the context's memory
// whichever way it splits them.
TEST_F(LocalBlocksDevice, TheContextsSplitIsInItsMemory) {
  const CsrRows rows = blockeigs::test::random_local_rows(400, 100, 150, 9);
  const LocalBlocks<double> blocks = blockeigs::solver::split_local_rows<double>(*context_, rows);
  EXPECT_EQ(blocks.diagonal.space(), Space::device);
  EXPECT_EQ(blocks.off_diagonal.space(), Space::device);
  expect_same_split<double>(*context_, rows);
}

}  // namespace
