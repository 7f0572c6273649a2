// The small Cholesky kernels of cholesky.hpp for Hermitian matrices, through
// LAPACK and BLAS (row-major, upper triangle): LOBPCG's complex Rayleigh-Ritz
// step. The real ones are our own kernels, tuned for tens of rows.
#include <cblas.h>
#include <lapacke.h>

#include <complex>

#include "solver/blocks/cholesky.hpp"

namespace blockeigs::solver::small_dense {
namespace {

using Complex = std::complex<double>;

lapack_complex_double* lapack(Complex* p) { return reinterpret_cast<lapack_complex_double*>(p); }
const lapack_complex_double* lapack(const Complex* p) { return reinterpret_cast<const lapack_complex_double*>(p); }

// U^-1 applied from `side` to the n x m (left) or m x n (right) row-major
// block Z, U^-H where `adjoint`.
void triangular_solve(const ComplexHostMatrix& U, ComplexHostMatrix& Z, CBLAS_SIDE side, bool adjoint) {
  const Complex one(1.0);
  cblas_ztrsm(CblasRowMajor, side, CblasUpper, adjoint ? CblasConjTrans : CblasNoTrans, CblasNonUnit,
              static_cast<blasint>(Z.rows()), static_cast<blasint>(Z.cols()), &one, U.data(),
              static_cast<blasint>(U.rows()), Z.data(), static_cast<blasint>(Z.cols()));
}

}  // namespace

bool cholesky_upper(const ComplexHostMatrix& GB, ComplexHostMatrix& U) {
  const std::int64_t n = GB.rows();
  U = ComplexHostMatrix(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) U(i, j) = GB(i, j);
  if (n == 0) return true;
  const auto ni = static_cast<lapack_int>(n);
  return LAPACKE_zpotrf(LAPACK_ROW_MAJOR, 'U', ni, lapack(U.data()), ni) == 0;
}

ComplexHostMatrix reduce_to_standard(const ComplexHostMatrix& A, const ComplexHostMatrix& U) {
  const std::int64_t n = A.rows();
  ComplexHostMatrix M = A;
  if (n == 0) return M;
  triangular_solve(U, M, CblasLeft, true);    // U^-H A
  triangular_solve(U, M, CblasRight, false);  // (U^-H A) U^-1
  for (std::int64_t i = 0; i < n; ++i) {
    M(i, i) = M(i, i).real();
    for (std::int64_t j = 0; j < i; ++j) M(j, i) = std::conj(M(i, j) = 0.5 * (M(i, j) + std::conj(M(j, i))));
  }
  return M;
}

void solve_upper(const ComplexHostMatrix& U, ComplexHostMatrix& Z) {
  if (U.rows() > 0 && Z.cols() > 0) triangular_solve(U, Z, CblasLeft, false);
}

double reciprocal_condition(const ComplexHostMatrix& GB, const ComplexHostMatrix& U) {
  const std::int64_t n = GB.rows();
  if (n == 0) return 1.0;
  const auto ni = static_cast<lapack_int>(n);
  const double norm = LAPACKE_zlanhe(LAPACK_ROW_MAJOR, '1', 'U', ni, lapack(GB.data()), ni);
  double rcond = 0;
  if (LAPACKE_zpocon(LAPACK_ROW_MAJOR, 'U', ni, lapack(U.data()), ni, norm, &rcond) != 0) return 0;
  return rcond;
}

}  // namespace blockeigs::solver::small_dense
