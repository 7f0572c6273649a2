#include "spmm/cuda/device_limits.hpp"

#include <cuda_runtime.h>

#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::spmm::cuda {

DeviceLimits device_limits(int device) {
  int multiprocessors = 0, l2 = 0;
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return {multiprocessors, static_cast<std::size_t>(l2)};
}

}  // namespace blockeigs::spmm::cuda
