// DeviceCholeskyInverse where the build has no CUDA: cholesky_inverse_solver
// never makes one (no context is a device context); an error if made.
#include "core/not_compiled.hpp"
#include "solver/blocks/cuda/device_cholesky.hpp"

namespace blockeigs::solver {

// Nothing to hold: the constructor throws.
struct DeviceCholeskyInverse::State {};

DeviceCholeskyInverse::DeviceCholeskyInverse(const dense::Context&) {
  throw NotCompiled("DeviceCholeskyInverse", "CUDA");
}

DeviceCholeskyInverse::~DeviceCholeskyInverse() = default;

bool DeviceCholeskyInverse::operator()(const HostMatrix&, HostMatrix&) {
  throw NotCompiled("DeviceCholeskyInverse", "CUDA");
}

}  // namespace blockeigs::solver
