// The device twins of diagonal_shift.cpp's loops: one thread a row.
#include <cuda_runtime.h>

#include "dense/memory.hpp"
#include "solver/operator/local_blocks.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_complex.cuh"

namespace blockeigs::solver::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t rows) {
  return static_cast<int>(std::min<std::int64_t>((rows + kThreads - 1) / kThreads, 65535));
}

__global__ void positions_kernel(const std::int32_t* offsets, const std::int32_t* cols, std::int64_t rows,
                                 std::int64_t* positions, unsigned long long* missing) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t at = -1;
    for (std::int32_t p = offsets[i]; p < offsets[i + 1]; ++p)
      if (cols[p] == i) at = p;
    positions[i] = at;
    if (at < 0) atomicAdd(missing, 1ULL);
  }
}

template <class T>
__global__ void shift_kernel(T* values, const std::int64_t* positions, const T* diagonal, T shift, std::int64_t rows) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x)
    if (positions[i] >= 0) values[positions[i]] = diagonal[i] + shift;
}

}  // namespace

template <class T>
std::int64_t find_diagonal_positions(const dense::Context& context, const spmm::CsrView<T>& A,
                                     std::int64_t* positions) {
  if (A.rows == 0) return 0;
  const auto stream = static_cast<cudaStream_t>(context.stream());
  dense::Buffer<unsigned long long> missing(Space::device, 1);
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(missing.data(), 0, sizeof(unsigned long long), stream));
  positions_kernel<<<blocks_for(A.rows), kThreads, 0, stream>>>(A.row_offsets, A.col_indices, A.rows, positions,
                                                                missing.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  unsigned long long count = 0;
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&count, missing.data(), sizeof count, cudaMemcpyDeviceToHost, stream));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(count);
}

template <class T>
void set_shifted_diagonal(const dense::Context& context, T* values, const std::int64_t* positions, const T* diagonal,
                          T shift, std::int64_t rows) {
  if (rows == 0) return;
  const auto stream = static_cast<cudaStream_t>(context.stream());
  using spmm::cuda::device_pointer;
  shift_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(device_pointer(values), positions, device_pointer(diagonal),
                                                          spmm::cuda::to_device(shift), rows);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_DIAGONAL(T) BLOCKEIGS_DIAGONAL_SHIFT(T, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_DIAGONAL)
#undef BLOCKEIGS_DIAGONAL

}  // namespace blockeigs::solver::cuda
