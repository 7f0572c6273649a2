// The device products of spmm/cuda/device_products.hpp where the build has no
// CUDA: no device context exists to reach them; an error if called.
#include "core/not_compiled.hpp"
#include "spmm/cuda/device_products.hpp"

namespace blockeigs::spmm::cuda {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

BLOCKEIGS_SPMM_DEVICE_PRODUCTS(BLOCKEIGS_BACKEND_STUB)

}  // namespace blockeigs::spmm::cuda
