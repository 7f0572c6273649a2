// LOBPCG's small dense problems, solved on the host with LAPACK: SVQB
// transforms, the generalised Rayleigh-Ritz step with its restart levels, and
// Hetmaniuk-Lehoucq basis selection. Row-major HostMatrix throughout.
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "solver/lobpcg_detail.hpp"
#include "solver/symmetric_eigen.hpp"

namespace blockeigs::solver {
namespace lobpcg_detail {
namespace {

void require_finite(const HostMatrix& M, const char* what) {
  for (double v : M.values())
    if (!std::isfinite(v))
      throw Error(detail::concat("LOBPCG: the ", what,
                                 " has NaN or Inf entries (the operator, the preconditioner or the "
                                 "start block produced non-finite values)"));
}

// The symmetric part (M + M^T) / 2: Gram products of distinct blocks are
// symmetric only up to rounding.
HostMatrix symmetrized(const HostMatrix& M) {
  HostMatrix S(M.rows(), M.cols());
  for (std::int64_t i = 0; i < M.rows(); ++i)
    for (std::int64_t j = 0; j < M.cols(); ++j) S(i, j) = 0.5 * (M(i, j) + M(j, i));
  return S;
}

HostMatrix select(const HostMatrix& M, const std::vector<std::int64_t>& idx) {
  const auto n = static_cast<std::int64_t>(idx.size());
  HostMatrix S(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) S(i, j) = M(idx[i], idx[j]);
  return S;
}

// The columns of a problem's eigenvectors that LOBPCG keeps: the `needed`
// smallest ascending, or the `needed` largest descending (largest first).
struct WantedEnd {
  std::int64_t needed;
  SpectrumEnd end;
};

// Ritz pairs of the standard problem M (symmetric, n x n): every value, the
// wanted end's vectors.
RitzPairs standard_ritz(const HostMatrix& M, const WantedEnd& wanted) {
  const std::int64_t n = M.rows(), count = std::min(wanted.needed, n);
  const bool largest = wanted.end == SpectrumEnd::largest;
  SymmetricEigen eig = symmetric_eigen(M, largest ? n - count : 0, count);
  RitzPairs out;
  out.values = std::move(eig.values);
  if (!largest) {
    out.vectors = std::move(eig.vectors);
    return out;
  }
  out.vectors = HostMatrix(n, count);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < count; ++c) out.vectors(i, c) = eig.vectors(i, count - 1 - c);
  return out;
}

// GB = L L^T (row-major lower L; the upper part left zero). False when a
// pivot is not positive. At LOBPCG's sizes (tens of rows) a plain loop beats
// LAPACKE's row-major dpotrf, which transposes the matrix in and out.
bool cholesky(const HostMatrix& GB, HostMatrix& L) {
  const std::int64_t n = GB.rows();
  L = HostMatrix(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* li = &L(i, 0);
    for (std::int64_t j = 0; j <= i; ++j) {
      const double* lj = &L(j, 0);
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (std::int64_t k = 0; k < j; ++k) s += li[k] * lj[k];
      const double v = GB(i, j) - s;
      if (i == j) {
        if (!(v > 0)) return false;
        L(i, i) = std::sqrt(v);
      } else {
        L(i, j) = v / L(j, j);
      }
    }
  }
  return true;
}

// Y := L^-1 Y for lower-triangular L, by rows (Y is n x m).
void forward_substitute(const HostMatrix& L, HostMatrix& Y) {
  const std::int64_t n = L.rows(), m = Y.cols();
  for (std::int64_t i = 0; i < n; ++i) {
    double* yi = &Y(i, 0);
    for (std::int64_t k = 0; k < i; ++k) {
      const double f = L(i, k);
      const double* yk = &Y(k, 0);
#pragma omp simd
      for (std::int64_t c = 0; c < m; ++c) yi[c] -= f * yk[c];
    }
    const double inverse = 1.0 / L(i, i);
    for (std::int64_t c = 0; c < m; ++c) yi[c] *= inverse;
  }
}

// Y := L^-T Y for lower-triangular L, by rows (Y is n x m).
void back_substitute_transposed(const HostMatrix& L, HostMatrix& Y) {
  const std::int64_t n = L.rows(), m = Y.cols();
  for (std::int64_t i = n - 1; i >= 0; --i) {
    double* yi = &Y(i, 0);
    for (std::int64_t k = i + 1; k < n; ++k) {
      const double f = L(k, i);
      const double* yk = &Y(k, 0);
#pragma omp simd
      for (std::int64_t c = 0; c < m; ++c) yi[c] -= f * yk[c];
    }
    const double inverse = 1.0 / L(i, i);
    for (std::int64_t c = 0; c < m; ++c) yi[c] *= inverse;
  }
}

// Reciprocal condition of GB = L L^T in the 1-norm, LAPACK's estimate.
// Row-major lower L is column-major upper U = L^T with GB = U^T U, so dpocon
// reads it in place.
double reciprocal_condition(const HostMatrix& GB, const HostMatrix& L) {
  const std::int64_t n = GB.rows();
  double norm1 = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += std::abs(GB(i, j));
    norm1 = std::max(norm1, s);
  }
  thread_local std::vector<double> work;
  thread_local std::vector<lapack_int> iwork;
  work.resize(static_cast<std::size_t>(3 * n));
  iwork.resize(static_cast<std::size_t>(n));
  double rcond = 0;
  if (LAPACKE_dpocon_work(LAPACK_COL_MAJOR, 'U', lapack_int(n), L.data(), lapack_int(n), norm1, &rcond, work.data(),
                          iwork.data()) != 0)
    return 0;
  return rcond;
}

// Level 0/1: Cholesky GB = L L^T, then the standard problem L^-1 GA L^-T.
// Returns false (and leaves `out` alone) when GB is not safely positive definite.
bool cholesky_ritz(const HostMatrix& GA, const HostMatrix& GB, const Tolerances& tol, const WantedEnd& wanted,
                   RitzPairs& out_sub) {
  HostMatrix L;
  if (!cholesky(GB, L) || !(reciprocal_condition(GB, L) >= tol.rcond_min)) return false;
  // M = L^-1 GA L^-T: Y = L^-1 GA, then M = L^-1 Y^T (GA symmetric).
  HostMatrix Y = GA;
  forward_substitute(L, Y);
  const std::int64_t n = GA.rows();
  HostMatrix M(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) M(i, j) = Y(j, i);
  forward_substitute(L, M);
  RitzPairs sub = standard_ritz(M, wanted);  // reads M's lower triangle
  back_substitute_transposed(L, sub.vectors);  // C = L^-T Y
  out_sub = std::move(sub);
  return true;
}

// Level 2: a GB-orthonormal basis of the numerically independent directions
// (SVQB of GB), then the standard problem in it.
RitzPairs truncated_ritz(const HostMatrix& GA, const HostMatrix& GB, const Tolerances& tol, const WantedEnd& wanted) {
  const HostMatrix T = svqb_transform(GB, tol);
  const HostMatrix M = symmetrized(transpose_times(T, multiply(GA, T)));
  RitzPairs out = standard_ritz(M, wanted);
  out.vectors = multiply(T, out.vectors);
  return out;
}

}  // namespace

}  // namespace lobpcg_detail

