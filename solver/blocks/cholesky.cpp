// Small dense Cholesky kernels (cholesky.hpp): the rows' updates in
// registers, blocked by by_column_blocks; the Hermitian ones through LAPACK
// and BLAS (row-major, upper triangle) at the end, for LOBPCG's complex
// Rayleigh-Ritz step.
#include "solver/blocks/cholesky.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver::small_dense {
namespace {

// target[u] := (target[u] - sum_k factor[k * factor_stride] * rows[k * ld + u]) * scale
// for u < width: one block of a row of a triangular solve, its sums in
// registers.
template <int width>
BLOCKEIGS_SMALL_DENSE_INLINE inline void subtract_rows(double* target, const double* factor, std::int64_t factor_stride,
                                                       const double* rows, std::int64_t ld, std::int64_t count,
                                                       double scale) {
  double sum[width];
  for (int u = 0; u < width; ++u) sum[u] = target[u];
  for (std::int64_t k = 0; k < count; ++k) {
    const double f = factor[k * factor_stride];
    const double* row = rows + k * ld;
#pragma omp simd
    for (int u = 0; u < width; ++u) sum[u] -= f * row[u];
  }
  for (int u = 0; u < width; ++u) target[u] = sum[u] * scale;
}

// Solves with GB = U^T U for the condition estimate, each a chain of n
// dependent steps: both triangular solves by axpys (U's rows for U^T, its
// columns, kept as the rows of L = U^T, for U), with the diagonal's
// reciprocals, so that a step waits for a multiply-add, not a division or
// a dot product's sum.
struct GramSolver {
  const HostMatrix& U;
  HostMatrix L;
  std::vector<double> inverse_diagonal;

  explicit GramSolver(const HostMatrix& u) : U(u), L(u.rows(), u.rows()), inverse_diagonal(u.rows()) {
    const std::int64_t n = U.rows();
    for (std::int64_t i = 0; i < n; ++i) {
      inverse_diagonal[i] = 1.0 / U(i, i);
      for (std::int64_t j = i; j < n; ++j) L(j, i) = U(i, j);
    }
  }

  // x := GB^-1 x.
  BLOCKEIGS_SMALL_DENSE_CLONES
  void solve(std::vector<double>& x) const {
    const std::int64_t n = U.rows();
    for (std::int64_t k = 0; k < n; ++k) {  // U^T w = x
      const double* uk = U.data() + k * n;
      const double xk = x[k] *= inverse_diagonal[k];
#pragma omp simd
      for (std::int64_t j = k + 1; j < n; ++j) x[j] -= xk * uk[j];
    }
    for (std::int64_t k = n - 1; k >= 0; --k) {  // U y = w
      const double* lk = L.data() + k * n;
      const double xk = x[k] *= inverse_diagonal[k];
#pragma omp simd
      for (std::int64_t j = 0; j < k; ++j) x[j] -= xk * lk[j];
    }
  }
};

double norm1(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += std::abs(v);
  return s;
}

}  // namespace

// GB = U^T U with U upper triangular (row-major; the lower part left zero).
// False when a pivot is not positive. Right-looking, so that every update
// is a contiguous row operation and the rows' updates are independent.
BLOCKEIGS_SMALL_DENSE_CLONES
bool cholesky_upper(const HostMatrix& GB, HostMatrix& U) {
  const std::int64_t n = GB.rows();
  U = HostMatrix(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) U(i, j) = GB(i, j);
  for (std::int64_t k = 0; k < n; ++k) {
    double* uk = &U(k, 0);
    if (!(uk[k] > 0)) return false;
    uk[k] = std::sqrt(uk[k]);
    const double inverse = 1.0 / uk[k];
    for (std::int64_t j = k + 1; j < n; ++j) uk[j] *= inverse;
    for (std::int64_t i = k + 1; i < n; ++i) {
      double* ui = &U(i, 0);
      const double f = uk[i];
#pragma omp simd
      for (std::int64_t j = i; j < n; ++j) ui[j] -= f * uk[j];
    }
  }
  return true;
}

// U^-T A U^-1 (A symmetric n x n, U from cholesky_upper), both triangles.
// Y = U^-T A by rows first; then M = U^-T Y^T, of which only the upper
// triangle is solved for (row i of it needs rows k < i only from column i
// on): 2/3 of the two full solves' work.
BLOCKEIGS_SMALL_DENSE_CLONES
HostMatrix reduce_to_standard(const HostMatrix& A, const HostMatrix& U) {
  const std::int64_t n = A.rows();
  HostMatrix Y = A;
  for (std::int64_t i = 0; i < n; ++i) {
    const double scale = 1.0 / U(i, i);
    by_column_blocks(n, [&]<int width>(std::int64_t col) BLOCKEIGS_SMALL_DENSE_INLINE {
      subtract_rows<width>(&Y(i, col), U.data() + i, n, &Y(0, col), n, i, scale);
    });
  }
  HostMatrix M(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i; j < n; ++j) M(i, j) = Y(j, i);
    const double scale = 1.0 / U(i, i);
    by_column_blocks(n - i, [&]<int width>(std::int64_t col) BLOCKEIGS_SMALL_DENSE_INLINE {
      subtract_rows<width>(&M(i, i + col), U.data() + i, n, &M(0, i + col), n, i, scale);
    });
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j) M(j, i) = M(i, j);
  return M;
}

