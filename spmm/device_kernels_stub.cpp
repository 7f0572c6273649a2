// The device kernels a Plan builds (spmm/local_spmm.hpp), A's row shape on
// the device and the device's limits where the build has no CUDA: a Plan on
// the host never reaches them; an error if called.
#include <complex>
#include <cstdint>
#include <memory>

#include "core/not_compiled.hpp"
#include "spmm/cuda/device_limits.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

#define BLOCKEIGS_STUBS(T) BLOCKEIGS_SPMM_DEVICE_KERNELS(T, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_STUBS)
#undef BLOCKEIGS_STUBS

// row_shape and device_limits: one function each, of heuristic.hpp and cuda/device_limits.hpp.
namespace cuda {

RowShape row_shape(const std::int32_t*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*) {
  not_compiled("row_shape");
}

DeviceLimits device_limits(int) { not_compiled("device_limits"); }

}  // namespace cuda
}  // namespace blockeigs::spmm
