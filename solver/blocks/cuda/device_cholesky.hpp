// The inverse of a Cholesky factor on the device (cuSOLVER's potrf and
// trtri), for CholQR of wide blocks (chfsi_ortho.hpp): the host's LAPACK runs
// on one thread beside a GPU (device_selection.cpp), where a factor and
// inverse of 2,000 rows takes a good part of a second.
#pragma once

#include <cstdint>
#include <memory>

#include "dense/context.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

// Rows from which DeviceCholeskyInverse takes a factorisation from the host's LAPACK.
inline constexpr std::int64_t device_cholesky_min_rows = 400;

// U^-1 for the upper Cholesky factor U of G = U^T U (G symmetric, row-major, its upper triangle read) on the
// device of a CUDA context, on a stream of its own; false where G is not positive definite to the
// factorisation or the inverse is not finite. Buffers grow to the largest problem and are kept. Throws
// Error without CUDA or on a host context.
class DeviceCholeskyInverse {
 public:
  explicit DeviceCholeskyInverse(const dense::Context& context);
  ~DeviceCholeskyInverse();
  DeviceCholeskyInverse(const DeviceCholeskyInverse&) = delete;
  DeviceCholeskyInverse& operator=(const DeviceCholeskyInverse&) = delete;

  bool operator()(const HostMatrix& G, HostMatrix& inverse);
  // The Hermitian G = U^H U by zpotrf and trtri in complex double.
  bool operator()(const ComplexHostMatrix& G, ComplexHostMatrix& inverse);

 private:
  template <class S>
  bool factor(const HostMatrixOf<S>& G, HostMatrixOf<S>& inverse);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace blockeigs::solver
