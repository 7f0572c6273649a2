// Checking macros for the CUDA runtime, cuSPARSE and cuBLAS (CUDA builds
// only): each throws LibraryError naming the call, the library's message,
// file and line. See core/checks.hpp for MPI and LAPACK.
//
// Debug switch: with BLOCKEIGS_DEBUG_SYNC=1 in the environment (or the CMake
// option BLOCKEIGS_DEBUG_SYNC), BLOCKEIGS_CUDA_CHECK_LAUNCH also synchronises
// the device, so that a kernel's fault is reported at its launch.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/error.hpp"

namespace blockeigs::detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
// Where throwing is not allowed (destructors, cleanup): writes the error to
// stderr and returns false.
bool report_cuda_error(cudaError_t status, const char* call, const char* file, int line);
bool report_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);
// cudaGetLastError after a launch; also cudaDeviceSynchronize when debug_sync().
void check_launch(const char* file, int line);
// Whether the debug switch is on (read once).
bool debug_sync();
}  // namespace blockeigs::detail

#define BLOCKEIGS_CUDA_CHECK(call)                                                         \
  do {                                                                                     \
    cudaError_t blockeigs_status_ = (call);                                                \
    if (blockeigs_status_ != cudaSuccess)                                                  \
      ::blockeigs::detail::throw_cuda_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, and with
// the debug switch on, the kernel's own faults.
#define BLOCKEIGS_CUDA_CHECK_LAUNCH() ::blockeigs::detail::check_launch(__FILE__, __LINE__)

// Destructors and cleanup: the call's error is reported on stderr, not thrown;
// the expression is true when the call succeeded.
#define BLOCKEIGS_CUDA_CHECK_NOTHROW(call) ::blockeigs::detail::report_cuda_error((call), #call, __FILE__, __LINE__)
#define BLOCKEIGS_CUSPARSE_CHECK_NOTHROW(call) \
  ::blockeigs::detail::report_cusparse_error((call), #call, __FILE__, __LINE__)

#define BLOCKEIGS_CUSPARSE_CHECK(call)                                                         \
  do {                                                                                         \
    cusparseStatus_t blockeigs_status_ = (call);                                               \
    if (blockeigs_status_ != CUSPARSE_STATUS_SUCCESS)                                          \
      ::blockeigs::detail::throw_cusparse_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define BLOCKEIGS_CUBLAS_CHECK(call)                                                         \
  do {                                                                                       \
    cublasStatus_t blockeigs_status_ = (call);                                               \
    if (blockeigs_status_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::blockeigs::detail::throw_cublas_error(blockeigs_status_, #call, __FILE__, __LINE__); \
  } while (0)
