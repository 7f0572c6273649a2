// The device products of spmm/cuda/device_products.hpp where the build has no
// CUDA: no device context exists to reach them; an error if called.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "spmm/cuda/device_products.hpp"

namespace blockeigs::spmm::cuda {

void multiply_single_input(const dense::Context&, const CsrView<double>&, dense::ConstDenseView<float>,
                           dense::DenseView<double>, bool) {
  throw NotCompiled("multiply_single_input", "CUDA");
}

void multiply_column_major(const dense::Context&, const CsrView<double>&, double, dense::ColumnMajorView<const double>,
                           double, dense::ColumnMajorView<double>) {
  throw NotCompiled("multiply_column_major", "CUDA");
}

}  // namespace blockeigs::spmm::cuda
