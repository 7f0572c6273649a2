// Orthonormalisation of a filtered block for Chebyshev-filtered subspace
// iteration: columns [first, m) of V made orthogonal to [0, first) (the
// locked, orthonormal columns) and orthonormal among themselves by two passes
// of projection and Cholesky QR of the column-scaled Gram matrix (CholQR2:
// Yamamoto et al. 2015; the second pass makes the first's loss of
// orthogonality, ~eps cond(V)^2, rounding). Where a Gram matrix is not
// positive definite in working precision (cond(V) near 1/sqrt(eps)), the
// pass factors it with a small shift first (shifted CholQR, Fukaya et al.
// 2020) and a third pass follows.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "dense/context.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/symmetric_eigen.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

// `scratch` has V's rows and at least V.cols - first columns. Collective over `comm`
// (a communicator no one else receives on); the small factorisations on rank
// 0 by `factor` (empty: LAPACK on the host), broadcast.
// Complex blocks are made orthonormal in the Hermitian inner product.
template <class T>
void chfsi_orthonormalize(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> V, std::int64_t first,
                          dense::DenseView<T> scratch, const CholeskyInverseOf<small_t<T>>& factor = {});

// The eigenpairs of the projected matrix H (m x m, symmetrised first; made Hermitian where complex) by `eigen`
// on rank 0, its values into `values` (1 x m) and its vectors returned, both on every rank. Collective over `comm`.
template <class S>
HostMatrixOf<S> projected_eigenpairs(MPI_Comm comm, HostMatrixOf<S>& H, const EigenSolverOf<S>& eigen, std::int64_t m,
                                     HostMatrix& values);

}  // namespace blockeigs::solver
