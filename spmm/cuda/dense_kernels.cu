#include <algorithm>
#include <vector>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/cuda/heuristic.hpp"
#include "spmm/memory.hpp"

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

// Longest row: per-thread maxima, a warp max, one atomicMax per warp into
// *longest (max is exact and order-free: the same answer every run).
__global__ void longest_row_kernel(const std::int32_t* row_offsets, std::int64_t rows, int* longest) {
  int best = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x)
    best = max(best, row_offsets[i + 1] - row_offsets[i]);
  best = __reduce_max_sync(0xffffffffu, best);
  if (threadIdx.x % 32 == 0) atomicMax(longest, best);
}

}  // namespace

RowShape row_shape(const std::int32_t* device_row_offsets, std::int64_t rows, std::int64_t nnz) {
  RowShape shape{rows, rows > 0 ? double(nnz) / double(rows) : 0.0, 0.0};
  if (rows == 0 || nnz == 0) return shape;
  // The offsets may have been uploaded on any stream: wait for all of them,
  // then run on the legacy stream, which the synchronous copy back waits for.
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  Buffer<int> longest(Space::device, std::vector<int>{0});
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((rows + threads - 1) / threads, 4096));
  longest_row_kernel<<<blocks, threads>>>(device_row_offsets, rows, longest.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  shape.max = double(longest.to_host()[0]);
  return shape;
}

template <class T>
void scale_block(DenseView<T> C, T beta, void* stream) {
  if (C.rows == 0 || C.cols == 0 || beta == T(1)) return;
  const std::int64_t total = C.rows * C.cols;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 65536));
  scale_block_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(C.rows, C.cols, C.ld,
                                                                               C.data, beta);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void scale_block(DenseView<float>, float, void*);
template void scale_block(DenseView<double>, double, void*);

}  // namespace blockeigs::spmm::cuda