HostMatrix svqb_transform(const HostMatrix& G, const OrthonormalizeTolerances& tol,
                          const std::vector<double>* reference_sq_norms, double* kept_ratio) {
  if (kept_ratio) *kept_ratio = 1;
  using namespace lobpcg_detail;
  const std::int64_t n = G.rows();
  std::vector<std::int64_t> live;  // columns that are not zero (or numerically in span(Q))
  for (std::int64_t j = 0; j < n; ++j) {
    const double g = G(j, j);
    if (!(g > 0) || !std::isfinite(g)) continue;
    if (reference_sq_norms && g <= tol.remainder * tol.remainder * (*reference_sq_norms)[j]) continue;
    live.push_back(j);
  }
  const auto m = static_cast<std::int64_t>(live.size());
  if (m == 0) return HostMatrix(n, 0);
  std::vector<double> d(static_cast<std::size_t>(m));
  for (std::int64_t a = 0; a < m; ++a) d[a] = 1.0 / std::sqrt(G(live[a], live[a]));
  // The unit-diagonal form of G's symmetric part, both triangles.
  HostMatrix M(m, m);
  for (std::int64_t a = 0; a < m; ++a)
    for (std::int64_t b = 0; b < m; ++b)
      M(a, b) = 0.5 * (G(live[a], live[b]) + G(live[b], live[a])) * d[a] * d[b];
  const SymmetricEigen eig = symmetric_eigen(M, 0, m);
  const std::vector<double>& theta = eig.values;
  const double threshold = tol.drop_per_column * double(m) * theta.back();
  std::vector<std::int64_t> kept;  // largest theta first: the best-determined directions lead
  for (std::int64_t i = m - 1; i >= 0; --i)
    if (theta[i] > threshold) kept.push_back(i);
  if (kept_ratio && !kept.empty()) *kept_ratio = theta[kept.back()] / theta[kept.front()];
  HostMatrix T(n, static_cast<std::int64_t>(kept.size()));
  for (std::size_t c = 0; c < kept.size(); ++c) {
    const double s = 1.0 / std::sqrt(theta[kept[c]]);
    for (std::int64_t a = 0; a < m; ++a) T(live[a], std::int64_t(c)) = d[a] * eig.vectors(a, kept[c]) * s;
  }
  return T;
}

