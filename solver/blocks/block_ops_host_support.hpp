// Helpers shared by the host halves of the block operations
// (block_ops_host.cpp, block_reductions_host.cpp): dispatch on the views'
// memory space, shape checks, and row-major GEMM in the block's precision.
// Private to the solver library.
#pragma once

#include <cblas.h>

#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/enums.hpp"
#include "core/error.hpp"

namespace blockeigs::solver::host_support {

// Device views go to device_ops (cuda/block_ops_cuda.hpp): the CUDA kernels,
// or in a build without CUDA its stub, which throws "not compiled with CUDA".
inline bool on_device(Space space) { return space == Space::device; }

template <class A, class B>
void require_same_space(const char* what, const A& a, const B& b) {
  if (a.space != b.space)
    throw Error(detail::concat(what, ": blocks in different memory spaces (", to_string(a.space), " and ",
                               to_string(b.space), ")"));
}

template <class A, class B>
void require_same_rows(const char* what, const A& a, const B& b) {
  if (a.rows != b.rows) throw Error(detail::concat(what, ": blocks with ", a.rows, " and ", b.rows, " rows"));
}

// Row-major GEMM through CBLAS in T's precision; for complex T a transpose
// is the conjugate transpose (X^H Y is the complex Gram matrix).
template <class T>
void gemm_row_major(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const auto adjoint = [](CBLAS_TRANSPOSE t) { return t == CblasTrans ? CblasConjTrans : t; };
  if constexpr (std::is_same_v<T, std::complex<double>>)
    cblas_zgemm(CblasRowMajor, adjoint(ta), adjoint(tb), int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb),
                &beta, c, int(ldc));
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasRowMajor, adjoint(ta), adjoint(tb), int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb),
                &beta, c, int(ldc));
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  else
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

}  // namespace blockeigs::solver::host_support
