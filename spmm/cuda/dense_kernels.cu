#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"

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

}  // namespace

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
