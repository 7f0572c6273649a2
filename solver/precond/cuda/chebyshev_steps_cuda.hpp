// Device halves of the Chebyshev recurrence's passes (../chebyshev_steps.hpp),
// one kernel each on the context's stream (cuda/chebyshev_steps.cu), or in a
// build without CUDA chebyshev_steps_stub.cpp, which throws "not compiled with
// CUDA". Private to the solver library.
#pragma once

#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver::device_ops {

template <class T, class U>
void chebyshev_start(const dense::Context& context, U c, const U* dinv, dense::ConstDenseView<T> R,
                     dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W);

template <class U>
void chebyshev_step(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, bool write_q,
                    dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W);

template <class T, class U>
void chebyshev_finish(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv,
                      dense::ConstDenseView<U> Q, dense::ConstDenseView<U> E, dense::ConstDenseView<U> W,
                      dense::DenseView<T> out);

}  // namespace blockeigs::solver::device_ops
