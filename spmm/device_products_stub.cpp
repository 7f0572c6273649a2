// The device products of spmm/cuda/device_products.hpp where the build has no
// CUDA: no device context exists to reach them; an error if called.
#include "core/error.hpp"
#include "spmm/cuda/device_products.hpp"

namespace blockeigs::spmm::cuda {

void multiply_single_input(const dense::Context&, const CsrView<double>&, dense::ConstDenseView<float>,
                           dense::DenseView<double>, bool) {
  throw Error("multiply_single_input: not compiled with CUDA");
}

void multiply_column_major(const dense::Context&, const CsrView<double>&, double, dense::ColumnMajorView<const double>,
                           double, dense::ColumnMajorView<double>) {
  throw Error("multiply_column_major: not compiled with CUDA");
}

}  // namespace blockeigs::spmm::cuda
