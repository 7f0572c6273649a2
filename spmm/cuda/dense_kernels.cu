#include <algorithm>
#include <vector>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_complex.cuh"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/heuristic.hpp"
#include "dense/memory.hpp"

namespace blockeigs::spmm::cuda {
namespace {

template <class T>
__global__ void scale_block_kernel(std::int64_t rows, std::int64_t cols, std::int64_t ld, T* c, T beta) {
  const std::int64_t total = rows * cols;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    T& x = c[i * ld + j];
    x = beta == T(0) ? T(0) : beta * x;
  }
}

// RowShape::heaviest_warp (max is heaviest_warp[0]). Thread t takes warp
// slot w = t % 8 of the 64-row chunk t / 8, the rows w, w + 8, ..., w + 56:
// its pairs, halves and whole are that warp slot's rows in the chunks of 2, 4
// and 8 batches that fall in the 64 rows (they are aligned within them).
// Per-thread maxima, warp maxima, one atomicMax per warp and size: max is
// exact and order-free, so the same answer every run.
__global__ void heaviest_warp_kernel(const std::int32_t* row_offsets, std::int64_t rows, int* heaviest) {
  constexpr int W = row_split_block_warps, K = 1 << (chunk_sizes - 1);
  int best[chunk_sizes] = {};
  const std::int64_t slots = (rows + W * K - 1) / (W * K) * W;
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < slots;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t first = t / W * (W * K) + t % W;
    int run[K];
    for (int j = 0; j < K; ++j) {
      const std::int64_t i = first + std::int64_t(j) * W;
      run[j] = i < rows ? row_offsets[i + 1] - row_offsets[i] : 0;
    }
    for (int c = 0; c < chunk_sizes; ++c)  // sums over runs of 2^c, in place
      for (int j = 0; j < K; j += 1 << c) {
        if (c > 0) run[j] += run[j + (1 << (c - 1))];
        best[c] = max(best[c], run[j]);
      }
  }
  for (int c = 0; c < chunk_sizes; ++c) {
    const int b = __reduce_max_sync(0xffffffffu, best[c]);
    if (threadIdx.x % 32 == 0) atomicMax(heaviest + c, b);
  }
}

// RowShape::scattered's and ::span's sums: a warp a row, its lanes over the
// row's nonzeros. counts[0] += the nonzeros after a row's first, counts[1] +=
// those whose column group differs from the previous nonzero's, counts[2] +=
// each non-empty row's largest - smallest column + 1, counts[3] += the
// non-empty rows. Integer sums, so the same answer every run.
__global__ void column_stats_kernel(const std::int32_t* row_offsets, const std::int32_t* col_indices, std::int64_t rows,
                                    unsigned long long* counts) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  unsigned followers = 0, moved = 0;  // at most nnz < 2^31 each
  unsigned long long span = 0, nonempty = 0;
  for (std::int64_t i = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int32_t start = row_offsets[i], end = row_offsets[i + 1];
    if (start == end) continue;  // the whole warp: i is the same in every lane
    std::int32_t low = col_indices[start], high = low;
    for (std::int32_t j = start + 1 + lane; j < end; j += 32) {
      const std::int32_t c = col_indices[j];
      ++followers;
      moved += (c >> scattered_group_log2) != (col_indices[j - 1] >> scattered_group_log2);
      low = min(low, c);
      high = max(high, c);
    }
    low = __reduce_min_sync(0xffffffffu, low);
    high = __reduce_max_sync(0xffffffffu, high);
    span += static_cast<unsigned long long>(high - low) + 1;
    ++nonempty;
  }
  followers = __reduce_add_sync(0xffffffffu, followers);
  moved = __reduce_add_sync(0xffffffffu, moved);
  if (lane == 0 && nonempty > 0) {  // span and nonempty: the same in every lane
    atomicAdd(counts, followers);
    atomicAdd(counts + 1, moved);
    atomicAdd(counts + 2, span);
    atomicAdd(counts + 3, nonempty);
  }
}

}  // namespace

RowShape row_shape(const std::int32_t* device_row_offsets, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                   const std::int32_t* device_col_indices) {
  RowShape shape{rows, rows > 0 ? double(nnz) / double(rows) : 0.0, 0.0, cols};
  if (rows == 0 || nnz == 0) return shape;
  // The offsets may have been uploaded on any stream: wait for all of them,
  // then run on the legacy stream, which the synchronous copy back waits for.
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  dense::Buffer<int> heaviest(Space::device, std::vector<int>(chunk_sizes, 0));
  dense::Buffer<unsigned long long> counts(Space::device, std::vector<unsigned long long>(4, 0));
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  const int threads = 256;
  constexpr std::int64_t chunk_rows = std::int64_t(row_split_block_warps) << (chunk_sizes - 1);
  const std::int64_t slots = (rows + chunk_rows - 1) / chunk_rows * row_split_block_warps;
  const int blocks = static_cast<int>(std::min<std::int64_t>((slots + threads - 1) / threads, 4096));
  heaviest_warp_kernel<<<blocks, threads>>>(device_row_offsets, rows, heaviest.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  if (device_col_indices) {
    const std::int64_t row_warps = threads / 32;
    const int row_blocks = static_cast<int>(std::min<std::int64_t>((rows + row_warps - 1) / row_warps, 4096));
    column_stats_kernel<<<row_blocks, threads>>>(device_row_offsets, device_col_indices, rows, counts.data());
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
  }
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int> h = heaviest.to_host();
  for (int c = 0; c < chunk_sizes; ++c) shape.heaviest_warp[c] = double(h[c]);
  shape.max = shape.heaviest_warp[0];
  const std::vector<unsigned long long> c = counts.to_host();
  shape.scattered = c[0] > 0 ? double(c[1]) / double(c[0]) : 0.0;
  shape.span = c[3] > 0 ? double(c[2]) / double(c[3]) : 0.0;
  return shape;
}

template <class T>
void scale_block(dense::DenseView<T> C, T beta, void* stream) {
  if (C.rows == 0 || C.cols == 0 || beta == T(1)) return;
  const std::int64_t total = C.rows * C.cols;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 65536));
  scale_block_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      C.rows, C.cols, C.ld, device_pointer(C.data), to_device(beta));
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T) template void scale_block(dense::DenseView<T>, T, void*);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm::cuda
