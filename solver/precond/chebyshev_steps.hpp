// The Chebyshev recurrence's element-wise passes over whole blocks, each one
// pass over its blocks (chebyshev_preconditioner.cpp states the recurrence).
// On the host an OpenMP loop; on the device one kernel (cuda/), its twin.
// `dinv` and `diag` are local_rows entries in the blocks' space, or null for
// the identity (no Jacobi scaling).
#pragma once

#include "spmm/context.hpp"
#include "spmm/dense.hpp"

namespace blockeigs::solver {

// E = c * dinv o R, W = E, Q = R (o: row scaling).
template <class T>
void chebyshev_start(const spmm::Context& context, T c, const T* dinv, spmm::ConstDenseView<T> R,
                     spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W);

// Per element, in this order: q -= shift * diag_i * e (written back only when
// write_q), e = alpha * e + beta * dinv_i * q, w += e.
template <class T>
void chebyshev_step(const spmm::Context& context, T shift, T alpha, T beta, const T* diag, const T* dinv,
                    bool write_q, spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W);

}  // namespace blockeigs::solver
