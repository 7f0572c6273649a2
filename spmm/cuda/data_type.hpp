// The cudaDataType of an element type, for cuSPARSE and cuBLAS descriptors.
#pragma once

#include <library_types.h>

#include "core/scalar.hpp"

namespace blockeigs::spmm::cuda {

template <class T>
constexpr cudaDataType data_type_of() {
  if constexpr (is_complex_v<T>)
    return sizeof(real_t<T>) == 8 ? CUDA_C_64F : CUDA_C_32F;
  else
    return sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
}

}  // namespace blockeigs::spmm::cuda
