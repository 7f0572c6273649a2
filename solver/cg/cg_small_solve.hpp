// Block CG's small solves, done on rank 0 and broadcast so every rank takes
// the same branch: Delta = P^T A P (P^H A P for complex blocks) is
// Cholesky-factored (its failure means A is not positive definite on span P)
// and applied to right-hand sides. LAPACK's info travels with the broadcast
// data, so that a LAPACK failure is thrown on every rank alike.
#pragma once

#include <mpi.h>

#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver::cg_detail {

template <class S>
struct SmallSolve {
  HostMatrixOf<S> factor;  // Cholesky factor of Delta (lower), r x r
  bool positive_definite = true;
  double smallest_diagonal = 0;
};

// Delta's factor; positive_definite false (and no factor) where a diagonal entry or a leading minor rules it
// out. Collective.
template <class S>
SmallSolve<S> factor_delta(MPI_Comm comm, const HostMatrixOf<S>& delta);

// sign * Delta^{-1} rhs (r x a). Collective.
template <class S>
HostMatrixOf<S> solve_delta(MPI_Comm comm, const SmallSolve<S>& delta, HostMatrixOf<S> rhs, double sign);

}  // namespace blockeigs::solver::cg_detail
