// Small element-wise kernels on row-major device blocks.
#pragma once

#include <cstdint>

#include "dense/dense.hpp"

namespace blockeigs::spmm::cuda {

// C = beta * C, with beta == 0 writing zeros without reading C.
template <class T>
void scale_block(dense::DenseView<T> C, T beta, void* stream);

}  // namespace blockeigs::spmm::cuda
