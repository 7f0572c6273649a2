#include "core/cuda_checks.hpp"

#include <cstdio>

#include "core/env_overrides.hpp"

namespace blockeigs::detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw LibraryError(concat("CUDA error in ", call, ": ", cudaGetErrorName(status), " (", cudaGetErrorString(status),
                            ") at ", file, ":", line));
}

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw LibraryError(concat("cuSPARSE error in ", call, ": ", cusparseGetErrorString(status), " at ", file, ":", line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw LibraryError(concat("cuBLAS error in ", call, ": ", cublasGetStatusString(status), " at ", file, ":", line));
}

bool report_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "CUDA error in %s (cleanup, not thrown): %s (%s) at %s:%d\n", call, cudaGetErrorName(status),
               cudaGetErrorString(status), file, line);
  return false;
}

bool report_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status == CUSPARSE_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "cuSPARSE error in %s (cleanup, not thrown): %s at %s:%d\n", call,
               cusparseGetErrorString(status), file, line);
  return false;
}

bool debug_sync() {
#ifdef BLOCKEIGS_DEBUG_SYNC
  return true;
#else
  return env::environment().debug_sync;
#endif
}

void check_launch(const char* file, int line) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) throw_cuda_error(launch, "cudaGetLastError() after a kernel launch", file, line);
  if (debug_sync()) {
    const cudaError_t run = cudaDeviceSynchronize();
    if (run != cudaSuccess)
      throw_cuda_error(run, "cudaDeviceSynchronize() after a kernel launch (BLOCKEIGS_DEBUG_SYNC)", file, line);
  }
}

}  // namespace blockeigs::detail
