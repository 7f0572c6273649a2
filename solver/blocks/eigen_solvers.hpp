// Which dense symmetric eigensolver a projected problem of n rows takes, by
// where it is solved and how large it is: our own (symmetric_eigen.hpp, fastest
// for tens of rows), LAPACK's divide and conquer on the host for hundreds and
// more (dsyevd, OpenBLAS's threads), cuSOLVER's on the device of a CUDA
// context from device_eigen_min_rows rows (device_symmetric_eigen.hpp).
#pragma once

#include <cstdint>
#include <functional>

#include "dense/context.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {

// Rows from which LAPACK's dsyevd takes a host problem from symmetric_eigen.
inline constexpr std::int64_t lapack_eigen_min_rows = 160;

// LAPACK's dsyevd with symmetric_eigen's contract (every eigenvalue
// ascending, the eigenvectors of [first, first + count)). Throws Error on
// non-finite entries or where it does not converge.
SymmetricEigen lapack_symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count);

// LAPACK's zheevd with the same contract for a Hermitian matrix (its lower
// triangle read).
HermitianEigen lapack_hermitian_eigen(const ComplexHostMatrix& M, std::int64_t first, std::int64_t count);

// A small matrix's pairs on the host where no size rule applies: our own QL
// for a symmetric one (symmetric_eigen), LAPACK's zheevd for a Hermitian one
// (our QL has no complex twin). symmetric_eigen's contract.
template <class S>
EigenOf<S> small_eigen(const HostMatrixOf<S>& M, std::int64_t first, std::int64_t count) {
  if constexpr (is_complex_v<S>)
    return lapack_hermitian_eigen(M, first, count);
  else
    return symmetric_eigen(M, first, count);
}

// A solver for problems of up to `rows` rows made for `context`: cuSOLVER's
// from device_eigen_min_rows on a CUDA context, LAPACK's from
// lapack_eigen_min_rows elsewhere, our own below; each call picks by its own
// size. Hermitian problems (S complex): cuSOLVER's zheevd, else LAPACK's.
template <class S = double>
EigenSolverOf<S> projected_eigen_solver(const dense::Context& context, std::int64_t rows);

// U^-1 for the upper Cholesky factor U of G = U^T U (G = U^H U for Hermitian G; row-major, its upper triangle
// read; the inverse's strictly lower part zero); false where G is not positive definite to the factorisation.
template <class S>
using CholeskyInverseOf = std::function<bool(const HostMatrixOf<S>& G, HostMatrixOf<S>& inverse)>;
using CholeskyInverse = CholeskyInverseOf<double>;

// LAPACK's dpotrf and dtrtri on the host (zpotrf and ztrtri for complex G).
bool lapack_cholesky_inverse(const HostMatrix& G, HostMatrix& inverse);
bool lapack_cholesky_inverse(const ComplexHostMatrix& G, ComplexHostMatrix& inverse);

// A factoriser for problems of up to `rows` rows made for `context`: cuSOLVER's on a CUDA context from
// device_cholesky_min_rows (device_cholesky.hpp), LAPACK's below and elsewhere; each call picks by its size.
template <class S = double>
CholeskyInverseOf<S> cholesky_inverse_solver(const dense::Context& context, std::int64_t rows);

}  // namespace blockeigs::solver
