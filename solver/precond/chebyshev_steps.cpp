#include "solver/precond/chebyshev_steps.hpp"

#include <complex>
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

// The passes on real blocks (complex ones come as their parts).
template <class T, class U>
void start_real(const dense::Context& context, U c, const U* dinv, dense::ConstDenseView<T> R, dense::DenseView<U> Q,
                dense::DenseView<U> E, dense::DenseView<U> W) {
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
void step_real(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, bool write_q,
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
void finish_real(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv,
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

}  // namespace

template <class T, class U>
void chebyshev_start(const dense::Context& context, real_t<U> c, const real_t<U>* dinv, dense::ConstDenseView<T> R,
                     dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W) {
  if constexpr (is_complex_v<U>)
    start_real<real_t<T>, real_t<U>>(context, c, dinv, dense::parts_of(R), dense::parts_of(Q), dense::parts_of(E),
                                     dense::parts_of(W));
  else
    start_real<T, U>(context, c, dinv, R, Q, E, W);
}

template <class U>
void chebyshev_step(const dense::Context& context, real_t<U> shift, real_t<U> alpha, real_t<U> beta,
                    const real_t<U>* diag, const real_t<U>* dinv, bool write_q, dense::DenseView<U> Q,
                    dense::DenseView<U> E, dense::DenseView<U> W) {
  if constexpr (is_complex_v<U>)
    step_real<real_t<U>>(context, shift, alpha, beta, diag, dinv, write_q, dense::parts_of(Q), dense::parts_of(E),
                         dense::parts_of(W));
  else
    step_real<U>(context, shift, alpha, beta, diag, dinv, write_q, Q, E, W);
}

template <class T, class U>
void chebyshev_finish(const dense::Context& context, real_t<U> shift, real_t<U> alpha, real_t<U> beta,
                      const real_t<U>* diag, const real_t<U>* dinv, dense::ConstDenseView<U> Q,
                      dense::ConstDenseView<U> E, dense::ConstDenseView<U> W, dense::DenseView<T> out) {
  if constexpr (is_complex_v<U>)
    finish_real<real_t<T>, real_t<U>>(context, shift, alpha, beta, diag, dinv, dense::parts_of(Q), dense::parts_of(E),
                                      dense::parts_of(W), dense::parts_of(out));
  else
    finish_real<T, U>(context, shift, alpha, beta, diag, dinv, Q, E, W, out);
}

#define BLOCKEIGS_INSTANTIATE(T, U)                                                                           \
  template void chebyshev_start(const dense::Context&, real_t<U>, const real_t<U>*, dense::ConstDenseView<T>, \
                                dense::DenseView<U>, dense::DenseView<U>, dense::DenseView<U>);               \
  template void chebyshev_finish(const dense::Context&, real_t<U>, real_t<U>, real_t<U>, const real_t<U>*,    \
                                 const real_t<U>*, dense::ConstDenseView<U>, dense::ConstDenseView<U>,        \
                                 dense::ConstDenseView<U>, dense::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float, float)
BLOCKEIGS_INSTANTIATE(double, double)
BLOCKEIGS_INSTANTIATE(double, float)
BLOCKEIGS_INSTANTIATE(std::complex<float>, std::complex<float>)
BLOCKEIGS_INSTANTIATE(std::complex<double>, std::complex<double>)
BLOCKEIGS_INSTANTIATE(std::complex<double>, std::complex<float>)
#undef BLOCKEIGS_INSTANTIATE

#define BLOCKEIGS_STEP(U)                                                                                \
  template void chebyshev_step(const dense::Context&, real_t<U>, real_t<U>, real_t<U>, const real_t<U>*, \
                               const real_t<U>*, bool, dense::DenseView<U>, dense::DenseView<U>, dense::DenseView<U>);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_STEP)
#undef BLOCKEIGS_STEP

}  // namespace blockeigs::solver
