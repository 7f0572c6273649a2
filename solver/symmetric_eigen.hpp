// Eigenpairs of small dense symmetric matrices (tens of rows): LOBPCG's
// projected problems and SVQB's Gram matrices, solved on the host every
// iteration while the device waits. At these sizes LAPACK's drivers spend
// most of their time outside arithmetic (per-call overheads of dozens of
// level-2 calls, divide and conquer's bookkeeping, vectors nobody asked for):
// dsyevd took ~200 us on LOBPCG's 53 x 53 average problem. This solver is
// the same classic method in one pass over contiguous memory:
//
//  1. Householder reduction to tridiagonal form, T = Q^T M Q;
//  2. implicit QL with Wilkinson shifts on T for all eigenvalues, recording
//     its plane rotations instead of applying them to an n x n matrix;
//  3. for only the wanted eigenvalues, the rotations replayed in reverse on
//     unit vectors (count columns, not n), then Q applied to them.
//
// Backward stable like LAPACK's dsteqr path (only orthogonal transforms), so
// repeated and tightly clustered eigenvalues get orthonormal vectors.
#pragma once

#include <cstdint>
#include <vector>

#include "solver/block_ops.hpp"

namespace blockeigs::solver {

struct SymmetricEigen {
  std::vector<double> values;  // all n eigenvalues, ascending
  HostMatrix vectors;          // n x count, orthonormal columns: column c belongs to values[first + c]
};

// M is n x n; only its lower triangle is read. The eigenvectors of the
// ascending eigenvalues [first, first + count) are returned. Deterministic:
// the same bits in give the same bits out. Throws Error if M has non-finite
// entries or QL does not converge (30 sweeps per eigenvalue; not seen for a
// finite symmetric matrix).
SymmetricEigen symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count);

}  // namespace blockeigs::solver
