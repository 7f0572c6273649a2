// The Chebyshev recurrence's passes on the device: grid-stride loops over a
// block's rows x cols elements, one thread an element (consecutive threads
// take consecutive columns of a row, so row-major blocks are read coalesced).
#include <cuda_runtime.h>

#include <cstdint>

#include "solver/blocks/cuda/device_support.cuh"
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::device_ops {
namespace {

using namespace support;

template <class T>
__global__ void chebyshev_start_kernel(std::int64_t rows, std::int64_t cols, T c, const T* dinv,
                                       spmm::ConstDenseView<T> R, spmm::DenseView<T> Q, spmm::DenseView<T> E,
                                       spmm::DenseView<T> W) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    const T r = R.data[i * R.ld + j];
    const T v = (dinv ? c * dinv[i] : c) * r;
    Q.data[i * Q.ld + j] = r;
    E.data[i * E.ld + j] = v;
    W.data[i * W.ld + j] = v;
  }
}

template <class T>
__global__ void chebyshev_step_kernel(std::int64_t rows, std::int64_t cols, T shift, T alpha, T beta,
                                      const T* diag, const T* dinv, bool write_q, spmm::DenseView<T> Q,
                                      spmm::DenseView<T> E, spmm::DenseView<T> W) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    T& q = Q.data[i * Q.ld + j];
    T& ee = E.data[i * E.ld + j];
    const T qn = q - (diag ? shift * diag[i] : shift) * ee;
    const T en = alpha * ee + (dinv ? beta * dinv[i] : beta) * qn;
    if (write_q) q = qn;
    ee = en;
    W.data[i * W.ld + j] += en;
  }
}

}  // namespace

template <class T>
void chebyshev_start(const spmm::Context& context, T c, const T* dinv, spmm::ConstDenseView<T> R,
                     spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W) {
  if (R.rows == 0 || R.cols == 0) return;
  chebyshev_start_kernel<T><<<grid_for(R.rows * R.cols), threads_per_block, 0, stream_of(context)>>>(
      R.rows, R.cols, c, dinv, R, Q, E, W);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void chebyshev_step(const spmm::Context& context, T shift, T alpha, T beta, const T* diag, const T* dinv,
                    bool write_q, spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W) {
  if (Q.rows == 0 || Q.cols == 0) return;
  chebyshev_step_kernel<T><<<grid_for(Q.rows * Q.cols), threads_per_block, 0, stream_of(context)>>>(
      Q.rows, Q.cols, shift, alpha, beta, diag, dinv, write_q, Q, E, W);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                       \
  template void chebyshev_start(const spmm::Context&, T, const T*, spmm::ConstDenseView<T>,           \
                                spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>);          \
  template void chebyshev_step(const spmm::Context&, T, T, T, const T*, const T*, bool,               \
                               spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::device_ops
