// Device halves of the Chebyshev recurrence's passes (../chebyshev_steps.hpp),
// one kernel each on the context's stream. Private to the solver library.
#pragma once

#ifdef BLOCKEIGS_HAVE_CUDA

#include "spmm/context.hpp"
#include "spmm/dense.hpp"

namespace blockeigs::solver::device_ops {

template <class T>
void chebyshev_start(const spmm::Context& context, T c, const T* dinv, spmm::ConstDenseView<T> R,
                     spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W);

template <class T>
void chebyshev_step(const spmm::Context& context, T shift, T alpha, T beta, const T* diag, const T* dinv,
                    bool write_q, spmm::DenseView<T> Q, spmm::DenseView<T> E, spmm::DenseView<T> W);

}  // namespace blockeigs::solver::device_ops

#endif
