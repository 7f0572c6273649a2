// Rank-revealing orthonormalisation of a distributed block (SVQB with
// dropping of numerically dependent directions), shared by LOBPCG and
// block CG. The implementation lives with LOBPCG's (solver/lobpcg_ortho.cpp).
#pragma once

#include "solver/lobpcg_detail.hpp"

namespace blockeigs::solver {

using OrthonormalizeTolerances = lobpcg_detail::Tolerances;

// Makes W's columns orthonormal, dropping dependent directions; the kept ones
// are packed into W's leading columns and their count returned. `scratch`
// has W's rows and at least W.cols columns. Collective.
template <class T>
std::int64_t orthonormalize(const spmm::Context& context, MPI_Comm comm, spmm::DenseView<T> W,
                            spmm::DenseView<T> scratch, const OrthonormalizeTolerances& tol) {
  const spmm::ConstDenseView<T> none{W.space, W.rows, 0, W.ld, W.data};
  return lobpcg_detail::orthonormalize_against(context, comm, none, W, scratch, tol);
}

}  // namespace blockeigs::solver
