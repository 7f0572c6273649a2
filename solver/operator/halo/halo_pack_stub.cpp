// The halo exchange's device kernels (halo/cuda/halo_pack.hpp) where the
// build has no CUDA: a host context never reaches them; an error if called.
#include <cstdint>

#include "core/not_compiled.hpp"
#include "solver/operator/halo/cuda/halo_pack.hpp"

namespace blockeigs::solver::cuda {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

BLOCKEIGS_HALO_PACK_KERNELS(float, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_HALO_PACK_KERNELS(double, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)

}  // namespace blockeigs::solver::cuda
