// The device products of spmm/cuda/device_products.hpp where the build has no
// CUDA: no device context exists to reach them; an error if called.
#include "core/error.hpp"
#include "spmm/cuda/device_products.hpp"

namespace blockeigs::spmm::cuda {

void multiply_single_input(const Context&, const CsrView<double>&, ConstDenseView<float>, DenseView<double>, bool) {
  throw Error("multiply_single_input: not compiled with CUDA");
}

void multiply_column_major(const Context&, const CsrView<double>&, double, ColumnMajorView<const double>, double,
                           ColumnMajorView<double>) {
  throw Error("multiply_column_major: not compiled with CUDA");
}

}  // namespace blockeigs::spmm::cuda
