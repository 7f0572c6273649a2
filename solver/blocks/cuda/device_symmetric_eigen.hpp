// Large dense symmetric eigenproblems on the device (cuSOLVER's syevd), for
// LOBPCG's Rayleigh-Ritz step at large blocks: its projected problem has 3
// block columns (375 at k = 100). From ~200 rows it beats the host's solver
// (symmetric_eigen.hpp), copies included; below that the host's is faster
// (docs/benchmarks/solvers.md#host-window).
#pragma once

#include <cstdint>
#include <memory>

#include "solver/blocks/symmetric_eigen.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver {

// Rows from which DeviceSymmetricEigen pays.
inline constexpr std::int64_t device_eigen_min_rows = 200;

// symmetric_eigen's contract (every eigenvalue ascending, the eigenvectors of
// [first, first + count)) on the device of a CUDA context, on a stream of its
// own, so that device work already queued on the context's stream does not
// hold it up. Its buffers grow to the largest problem and are kept. The
// vectors' signs may differ from symmetric_eigen's; values and spans agree to
// rounding. Throws Error without CUDA, on a host context, or if the solver
// does not converge.
class DeviceSymmetricEigen {
 public:
  explicit DeviceSymmetricEigen(const dense::Context& context);
  ~DeviceSymmetricEigen();
  DeviceSymmetricEigen(const DeviceSymmetricEigen&) = delete;
  DeviceSymmetricEigen& operator=(const DeviceSymmetricEigen&) = delete;

  SymmetricEigen operator()(const HostMatrix& M, std::int64_t first, std::int64_t count);
  // The Hermitian problem by cuSOLVER's zheevd (buffers of its own).
  HermitianEigen operator()(const ComplexHostMatrix& M, std::int64_t first, std::int64_t count);

 private:
  struct State;
  struct ComplexState;
  std::unique_ptr<State> state_;
  std::unique_ptr<ComplexState> complex_;
};

}  // namespace blockeigs::solver
