// The device halves of the Chebyshev passes (cuda/chebyshev_steps_cuda.hpp) in
// a build without CUDA: each throws, so that a device view in a CPU-only build
// fails loudly.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"

namespace blockeigs::solver::device_ops {
namespace {

[[noreturn]] void not_compiled(const char* pass) { throw NotCompiled(pass, "CUDA", "a block in device memory"); }

}  // namespace

template <class T, class U>
void chebyshev_start(const dense::Context&, U, const U*, dense::ConstDenseView<T>, dense::DenseView<U>,
                     dense::DenseView<U>, dense::DenseView<U>) {
  not_compiled("chebyshev_start");
}

template <class U>
void chebyshev_step(const dense::Context&, U, U, U, const U*, const U*, bool, dense::DenseView<U>, dense::DenseView<U>,
                    dense::DenseView<U>) {
  not_compiled("chebyshev_step");
}

template <class T, class U>
void chebyshev_finish(const dense::Context&, U, U, U, const U*, const U*, dense::ConstDenseView<U>,
                      dense::ConstDenseView<U>, dense::ConstDenseView<U>, dense::DenseView<T>) {
  not_compiled("chebyshev_finish");
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

}  // namespace blockeigs::solver::device_ops
