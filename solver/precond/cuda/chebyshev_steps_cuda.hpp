// Device halves of the Chebyshev recurrence's passes (../chebyshev_steps.hpp),
// one kernel each on the context's stream (cuda/chebyshev_steps.cu), or in a
// build without CUDA chebyshev_steps_stub.cpp, which throws "not compiled with
// CUDA". Private to the solver library.
#pragma once

#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver::device_ops {

template <class T, class U>
void chebyshev_start(const spmm::Context& context, U c, const U* dinv, spmm::ConstDenseView<T> R, spmm::DenseView<U> Q,
                     spmm::DenseView<U> E, spmm::DenseView<U> W);

template <class U>
void chebyshev_step(const spmm::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, bool write_q,
                    spmm::DenseView<U> Q, spmm::DenseView<U> E, spmm::DenseView<U> W);

template <class T, class U>
void chebyshev_finish(const spmm::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv,
                      spmm::ConstDenseView<U> Q, spmm::ConstDenseView<U> E, spmm::ConstDenseView<U> W,
                      spmm::DenseView<T> out);

}  // namespace blockeigs::solver::device_ops
