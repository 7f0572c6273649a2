// Eigenpairs of small dense symmetric matrices (tens of rows): LOBPCG's
// projected problems and SVQB's Gram matrices, solved on the host every
// iteration while the device waits. At these sizes LAPACK's drivers spend
// most of their time outside arithmetic (per-call overheads of dozens of
// level-2 calls, divide and conquer's bookkeeping, vectors nobody asked for).
// This solver is the same classic method in one pass over contiguous memory:
//
//  1. Householder reduction to tridiagonal form, T = Q^T M Q;
//  2. implicit QL with Wilkinson shifts on T for all eigenvalues, recording
//     its plane rotations instead of applying them to an n x n matrix;
//  3. for only the wanted eigenvalues, the rotations replayed in reverse on
//     unit vectors (count columns, not n), then Q applied to them.
//
// Backward stable like LAPACK's dsteqr path (only orthogonal transforms), so
// repeated and tightly clustered eigenvalues get orthonormal vectors.
//
// Most of its time is QL's chain of dependent rotations (symmetric_eigen.cpp
// says how a step avoids waiting for a square root); where the time goes,
// against dsyevd: docs/benchmarks/solvers.md#host-window.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

#include "solver/blocks/block_ops.hpp"

// The vector loops of the small dense problems are compiled twice, for
// AVX2 with FMA and for the base instruction set, and the loader picks one
// for the CPU it runs on (GCC's function multiversioning; other compilers
// use the build's own flags): at LOBPCG's sizes (rows of 20 to 60) they are
// bound by loads and short loops, so twice the vector width pays. Helpers
// and lambdas they call are forced inline, so that each copy gets its own
// code instead of calling one built for the base instruction set.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define BLOCKEIGS_SMALL_DENSE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BLOCKEIGS_SMALL_DENSE_CLONES
#endif
#if defined(__GNUC__)
#define BLOCKEIGS_SMALL_DENSE_INLINE __attribute__((always_inline))
#else
#define BLOCKEIGS_SMALL_DENSE_INLINE
#endif

namespace blockeigs::solver {

namespace small_dense {

// Calls block.template operator()<width>(col) over columns [0, cols) in
// blocks of up to 24 columns (multiples of 4, then single ones), for kernels
// that keep a block's running values in registers: at LOBPCG's widths (20)
// a whole row is one block.
template <class Block>
BLOCKEIGS_SMALL_DENSE_INLINE inline void by_column_blocks(std::int64_t cols, Block&& block) {
  for (std::int64_t col = 0; col < cols;) {
    const std::int64_t left = cols - col;
    if (left >= 24) {
      block.template operator()<24>(col);
      col += 24;
      continue;
    }
    switch (left / 4) {
      case 5: block.template operator()<20>(col); break;
      case 4: block.template operator()<16>(col); break;
      case 3: block.template operator()<12>(col); break;
      case 2: block.template operator()<8>(col); break;
      case 1: block.template operator()<4>(col); break;
      default:
        block.template operator()<1>(col);
        col += 1;
        continue;
    }
    col += left / 4 * 4;
  }
}

}  // namespace small_dense

// Eigenpairs of a small symmetric (S = double) or Hermitian (S = complex
// double) matrix: real eigenvalues, vectors of S.
template <class S>
struct EigenOf {
  std::vector<double> values;  // all n eigenvalues, ascending
  HostMatrixOf<S> vectors;     // n x count, orthonormal columns: column c belongs to values[first + c]
};
using SymmetricEigen = EigenOf<double>;
using HermitianEigen = EigenOf<std::complex<double>>;

// M is n x n; only its lower triangle is read. The eigenvectors of the
// ascending eigenvalues [first, first + count) are returned. Deterministic:
// the same bits in give the same bits out. Throws Error if M has non-finite
// entries or QL does not converge (30 sweeps per eigenvalue; not seen for a
// finite symmetric matrix).
SymmetricEigen symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count);

// The n x n symmetric matrix whose lower triangle is M's, into `out` (n x n
// doubles; row-major, so column-major too); throws Error naming the first
// entry that is not finite.
void full_symmetric_copy(const HostMatrix& M, double* out);
// The n x n Hermitian matrix whose lower triangle is M's (the diagonal's real
// parts), column-major into `out`; throws Error on an entry that is not finite.
void full_hermitian_copy(const ComplexHostMatrix& M, std::complex<double>* out);

// A solver with symmetric_eigen's contract, where a caller solves elsewhere
// (LOBPCG: large projected problems on the device, device_symmetric_eigen.hpp);
// for Hermitian matrices the same contract on complex ones.
template <class S>
using EigenSolverOf = std::function<EigenOf<S>(const HostMatrixOf<S>& M, std::int64_t first, std::int64_t count)>;
using SymmetricEigenSolver = EigenSolverOf<double>;
using HermitianEigenSolver = EigenSolverOf<std::complex<double>>;

}  // namespace blockeigs::solver
