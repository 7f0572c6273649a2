// Small dense Cholesky kernels on row-major HostMatrix, on the host: the
// factorisation, triangular solves, the reduction of a symmetric problem to
// standard form and a condition estimate. Shared by SVQB's Cholesky QR
// (svqb.cpp) and LOBPCG's Rayleigh-Ritz (lobpcg/lobpcg_small.cpp). The same
// four for Hermitian matrices through LAPACK (in cholesky.cpp), with
// U^H for U^T.
#pragma once

#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver::small_dense {

// GB = U^T U with U upper triangular (row-major; the lower part left zero).
// False when a pivot is not positive.
bool cholesky_upper(const HostMatrix& GB, HostMatrix& U);

// U^-T A U^-1 (A symmetric n x n, U from cholesky_upper), both triangles.
HostMatrix reduce_to_standard(const HostMatrix& A, const HostMatrix& U);

// Z := U^-1 Z for upper-triangular U (Z is n x m).
void solve_upper(const HostMatrix& U, HostMatrix& Z);

// Reciprocal condition of GB = U^T U in the 1-norm (Hager-Higham estimate, as
// LAPACK's dpocon); 0 where GB is singular to working precision.
double reciprocal_condition(const HostMatrix& GB, const HostMatrix& U);

// GB = U^H U (zpotrf), U^-H A U^-1 (Hermitian to the last bit), U^-1 Z
// (ztrsm) and the reciprocal condition (zpocon): cholesky_upper's
// contracts for Hermitian matrices.
bool cholesky_upper(const ComplexHostMatrix& GB, ComplexHostMatrix& U);
ComplexHostMatrix reduce_to_standard(const ComplexHostMatrix& A, const ComplexHostMatrix& U);
void solve_upper(const ComplexHostMatrix& U, ComplexHostMatrix& Z);
double reciprocal_condition(const ComplexHostMatrix& GB, const ComplexHostMatrix& U);

}  // namespace blockeigs::solver::small_dense