namespace lobpcg_detail {

RitzPairs rayleigh_ritz(const HostMatrix& GA, const HostMatrix& GB, std::int64_t p_begin, std::int64_t p_end,
                        std::int64_t needed, const Tolerances& tol, SpectrumEnd end) {
  require_finite(GA, "projected operator A_S = S^T A S");
  require_finite(GB, "basis Gram matrix S^T S");
  const std::int64_t ns = GA.rows();
  const HostMatrix A = symmetrized(GA), B = symmetrized(GB);

  // Scatter a solution on columns `idx` back to all ns basis rows.
  auto expand = [&](RitzPairs sub, const std::vector<std::int64_t>& idx, int level) {
    RitzPairs out;
    out.level = level;
    out.values = std::move(sub.values);
    out.vectors = HostMatrix(ns, sub.vectors.cols());
    for (std::size_t a = 0; a < idx.size(); ++a)
      for (std::int64_t c = 0; c < sub.vectors.cols(); ++c) out.vectors(idx[a], c) = sub.vectors(std::int64_t(a), c);
    return out;
  };

  std::vector<std::int64_t> all(static_cast<std::size_t>(ns)), without_p;
  std::iota(all.begin(), all.end(), std::int64_t{0});
  for (std::int64_t j : all)
    if (j < p_begin || j >= p_end) without_p.push_back(j);

  const WantedEnd wanted{needed, end};
  RitzPairs sub;
  if (cholesky_ritz(A, B, tol, wanted, sub)) return expand(std::move(sub), all, 0);
  const HostMatrix A1 = select(A, without_p), B1 = select(B, without_p);
  if (p_end > p_begin && cholesky_ritz(A1, B1, tol, wanted, sub)) return expand(std::move(sub), without_p, 1);
  RitzPairs truncated = truncated_ritz(A1, B1, tol, wanted);
  if (static_cast<std::int64_t>(truncated.values.size()) < needed)
    throw Error(detail::concat("LOBPCG: the search space collapsed to ", truncated.values.size(),
                               " independent directions, fewer than the block size ", needed));
  return expand(std::move(truncated), without_p, 2);
}

HostMatrix basis_selection(const HostMatrix& Cx, const HostMatrix& GB, std::int64_t x_rows,
                           const std::vector<std::int64_t>& active, const Tolerances& tol) {
  const std::int64_t ns = Cx.rows(), na = static_cast<std::int64_t>(active.size());
  if (na == 0 || ns == x_rows) return HostMatrix(ns, 0);
  // Z: the non-X parts of the active Ritz vectors' coefficients.
  HostMatrix Z(ns, na);
  for (std::int64_t i = x_rows; i < ns; ++i)
    for (std::int64_t c = 0; c < na; ++c) Z(i, c) = Cx(i, active[c]);
  const HostMatrix B = symmetrized(GB);
  // Z -= Cx (Cx^T B Z), twice: one projection leaves rounding-sized X parts.
  for (int pass = 0; pass < 2; ++pass) {
    const HostMatrix coeff = transpose_times(Cx, multiply(B, Z));
    const HostMatrix correction = multiply(Cx, coeff);
    for (std::int64_t i = 0; i < ns; ++i)
      for (std::int64_t c = 0; c < na; ++c) Z(i, c) -= correction(i, c);
  }
  const HostMatrix G = transpose_times(Z, multiply(B, Z));
  return multiply(Z, svqb_transform(G, tol));
}

HostMatrix assemble_ritz_matrix(const HostMatrix& q_block, const HostMatrix& w_columns) {
  const std::int64_t q = q_block.rows(), ns = w_columns.rows(), nw = w_columns.cols();
  if (q_block.cols() != q || ns != q + nw)
    throw Error(detail::concat("LOBPCG: Rayleigh-Ritz blocks of ", q, " x ", q_block.cols(), " and ", ns, " x ", nw,
                               " do not fit together"));
  HostMatrix M(ns, ns);
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t j = 0; j < q; ++j) M(i, j) = 0.5 * (q_block(i, j) + q_block(j, i));
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t c = 0; c < nw; ++c) M(i, q + c) = M(q + c, i) = w_columns(i, c);
  for (std::int64_t r = 0; r < nw; ++r)
    for (std::int64_t c = 0; c < nw; ++c) M(q + r, q + c) = 0.5 * (w_columns(q + r, c) + w_columns(q + c, r));
  return M;
}

