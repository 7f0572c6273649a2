// The device passes of replicated_csr.hpp where the build has no CUDA: never
// reached (no array is a device's there), an error if called.
#include "core/not_compiled.hpp"
#include "solver/operator/replicated_csr.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

BLOCKEIGS_REPLICATED_CSR_DEVICE_PASSES(BLOCKEIGS_BACKEND_STUB)

}  // namespace blockeigs::solver
