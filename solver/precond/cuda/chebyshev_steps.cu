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

template <class T, class U>
__global__ void chebyshev_start_kernel(std::int64_t rows, std::int64_t cols, U c, const U* dinv,
                                       dense::ConstDenseView<T> R, dense::DenseView<U> Q, dense::DenseView<U> E,
                                       dense::DenseView<U> W) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    const U r = static_cast<U>(R.data[i * R.ld + j]);
    const U v = (dinv ? c * dinv[i] : c) * r;
    Q.data[i * Q.ld + j] = r;
    E.data[i * E.ld + j] = v;
    W.data[i * W.ld + j] = v;
  }
}

template <class U>
__global__ void chebyshev_step_kernel(std::int64_t rows, std::int64_t cols, U shift, U alpha, U beta, const U* diag,
                                      const U* dinv, bool write_q, dense::DenseView<U> Q, dense::DenseView<U> E,
                                      dense::DenseView<U> W) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    U& q = Q.data[i * Q.ld + j];
    U& ee = E.data[i * E.ld + j];
    const U qn = q - (diag ? shift * diag[i] : shift) * ee;
    const U en = alpha * ee + (dinv ? beta * dinv[i] : beta) * qn;
    if (write_q) q = qn;
    ee = en;
    W.data[i * W.ld + j] += en;
  }
}

// `out` may be W itself: each thread reads its w before writing its out.
template <class T, class U>
__global__ void chebyshev_finish_kernel(std::int64_t rows, std::int64_t cols, U shift, U alpha, U beta, const U* diag,
                                        const U* dinv, dense::ConstDenseView<U> Q, dense::ConstDenseView<U> E,
                                        dense::ConstDenseView<U> W, dense::DenseView<T> out) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    const U ee = E.data[i * E.ld + j];
    const U qn = Q.data[i * Q.ld + j] - (diag ? shift * diag[i] : shift) * ee;
    const U w = W.data[i * W.ld + j];
    out.data[i * out.ld + j] = static_cast<T>(w + (alpha * ee + (dinv ? beta * dinv[i] : beta) * qn));
  }
}

}  // namespace

template <class T, class U>
void chebyshev_start(const dense::Context& context, U c, const U* dinv, dense::ConstDenseView<T> R,
                     dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W) {
  if (R.rows == 0 || R.cols == 0) return;
  chebyshev_start_kernel<T, U>
      <<<grid_for(R.rows * R.cols), threads_per_block, 0, stream_of(context)>>>(R.rows, R.cols, c, dinv, R, Q, E, W);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class U>
void chebyshev_step(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, bool write_q,
                    dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W) {
  if (Q.rows == 0 || Q.cols == 0) return;
  chebyshev_step_kernel<U><<<grid_for(Q.rows * Q.cols), threads_per_block, 0, stream_of(context)>>>(
      Q.rows, Q.cols, shift, alpha, beta, diag, dinv, write_q, Q, E, W);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T, class U>
void chebyshev_finish(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv,
                      dense::ConstDenseView<U> Q, dense::ConstDenseView<U> E, dense::ConstDenseView<U> W,
                      dense::DenseView<T> out) {
  if (Q.rows == 0 || Q.cols == 0) return;
  chebyshev_finish_kernel<T, U><<<grid_for(Q.rows * Q.cols), threads_per_block, 0, stream_of(context)>>>(
      Q.rows, Q.cols, shift, alpha, beta, diag, dinv, Q, E, W, out);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T, U) BLOCKEIGS_CHEBYSHEV_ENDS(T, U, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_CHEBYSHEV_PAIRS(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE
BLOCKEIGS_CHEBYSHEV_STEPS(float, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_CHEBYSHEV_STEPS(double, BLOCKEIGS_BACKEND_INSTANTIATE)

}  // namespace blockeigs::solver::device_ops