HostMatrix in_search_basis(const HostMatrix& G, const HostMatrix& from_q, const HostMatrix& from_z) {
  const std::int64_t q = from_q.rows(), raw = from_z.rows(), kept = from_z.cols(), ns = q + kept;
  BLOCKEIGS_ASSERT(G.rows() == q + raw && G.cols() == q + raw && from_q.cols() == kept);
  // T's W columns, stacked: [from_q; from_z].
  HostMatrix t_w(q + raw, kept);
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t j = 0; j < kept; ++j) t_w(i, j) = from_q(i, j);
  for (std::int64_t i = 0; i < raw; ++i)
    for (std::int64_t j = 0; j < kept; ++j) t_w(q + i, j) = from_z(i, j);
  const HostMatrix g_w = multiply(G, t_w);            // G T_w: Q's rows are [Q W]'s
  const HostMatrix w_w = transpose_times(t_w, g_w);   // T_w^T G T_w
  HostMatrix out(ns, ns);
  for (std::int64_t i = 0; i < q; ++i) {
    for (std::int64_t j = 0; j < q; ++j) out(i, j) = G(i, j);
    for (std::int64_t j = 0; j < kept; ++j) out(i, q + j) = out(q + j, i) = g_w(i, j);
  }
  for (std::int64_t i = 0; i < kept; ++i)
    for (std::int64_t j = 0; j < kept; ++j) out(q + i, q + j) = 0.5 * (w_w(i, j) + w_w(j, i));
  return out;
}

HostMatrix to_raw_coefficients(const HostMatrix& C, const HostMatrix& from_q, const HostMatrix& from_z) {
  const std::int64_t q = from_q.rows(), raw = from_z.rows(), kept = from_z.cols(), m = C.cols();
  BLOCKEIGS_ASSERT(C.rows() == q + kept && from_q.cols() == kept);
  const HostMatrix c_w = C.block(q, kept, 0, m);
  const HostMatrix q_part = multiply(from_q, c_w), z_part = multiply(from_z, c_w);
  HostMatrix out(q + raw, m);
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t j = 0; j < m; ++j) out(i, j) = C(i, j) + q_part(i, j);
  for (std::int64_t i = 0; i < raw; ++i)
    for (std::int64_t j = 0; j < m; ++j) out(q + i, j) = z_part(i, j);
  return out;
}

void broadcast(MPI_Comm comm, std::vector<double>& v) {
  std::int64_t size = static_cast<std::int64_t>(v.size());
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm));
  v.resize(static_cast<std::size_t>(size));
  if (size > 0) BLOCKEIGS_MPI_CHECK(MPI_Bcast(v.data(), int(size), MPI_DOUBLE, 0, comm));
}

void broadcast(MPI_Comm comm, int& value) { BLOCKEIGS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, 0, comm)); }

}  // namespace lobpcg_detail
}  // namespace blockeigs::solver
