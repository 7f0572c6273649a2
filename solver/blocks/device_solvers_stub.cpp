// The device's dense solvers where the build has no CUDA: projected_eigen_solver and cholesky_inverse_solver
// never make one (no context is a device context); an error if made.
#include "core/not_compiled.hpp"
#include "solver/blocks/cuda/device_cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"

namespace blockeigs::solver {

// Nothing to hold: the constructors throw.
struct DeviceSymmetricEigen::State {};
struct DeviceSymmetricEigen::ComplexState {};
struct DeviceCholeskyInverse::State {};

DeviceSymmetricEigen::DeviceSymmetricEigen(const dense::Context&) { throw NotCompiled("DeviceSymmetricEigen", "CUDA"); }

DeviceSymmetricEigen::~DeviceSymmetricEigen() = default;

SymmetricEigen DeviceSymmetricEigen::operator()(const HostMatrix&, std::int64_t, std::int64_t) {
  throw NotCompiled("DeviceSymmetricEigen", "CUDA");
}

HermitianEigen DeviceSymmetricEigen::operator()(const ComplexHostMatrix&, std::int64_t, std::int64_t) {
  throw NotCompiled("DeviceSymmetricEigen", "CUDA");
}

DeviceCholeskyInverse::DeviceCholeskyInverse(const dense::Context&) {
  throw NotCompiled("DeviceCholeskyInverse", "CUDA");
}

DeviceCholeskyInverse::~DeviceCholeskyInverse() = default;

bool DeviceCholeskyInverse::operator()(const HostMatrix&, HostMatrix&) {
  throw NotCompiled("DeviceCholeskyInverse", "CUDA");
}

bool DeviceCholeskyInverse::operator()(const ComplexHostMatrix&, ComplexHostMatrix&) {
  throw NotCompiled("DeviceCholeskyInverse", "CUDA");
}

}  // namespace blockeigs::solver
