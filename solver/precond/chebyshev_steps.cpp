#include "solver/precond/chebyshev_steps.hpp"

#include <cstdint>

#include "core/checks.hpp"
#include "solver/blocks/block_ops_host_support.hpp"
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"

namespace blockeigs::solver {
namespace {

using host_support::on_device;

template <class A, class B, class C>
void require_shapes(dense::ConstDenseView<A> a, dense::ConstDenseView<B> b, dense::ConstDenseView<C> c) {
  BLOCKEIGS_ASSERT(a.rows == b.rows && a.rows == c.rows && a.cols == b.cols && a.cols == c.cols);
  BLOCKEIGS_ASSERT(a.space == b.space && a.space == c.space);
}

}  // namespace

template <class T, class U>
void chebyshev_start(const dense::Context& context, U c, const U* dinv, dense::ConstDenseView<T> R,
                     dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W) {
  require_shapes<T, U, U>(R, Q, E);
  require_shapes<T, U, U>(R, W, W);
  if (on_device(R.space)) {
    device_ops::chebyshev_start(context, c, dinv, R, Q, E, W);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < R.rows; ++i) {
    const U ci = dinv ? c * dinv[i] : c;
    for (std::int64_t j = 0; j < R.cols; ++j) {
      const U r = static_cast<U>(R.data[i * R.ld + j]);
      const U e = ci * r;
      Q.data[i * Q.ld + j] = r;
      E.data[i * E.ld + j] = e;
      W.data[i * W.ld + j] = e;
    }
  }
}

template <class U>
void chebyshev_step(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, bool write_q,
                    dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W) {
  require_shapes<U, U, U>(Q, E, W);
  if (on_device(Q.space)) {
    device_ops::chebyshev_step(context, shift, alpha, beta, diag, dinv, write_q, Q, E, W);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Q.rows; ++i) {
    const U si = diag ? shift * diag[i] : shift;
    const U bi = dinv ? beta * dinv[i] : beta;
    U* q = Q.data + i * Q.ld;
    U* e = E.data + i * E.ld;
    U* w = W.data + i * W.ld;
    for (std::int64_t j = 0; j < Q.cols; ++j) {
      const U qn = q[j] - si * e[j];
      const U en = alpha * e[j] + bi * qn;
      if (write_q) q[j] = qn;
      e[j] = en;
      w[j] += en;
    }
  }
}

template <class T, class U>
void chebyshev_finish(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv,
                      dense::ConstDenseView<U> Q, dense::ConstDenseView<U> E, dense::ConstDenseView<U> W,
                      dense::DenseView<T> out) {
  require_shapes<U, U, U>(Q, E, W);
  require_shapes<U, T, T>(Q, out, out);
  if (on_device(Q.space)) {
    device_ops::chebyshev_finish(context, shift, alpha, beta, diag, dinv, Q, E, W, out);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Q.rows; ++i) {
    const U si = diag ? shift * diag[i] : shift;
    const U bi = dinv ? beta * dinv[i] : beta;
    const U* q = Q.data + i * Q.ld;
    const U* e = E.data + i * E.ld;
    const U* w = W.data + i * W.ld;
    T* o = out.data + i * out.ld;
    for (std::int64_t j = 0; j < Q.cols; ++j) {
      const U qn = q[j] - si * e[j];
      o[j] = static_cast<T>(w[j] + (alpha * e[j] + bi * qn));
    }
  }
}

#define BLOCKEIGS_INSTANTIATE(T, U)                                                                                \
  template void chebyshev_start(const dense::Context&, U, const U*, dense::ConstDenseView<T>, dense::DenseView<U>, \
                                dense::DenseView<U>, dense::DenseView<U>);                                         \
  template void chebyshev_finish(const dense::Context&, U, U, U, const U*, const U*, dense::ConstDenseView<U>,     \
                                 dense::ConstDenseView<U>, dense::ConstDenseView<U>, dense::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float, float)
BLOCKEIGS_INSTANTIATE(double, double)
BLOCKEIGS_INSTANTIATE(double, float)
#undef BLOCKEIGS_INSTANTIATE

template void chebyshev_step(const dense::Context&, float, float, float, const float*, const float*, bool,
                             dense::DenseView<float>, dense::DenseView<float>, dense::DenseView<float>);
template void chebyshev_step(const dense::Context&, double, double, double, const double*, const double*, bool,
                             dense::DenseView<double>, dense::DenseView<double>, dense::DenseView<double>);

}  // namespace blockeigs::solver
