#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::spmm::detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw LibraryError(blockeigs::detail::concat("CUDA error in ", call, ": ", cudaGetErrorName(status),
                                               " (", cudaGetErrorString(status), ") at ", file, ":", line));
}

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw LibraryError(blockeigs::detail::concat("cuSPARSE error in ", call, ": ",
                                               cusparseGetErrorString(status), " at ", file, ":", line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw LibraryError(blockeigs::detail::concat("cuBLAS error in ", call, ": ",
                                               cublasGetStatusString(status), " at ", file, ":", line));
}

}  // namespace blockeigs::spmm::detail
