#include "solver/precond/chebyshev_steps.hpp"

#include <cstdint>

#include "core/checks.hpp"
#include "solver/blocks/block_ops_host_support.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"
#endif

namespace blockeigs::solver {
namespace {

using host_support::on_device;

template <class T>
void require_shapes(spmm::ConstDenseView<T> a, spmm::ConstDenseView<T> b, spmm::ConstDenseView<T> c) {
  BLOCKEIGS_ASSERT(a.rows == b.rows && a.rows == c.rows && a.cols == b.cols && a.cols == c.cols);
  BLOCKEIGS_ASSERT(a.space == b.space && a.space == c.space);
}

}  // namespace

template <class T>
void chebyshev_start(const spmm::Context& context, T c, const T* dinv, spmm::ConstDenseView<T> R,
                     spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W) {
  require_shapes<T>(R, Q, E);
  require_shapes<T>(R, W, W);
  if (on_device(R.space)) {
#ifdef BLOCKEIGS_HAVE_CUDA
    device_ops::chebyshev_start(context, c, dinv, R, Q, E, W);
#endif
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < R.rows; ++i) {
    const T ci = dinv ? c * dinv[i] : c;
    for (std::int64_t j = 0; j < R.cols; ++j) {
      const T r = R.data[i * R.ld + j];
      const T e = ci * r;
      Q.data[i * Q.ld + j] = r;
      E.data[i * E.ld + j] = e;
      W.data[i * W.ld + j] = e;
    }
  }
}

template <class T>
void chebyshev_step(const spmm::Context& context, T shift, T alpha, T beta, const T* diag, const T* dinv,
                    bool write_q, spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W) {
  require_shapes<T>(Q, E, W);
  if (on_device(Q.space)) {
#ifdef BLOCKEIGS_HAVE_CUDA
    device_ops::chebyshev_step(context, shift, alpha, beta, diag, dinv, write_q, Q, E, W);
#endif
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Q.rows; ++i) {
    const T si = diag ? shift * diag[i] : shift;
    const T bi = dinv ? beta * dinv[i] : beta;
    T* q = Q.data + i * Q.ld;
    T* e = E.data + i * E.ld;
    T* w = W.data + i * W.ld;
    for (std::int64_t j = 0; j < Q.cols; ++j) {
      const T qn = q[j] - si * e[j];
      const T en = alpha * e[j] + bi * qn;
      if (write_q) q[j] = qn;
      e[j] = en;
      w[j] += en;
    }
  }
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                       \
  template void chebyshev_start(const spmm::Context&, T, const T*, spmm::ConstDenseView<T>,           \
                                spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>);          \
  template void chebyshev_step(const spmm::Context&, T, T, T, const T*, const T*, bool,               \
                               spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