// Z := U^-1 Z for upper-triangular U, by rows from the last (Z is n x m).
BLOCKEIGS_SMALL_DENSE_CLONES
void solve_upper(const HostMatrix& U, HostMatrix& Z) {
  const std::int64_t n = U.rows(), m = Z.cols();
  for (std::int64_t i = n - 1; i >= 0; --i) {
    const double scale = 1.0 / U(i, i);
    by_column_blocks(m, [&]<int width>(std::int64_t col) BLOCKEIGS_SMALL_DENSE_INLINE {
      subtract_rows<width>(&Z(i, col), U.data() + i * n + i + 1, 1, Z.data() + (i + 1) * m + col, m, n - 1 - i, scale);
    });
  }
}

// Reciprocal condition of GB = U^T U in the 1-norm, 1 / (||GB||_1 times
// an estimate of ||GB^-1||_1): Hager's method with Higham's refinements
// (the estimator of LAPACK's dpocon), a few solves with GB instead of its
// inverse. Our own, because dpocon's safeguarded triangular solves cost more
// than the Cholesky factorisation and the reduction together
// (docs/benchmarks/solvers.md#host-window). Overflow in the solves (GB
// singular to working precision) makes the estimate infinite or NaN, and the
// result 0.
double reciprocal_condition(const HostMatrix& GB, const HostMatrix& U) {
  const std::int64_t n = GB.rows();
  double norm_gb = 0;  // by rows: GB is symmetric
  for (std::int64_t i = 0; i < n; ++i) {
    const double* row = GB.data() + i * n;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (std::int64_t j = 0; j < n; ++j) s += std::abs(row[j]);
    norm_gb = std::max(norm_gb, s);
  }
  if (n == 0) return 1;  // as dpocon: nothing to be ill-conditioned
  if (!(norm_gb > 0)) return 0;
  constexpr int max_steps = 5;
  auto sign_of = [](double v) { return v >= 0 ? 1.0 : -1.0; };
  auto largest_entry = [&](const std::vector<double>& z) {
    std::int64_t j = 0;
    for (std::int64_t i = 1; i < n; ++i)
      if (std::abs(z[i]) > std::abs(z[j])) j = i;
    return j;
  };
  // Hager: maximise ||GB^-1 x||_1 over ||x||_1 = 1 by steps to the vertex
  // e_j that the gradient sign(GB^-1 x)^T GB^-1 favours (GB symmetric).
  const GramSolver gram_solver(U);
  auto solve_gram = [&](std::vector<double>& v) { gram_solver.solve(v); };
  std::vector<double> x(static_cast<std::size_t>(n), 1.0 / double(n)), signs(static_cast<std::size_t>(n));
  solve_gram(x);
  double estimate = norm1(x);
  if (n > 1) {
    for (std::int64_t i = 0; i < n; ++i) signs[i] = sign_of(x[i]);
    std::vector<double> z = signs;
    solve_gram(z);
    std::int64_t j = largest_entry(z);
    for (int step = 1; step < max_steps; ++step) {
      std::fill(x.begin(), x.end(), 0.0);
      x[j] = 1;
      solve_gram(x);
      const double previous = estimate;
      estimate = norm1(x);
      bool same_signs = true;
      for (std::int64_t i = 0; i < n; ++i) same_signs = same_signs && sign_of(x[i]) == signs[i];
      if (same_signs || !(estimate > previous)) {
        estimate = std::max(estimate, previous);
        break;
      }
      for (std::int64_t i = 0; i < n; ++i) signs[i] = sign_of(x[i]);
      z = signs;
      solve_gram(z);
      const std::int64_t last = j;
      j = largest_entry(z);
      if (std::abs(z[last]) == std::abs(z[j])) break;
    }
    // Higham's safeguard: a vector of alternating signs and growing size,
    // which catches the matrices that fool the steps above.
    for (std::int64_t i = 0; i < n; ++i) x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + double(i) / double(n - 1));
    solve_gram(x);
    estimate = std::max(estimate, 2 * norm1(x) / (3 * double(n)));
  }
  if (!std::isfinite(estimate) || !(estimate > 0)) return 0;
  return 1.0 / (norm_gb * estimate);
}

// ---- Hermitian matrices ----------------------------------------------------
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
