#include "solver/operator/cuda/device_queries.hpp"

#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <array>

#include "core/cuda_checks.hpp"

namespace blockeigs::solver::cuda {

std::string pci_bus_id(int device) {
  constexpr int id_length = 32;  // "dddd:bb:dd.f" and more
  std::array<char, id_length> id{};
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetPCIBusId(id.data(), id_length, device));
  return std::string(id.data());
}

bool mpi_supports_cuda() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace blockeigs::solver::cuda
