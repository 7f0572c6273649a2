// The Chebyshev recurrence's element-wise passes over whole blocks, each one
// pass over its blocks (chebyshev_preconditioner.cpp states the recurrence).
// On the host an OpenMP loop; on the device one kernel (cuda/), its twin.
// The recurrence runs in U; R and the result are in T, the problem's
// precision (T = double, U = float: the fp32 polynomial of an fp64 problem).
// `dinv` and `diag` are local_rows entries in the blocks' space, or null for
// the identity (no Jacobi scaling). Complex blocks (a real polynomial of a
// Hermitian operator: every coefficient and diagonal real) are passed as real
// blocks of twice the columns.
#pragma once

#include "core/scalar.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

// E = c * dinv o R, W = E, Q = R (o: row scaling), rounded to U.
template <class T, class U>
void chebyshev_start(const dense::Context& context, real_t<U> c, const real_t<U>* dinv, dense::ConstDenseView<T> R,
                     dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W);

// Per element, in this order: q -= shift * diag_i * e (written back only when
// write_q), e = alpha * e + beta * dinv_i * q, w += e.
template <class U>
void chebyshev_step(const dense::Context& context, real_t<U> shift, real_t<U> alpha, real_t<U> beta,
                    const real_t<U>* diag, const real_t<U>* dinv, bool write_q, dense::DenseView<U> Q,
                    dense::DenseView<U> E, dense::DenseView<U> W);

// The last step, which keeps only the sum: per element
// out = w + alpha * e + beta * dinv_i * (q - shift * diag_i * e), in T.
// Q and E are not written; `out` may be W itself (where T is U).
template <class T, class U>
void chebyshev_finish(const dense::Context& context, real_t<U> shift, real_t<U> alpha, real_t<U> beta,
                      const real_t<U>* diag, const real_t<U>* dinv, dense::ConstDenseView<U> Q,
                      dense::ConstDenseView<U> E, dense::ConstDenseView<U> W, dense::DenseView<T> out);

}  // namespace blockeigs::solver
