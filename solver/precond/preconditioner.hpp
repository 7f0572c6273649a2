// Block preconditioners for the solvers: W = M^{-1} R applied to a whole
// block of residuals at once (so that an implementation can batch its work
// the way the SpMM does). LOBPCG's theory asks for M symmetric positive
// definite; so does block CG's.
#pragma once

#include "spmm/dense.hpp"

namespace blockeigs::solver {

template <class T>
class Preconditioner {
 public:
  virtual ~Preconditioner() = default;

  // W = M^{-1} R on the local rows. R and W have the same shape, live in the
  // operator's memory space and do not overlap. Collective: every rank calls
  // it with the same block width (an implementation may communicate).
  virtual void apply(spmm::ConstDenseView<T> R, spmm::DenseView<T> W) = 0;
};

}  // namespace blockeigs::solver
