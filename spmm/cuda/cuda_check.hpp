// Checking macros for the CUDA runtime, cuSPARSE and cuBLAS: each throws
// LibraryError naming the call, the library's message, file and line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/error.hpp"

namespace blockeigs::spmm::detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
}  // namespace blockeigs::spmm::detail

#define BLOCKEIGS_CUDA_CHECK(call)                                                      \
  do {                                                                                  \
    cudaError_t blockeigs_status_ = (call);                                             \
    if (blockeigs_status_ != cudaSuccess)                                               \
      ::blockeigs::spmm::detail::throw_cuda_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define BLOCKEIGS_CUDA_CHECK_LAUNCH() BLOCKEIGS_CUDA_CHECK(cudaGetLastError())

#define BLOCKEIGS_CUSPARSE_CHECK(call)                                                  \
  do {                                                                                  \
    cusparseStatus_t blockeigs_status_ = (call);                                        \
    if (blockeigs_status_ != CUSPARSE_STATUS_SUCCESS)                                   \
      ::blockeigs::spmm::detail::throw_cusparse_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define BLOCKEIGS_CUBLAS_CHECK(call)                                                    \
  do {                                                                                  \
    cublasStatus_t blockeigs_status_ = (call);                                          \
    if (blockeigs_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::blockeigs::spmm::detail::throw_cublas_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)
