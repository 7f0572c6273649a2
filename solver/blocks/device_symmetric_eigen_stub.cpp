// DeviceSymmetricEigen where the build has no CUDA: ritz_eigen_solver never
// makes one (no context is a device context); an error if made.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"

namespace blockeigs::solver {

// Nothing to hold: the constructor throws.
struct DeviceSymmetricEigen::State {};

DeviceSymmetricEigen::DeviceSymmetricEigen(const dense::Context&) { throw NotCompiled("DeviceSymmetricEigen", "CUDA"); }

DeviceSymmetricEigen::~DeviceSymmetricEigen() = default;

SymmetricEigen DeviceSymmetricEigen::operator()(const HostMatrix&, std::int64_t, std::int64_t) {
  throw NotCompiled("DeviceSymmetricEigen", "CUDA");
}

}  // namespace blockeigs::solver
