// What the kernel choice reads of a device (spmm/heuristic.hpp's
// `multiprocessors` and column_slab's L2 size). device_limits.cpp asks CUDA;
// in a build without CUDA its stub throws "not compiled with CUDA".
#pragma once

#include <cstddef>

namespace blockeigs::spmm::cuda {

struct DeviceLimits {
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
};
DeviceLimits device_limits(int device);

}  // namespace blockeigs::spmm::cuda
