// The device halves of the Chebyshev passes (cuda/chebyshev_steps_cuda.hpp) in
// a build without CUDA: each throws, so that a device view in a CPU-only build
// fails loudly.
#include "core/error.hpp"
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"

namespace blockeigs::solver::device_ops {
namespace {

[[noreturn]] void not_compiled(const char* pass) {
  throw Error(detail::concat(pass, ": a block in device memory, but block-eigs was not compiled with CUDA"));
}

}  // namespace

template <class T, class U>
void chebyshev_start(const spmm::Context&, U, const U*, spmm::ConstDenseView<T>, spmm::DenseView<U>, spmm::DenseView<U>,
                     spmm::DenseView<U>) {
  not_compiled("chebyshev_start");
}

template <class U>
void chebyshev_step(const spmm::Context&, U, U, U, const U*, const U*, bool, spmm::DenseView<U>, spmm::DenseView<U>,
                    spmm::DenseView<U>) {
  not_compiled("chebyshev_step");
}

template <class T, class U>
void chebyshev_finish(const spmm::Context&, U, U, U, const U*, const U*, spmm::ConstDenseView<U>,
                      spmm::ConstDenseView<U>, spmm::ConstDenseView<U>, spmm::DenseView<T>) {
  not_compiled("chebyshev_finish");
}

#define BLOCKEIGS_INSTANTIATE(T, U)                                                                             \
  template void chebyshev_start(const spmm::Context&, U, const U*, spmm::ConstDenseView<T>, spmm::DenseView<U>, \
                                spmm::DenseView<U>, spmm::DenseView<U>);                                        \
  template void chebyshev_finish(const spmm::Context&, U, U, U, const U*, const U*, spmm::ConstDenseView<U>,    \
                                 spmm::ConstDenseView<U>, spmm::ConstDenseView<U>, spmm::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float, float)
BLOCKEIGS_INSTANTIATE(double, double)
BLOCKEIGS_INSTANTIATE(double, float)
#undef BLOCKEIGS_INSTANTIATE

template void chebyshev_step(const spmm::Context&, float, float, float, const float*, const float*, bool,
                             spmm::DenseView<float>, spmm::DenseView<float>, spmm::DenseView<float>);
template void chebyshev_step(const spmm::Context&, double, double, double, const double*, const double*, bool,
                             spmm::DenseView<double>, spmm::DenseView<double>, spmm::DenseView<double>);

}  // namespace blockeigs::solver::device_ops
