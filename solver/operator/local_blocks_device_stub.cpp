// The device split and the diagonal's device twins (local_blocks.hpp) where the build has no CUDA: never
// chosen by split_local_rows(context, rows) or for host arrays (a host context), an error if called.
#include <complex>

#include "core/not_compiled.hpp"
#include "solver/operator/local_blocks.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

BLOCKEIGS_DEVICE_SPLITS(float, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_DEVICE_SPLITS(double, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_DEVICE_COMPLEX_SPLITS(BLOCKEIGS_BACKEND_STUB_SPECIALISATION)

namespace cuda {
#define BLOCKEIGS_STUBS(T) BLOCKEIGS_DIAGONAL_SHIFT(T, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_STUBS)
#undef BLOCKEIGS_STUBS
}  // namespace cuda

}  // namespace blockeigs::solver
