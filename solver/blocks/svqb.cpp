// SVQB and Cholesky QR transforms of a Gram matrix (orthonormalize.hpp:
// svqb_transform, well_conditioned_transform), on the host: what the
// distributed orthonormalisation applies to its blocks. Real Gram matrices
// take our small dense kernels; Hermitian ones LAPACK's.
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "solver/blocks/cholesky.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {
namespace {

// A Gram matrix's live columns (not zero, not numerically inside span(Q) by
// reference_sq_norms) and the unit-diagonal form of its symmetric part over
// them, M = D G D with D = diag(G_jj^-1/2): what SVQB and Cholesky QR share.
template <class S>
struct UnitDiagonalForm {
  std::vector<std::int64_t> live;
  std::vector<double> d;
  HostMatrixOf<S> M;
};

template <class S>
UnitDiagonalForm<S> unit_diagonal_form(const HostMatrixOf<S>& G, const OrthonormalizeTolerances& tol,
                                       const std::vector<double>* reference_sq_norms) {
  UnitDiagonalForm<S> f;
  for (std::int64_t j = 0; j < G.rows(); ++j) {
    const double g = std::real(G(j, j));
    if (!(g > 0) || !std::isfinite(g)) continue;
    if (reference_sq_norms && g <= tol.remainder * tol.remainder * (*reference_sq_norms)[j]) continue;
    f.live.push_back(j);
  }
  const auto m = static_cast<std::int64_t>(f.live.size());
  f.d.resize(static_cast<std::size_t>(m));
  for (std::int64_t a = 0; a < m; ++a) f.d[a] = 1.0 / std::sqrt(std::real(G(f.live[a], f.live[a])));
  f.M = HostMatrixOf<S>(m, m);
  for (std::int64_t a = 0; a < m; ++a)
    for (std::int64_t b = 0; b < m; ++b)
      f.M(a, b) = 0.5 * (G(f.live[a], f.live[b]) + conj_of(G(f.live[b], f.live[a]))) * f.d[a] * f.d[b];
  return f;
}

// SVQB from the form, T n x kept (see svqb_transform).
template <class S>
HostMatrixOf<S> svqb_of_form(const UnitDiagonalForm<S>& f, std::int64_t n, const OrthonormalizeTolerances& tol,
                             double* kept_ratio) {
  if (kept_ratio) *kept_ratio = 1;
  const auto m = static_cast<std::int64_t>(f.live.size());
  if (m == 0) return HostMatrixOf<S>(n, 0);
  const EigenOf<S> eig = small_eigen(f.M, 0, m);
  const std::vector<double>& theta = eig.values;
  const double threshold = tol.drop_per_column * double(m) * theta.back();
  std::vector<std::int64_t> kept;  // largest theta first: the best-determined directions lead
  for (std::int64_t i = m - 1; i >= 0; --i)
    if (theta[i] > threshold) kept.push_back(i);
  if (kept_ratio && !kept.empty()) *kept_ratio = theta[kept.back()] / theta[kept.front()];
  HostMatrixOf<S> T(n, static_cast<std::int64_t>(kept.size()));
  for (std::size_t c = 0; c < kept.size(); ++c) {
    const double s = 1.0 / std::sqrt(theta[kept[c]]);
    for (std::int64_t a = 0; a < m; ++a) T(f.live[a], std::int64_t(c)) = f.d[a] * eig.vectors(a, kept[c]) * s;
  }
  return T;
}

// The Cholesky QR transform T = D U^-1 of a Hermitian unit-diagonal form M = U^H U by LAPACK (zpotrf, zpocon
// for the reciprocal condition in the 1-norm, ztrtri); false where M is not safely positive definite.
bool complex_cholesky_transform(const UnitDiagonalForm<std::complex<double>>& f, const OrthonormalizeTolerances& tol,
                                ComplexHostMatrix& T, double& rcond) {
  const std::int64_t n = f.M.rows();
  const auto ni = static_cast<lapack_int>(n);
  double anorm = 0;  // the 1-norm of M (Hermitian: the largest column sum)
  for (std::int64_t j = 0; j < n; ++j) {
    double column = 0;
    for (std::int64_t i = 0; i < n; ++i) column += std::abs(f.M(i, j));
    anorm = std::max(anorm, column);
  }
  if (!std::isfinite(anorm)) return false;
  T = f.M;
  auto* a = reinterpret_cast<lapack_complex_double*>(T.data());
  if (LAPACKE_zpotrf(LAPACK_ROW_MAJOR, 'U', ni, a, ni) != 0) return false;
  if (LAPACKE_zpocon(LAPACK_ROW_MAJOR, 'U', ni, a, ni, anorm, &rcond) != 0 || !(rcond >= tol.cholesky_rcond_min))
    return false;
  if (LAPACKE_ztrtri(LAPACK_ROW_MAJOR, 'U', 'N', ni, a, ni) != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) T(i, j) = j < i ? 0.0 : T(i, j) * f.d[i];
  return true;
}

}  // namespace

HostMatrix svqb_transform(const HostMatrix& G, const OrthonormalizeTolerances& tol,
                          const std::vector<double>* reference_sq_norms, double* kept_ratio) {
  return svqb_of_form(unit_diagonal_form(G, tol, reference_sq_norms), G.rows(), tol, kept_ratio);
}

ComplexHostMatrix svqb_transform(const ComplexHostMatrix& G, const OrthonormalizeTolerances& tol,
                                 const std::vector<double>* reference_sq_norms, double* kept_ratio) {
  return svqb_of_form(unit_diagonal_form(G, tol, reference_sq_norms), G.rows(), tol, kept_ratio);
}

ComplexHostMatrix well_conditioned_transform(const ComplexHostMatrix& G, const OrthonormalizeTolerances& tol,
                                             const std::vector<double>* reference_sq_norms, double* kept_ratio) {
  const std::int64_t n = G.rows();
  const UnitDiagonalForm<std::complex<double>> f = unit_diagonal_form(G, tol, reference_sq_norms);
  ComplexHostMatrix T;
  double rcond = 0;
  if (n > 0 && std::int64_t(f.live.size()) == n && complex_cholesky_transform(f, tol, T, rcond)) {
    if (kept_ratio) *kept_ratio = rcond;
    return T;
  }
  return svqb_of_form(f, n, tol, kept_ratio);
}

HostMatrix well_conditioned_transform(const HostMatrix& G, const OrthonormalizeTolerances& tol,
                                      const std::vector<double>* reference_sq_norms, double* kept_ratio) {
  using namespace small_dense;
  const std::int64_t n = G.rows();
  const UnitDiagonalForm<double> f = unit_diagonal_form(G, tol, reference_sq_norms);
  HostMatrix U;
  // A NaN anywhere in M reaches a pivot or the estimate, and fails both.
  if (n > 0 && std::int64_t(f.live.size()) == n && cholesky_upper(f.M, U)) {
    const double rcond = reciprocal_condition(f.M, U);
    if (rcond >= tol.cholesky_rcond_min) {
      HostMatrix T(n, n);
      for (std::int64_t i = 0; i < n; ++i) T(i, i) = 1.0;
      solve_upper(U, T);  // U^-1
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i; j < n; ++j) T(i, j) *= f.d[i];
      if (kept_ratio) *kept_ratio = rcond;
      return T;
    }
  }
  return svqb_of_form(f, n, tol, kept_ratio);
}

}  // namespace blockeigs::solver
