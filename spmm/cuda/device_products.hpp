// The device halves of multiply_single_input and multiply_column_major
// (spmm/single_input_spmm.hpp, spmm/column_major_spmm.hpp), which check the
// shapes and spaces and then call these for a device context. Implemented in
// cuda/single_input_spmm.cu and cuda/column_major_spmm.cu; in a build
// without CUDA, device_products_stub.cpp throws "not compiled with CUDA".
#pragma once

#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "spmm/column_major_spmm.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::spmm::cuda {

void multiply_single_input(const dense::Context& context, const CsrView<double>& A, dense::ConstDenseView<float> B,
                           dense::DenseView<double> C, bool accumulate);

void multiply_column_major(const dense::Context& context, const CsrView<double>& A, double alpha,
                           dense::ColumnMajorView<const double> B, double beta, dense::ColumnMajorView<double> C);

}  // namespace blockeigs::spmm::cuda
