// StagedMpiHalo's device half where the build has no CUDA: a host context
// never reaches it; an error if called.
#include "core/not_compiled.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

// Nothing to release: create_copy_streams throws, so nothing was made.
#define BLOCKEIGS_STUBS(T)                                                                         \
  BLOCKEIGS_STAGED_MPI_HALO_DEVICE_HALF(StagedMpiHalo<T>::, BLOCKEIGS_BACKEND_STUB_SPECIALISATION) \
  template <>                                                                                      \
  void StagedMpiHalo<T>::release_copy_streams() noexcept {}
BLOCKEIGS_STUBS(float)
BLOCKEIGS_STUBS(double)
#undef BLOCKEIGS_STUBS

}  // namespace blockeigs::solver
