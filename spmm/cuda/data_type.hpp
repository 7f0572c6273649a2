// The cudaDataType of an element type, for cuSPARSE and cuBLAS descriptors,
// and a host scalar as those libraries read it.
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

// alpha or beta for cuSPARSE: it reads complex double as cuDoubleComplex,
// 16-byte aligned, where std::complex<double> alone is aligned to 8 (and an
// 8-aligned one crashed cusparseSpMM, CUDA 13.0's cuSPARSE 12.6).
template <class T>
struct alignas(16) LibraryScalar {
  T value{};
};

}  // namespace blockeigs::spmm::cuda
