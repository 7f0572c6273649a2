// Block preconditioners for the solvers: W = M^{-1} R applied to a whole
// block of residuals at once (so that an implementation can batch its work
// the way the SpMM does). LOBPCG's theory asks for M symmetric positive
// definite; so does block CG's.
#pragma once

#include "dense/dense.hpp"

namespace blockeigs::solver {

// Operator products a preconditioner made inside its applies, so that a
// solver's timing split can keep them apart from its own (seconds on this
// rank's clock, halo exchange included in spmm).
struct PreconditionerWork {
  long long products = 0;  // block products with the operator
  double spmm = 0;         // their time
  double halo = 0;         // of spmm: the halo exchange (the distributed operator's pack, wait, unpack)
};

template <class T>
class Preconditioner {
 public:
  virtual ~Preconditioner() = default;

  // W = M^{-1} R on the local rows. R and W have the same shape, live in the
  // operator's memory space and do not overlap. Collective: every rank calls
  // it with the same block width (an implementation may communicate).
  virtual void apply(dense::ConstDenseView<T> R, dense::DenseView<T> W) = 0;

  // The products made so far (none for a preconditioner that makes none).
  // May wait for the device.
  virtual PreconditionerWork work() { return {}; }
};

}  // namespace blockeigs::solver
