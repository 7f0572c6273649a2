// The merge-path search and the snapped segment starts computed on the
// device give exactly what their host twins (the same header, compiled for
// the host) give, on matrices with empty rows, short rows and long rows.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "spmm/cuda/merge_partition.cuh"
#include "dense/memory.hpp"
#include "tests/support/gpu_test.hpp"

namespace {

using blockeigs::spmm::cuda::merge_path_search;
using blockeigs::spmm::cuda::merge_segment_count;
using blockeigs::spmm::cuda::merge_segment_start;
using blockeigs::spmm::cuda::MergeCoordinate;

__global__ void search_every_diagonal(const std::int32_t* offsets, std::int64_t rows, std::int64_t nnz,
                                      std::int64_t* row, std::int64_t* nonzero) {
  for (std::int64_t d = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; d <= rows + nnz;
       d += std::int64_t(gridDim.x) * blockDim.x) {
    const MergeCoordinate c = merge_path_search(d, offsets, rows, nnz);
    row[d] = c.row;
    nonzero[d] = c.nonzero;
  }
}

__global__ void segment_starts(const std::int32_t* offsets, std::int64_t rows, std::int64_t nnz, std::int64_t items,
                               std::int64_t* row, std::int64_t* nonzero) {
  const std::int64_t boundaries = merge_segment_count(rows, nnz, items) + 1;
  for (std::int64_t s = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; s < boundaries;
       s += std::int64_t(gridDim.x) * blockDim.x) {
    const MergeCoordinate c = merge_segment_start(s, items, items / 2, offsets, rows, nnz);
    row[s] = c.row;
    nonzero[s] = c.nonzero;
  }
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, (host.size() + 1) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

template <class T>
std::vector<T> host_copy(const T* device, std::size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

std::vector<std::int32_t> skewed_offsets(int rows, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::int32_t> offsets{0};
  for (int i = 0; i < rows; ++i) {
    const int kind = static_cast<int>(engine() % 10);
    const std::int32_t l = i == rows / 2 ? 100000
                           : kind < 2    ? 0
                           : kind < 9    ? static_cast<std::int32_t>(engine() % 9)
                                         : static_cast<std::int32_t>(engine() % 3000);
    offsets.push_back(offsets.back() + l);
  }
  return offsets;
}

class MergePartitionDevice : public blockeigs::test::GpuTest {};

TEST_F(MergePartitionDevice, SearchAndSegmentStartsMatchTheHost) {
  for (const auto& offsets :
       {skewed_offsets(20000, 1), std::vector<std::int32_t>(1000, 0), std::vector<std::int32_t>{0, 100000}}) {
    const std::int64_t rows = static_cast<std::int64_t>(offsets.size()) - 1, nnz = offsets.back();
    std::int32_t* d_offsets = device_copy(offsets);
    std::int64_t *d_row = nullptr, *d_nonzero = nullptr;
    const std::size_t diagonals = static_cast<std::size_t>(rows + nnz + 1);
    ASSERT_EQ(cudaMalloc(&d_row, diagonals * sizeof(std::int64_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_nonzero, diagonals * sizeof(std::int64_t)), cudaSuccess);

    search_every_diagonal<<<256, 256>>>(d_offsets, rows, nnz, d_row, d_nonzero);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto row = host_copy(d_row, diagonals), nonzero = host_copy(d_nonzero, diagonals);
    std::size_t mismatches = 0;
    for (std::size_t d = 0; d < diagonals; ++d) {
      const MergeCoordinate c = merge_path_search(static_cast<std::int64_t>(d), offsets.data(), rows, nnz);
      mismatches += (c.row != row[d] || c.nonzero != nonzero[d]);
    }
    EXPECT_EQ(mismatches, 0u) << "search, rows " << rows << ", nnz " << nnz;

    for (std::int64_t items : {32, 256, 1024}) {
      const std::size_t boundaries = static_cast<std::size_t>(merge_segment_count(rows, nnz, items) + 1);
      segment_starts<<<64, 256>>>(d_offsets, rows, nnz, items, d_row, d_nonzero);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      row = host_copy(d_row, boundaries);
      nonzero = host_copy(d_nonzero, boundaries);
      mismatches = 0;
      for (std::size_t s = 0; s < boundaries; ++s) {
        const MergeCoordinate c =
            merge_segment_start(static_cast<std::int64_t>(s), items, items / 2, offsets.data(), rows, nnz);
        mismatches += (c.row != row[s] || c.nonzero != nonzero[s]);
      }
      EXPECT_EQ(mismatches, 0u) << "segment starts, items " << items;
      EXPECT_EQ(row.back(), rows);
      EXPECT_EQ(nonzero.back(), nnz);
    }
    cudaFree(d_offsets);
    cudaFree(d_row);
    cudaFree(d_nonzero);
  }
}

}  // namespace
