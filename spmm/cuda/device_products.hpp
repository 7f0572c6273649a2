// The device halves of multiply_single_input and multiply_column_major
// (spmm/single_input_spmm.hpp, spmm/column_major_spmm.hpp), which check the
// shapes and spaces and then call these for a device context. Implemented in
// cuda/single_input_spmm.cu and cuda/column_major_spmm.cu; in a build
// without CUDA, device_products_stub.cpp throws "not compiled with CUDA".
#pragma once

#include "core/backend_lists.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "spmm/column_major_spmm.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::spmm::cuda {

// Each as OP(signature, name) (core/backend_lists.hpp).
#define BLOCKEIGS_SPMM_DEVICE_PRODUCTS(OP)                                                                    \
  OP(void multiply_single_input(const dense::Context& context, const CsrView<double>& A,                      \
                                dense::ConstDenseView<float> B, dense::DenseView<double> C, bool accumulate), \
     "multiply_single_input")                                                                                 \
  OP(void multiply_column_major(const dense::Context& context, const CsrView<double>& A, double alpha,        \
                                dense::ColumnMajorView<const double> B, double beta,                          \
                                dense::ColumnMajorView<double> C),                                            \
     "multiply_column_major")
BLOCKEIGS_SPMM_DEVICE_PRODUCTS(BLOCKEIGS_BACKEND_DECLARE)

}  // namespace blockeigs::spmm::cuda
