// Device halves of the Chebyshev recurrence's passes (../chebyshev_steps.hpp),
// one kernel each on the context's stream (cuda/chebyshev_steps.cu), or in a
// build without CUDA chebyshev_steps_stub.cpp, which throws "not compiled with
// CUDA". Private to the solver library.
#pragma once

#include "core/backend_lists.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver::device_ops {

#define BLOCKEIGS_CHEBYSHEV_START(T, U)                                                               \
  void chebyshev_start(const dense::Context& context, U c, const U* dinv, dense::ConstDenseView<T> R, \
                       dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W)
#define BLOCKEIGS_CHEBYSHEV_STEP(U)                                                                          \
  void chebyshev_step(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, \
                      bool write_q, dense::DenseView<U> Q, dense::DenseView<U> E, dense::DenseView<U> W)
#define BLOCKEIGS_CHEBYSHEV_FINISH(T, U)                                                                       \
  void chebyshev_finish(const dense::Context& context, U shift, U alpha, U beta, const U* diag, const U* dinv, \
                        dense::ConstDenseView<U> Q, dense::ConstDenseView<U> E, dense::ConstDenseView<U> W,    \
                        dense::DenseView<T> out)

// Each as OP(signature, name) (core/backend_lists.hpp): the passes that read or write the block of T (the
// operator's precision) for each pair (T, U) of BLOCKEIGS_CHEBYSHEV_PAIRS, U the recurrence's; the step in U
// alone, float and double.
#define BLOCKEIGS_CHEBYSHEV_ENDS(T, U, OP)               \
  OP(BLOCKEIGS_CHEBYSHEV_START(T, U), "chebyshev_start") \
  OP(BLOCKEIGS_CHEBYSHEV_FINISH(T, U), "chebyshev_finish")
#define BLOCKEIGS_CHEBYSHEV_STEPS(U, OP) OP(BLOCKEIGS_CHEBYSHEV_STEP(U), "chebyshev_step")
#define BLOCKEIGS_CHEBYSHEV_PAIRS(X) X(float, float) X(double, double) X(double, float)

template <class T, class U>
BLOCKEIGS_CHEBYSHEV_START(T, U);
template <class U>
BLOCKEIGS_CHEBYSHEV_STEP(U);
template <class T, class U>
BLOCKEIGS_CHEBYSHEV_FINISH(T, U);

}  // namespace blockeigs::solver::device_ops
