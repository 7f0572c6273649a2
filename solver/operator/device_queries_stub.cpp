// Device selection's CUDA queries where the build has no CUDA: no device
// context exists for pci_bus_id to be reached (an error if it is), and MPI is
// never handed device pointers.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/cuda/device_queries.hpp"

namespace blockeigs::solver::cuda {

std::string pci_bus_id(int) { throw NotCompiled("pci_bus_id", "CUDA"); }

bool mpi_supports_cuda() { return false; }

}  // namespace blockeigs::solver::cuda
