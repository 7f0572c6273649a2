// LOBPCG's small dense problems, solved on the host (the Cholesky kernels,
// symmetric eigensolver and SVQB of solver/blocks; the large Rayleigh-Ritz
// eigenproblems on the device, ritz_eigen_solver): the generalised
// Rayleigh-Ritz step with its restart levels, and Hetmaniuk-Lehoucq basis
// selection. Row-major host matrices of double, or of complex double for
// Hermitian problems (transposes conjugate, LAPACK's Hermitian kernels).
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/checks.hpp"
#include "solver/base/large_messages.hpp"
#include "core/error.hpp"
#include "solver/blocks/cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {
namespace lobpcg_detail {
namespace {

using small_dense::cholesky_upper;
using small_dense::reciprocal_condition;
using small_dense::reduce_to_standard;
using small_dense::solve_upper;

// symmetrized, for an input that must be finite: a NaN or Inf in M leaves
// one in S, which a sum of x - x finds without a branch per entry.
template <class S>
HostMatrixOf<S> symmetrized_finite(const HostMatrixOf<S>& M, const char* what) {
  HostMatrixOf<S> H = symmetrized(M);
  const auto* values = reinterpret_cast<const double*>(H.data());  // a complex value as its two doubles
  const std::int64_t size = H.rows() * H.cols() * reals_per_value<S>;
  double probe = 0;
#pragma omp simd reduction(+ : probe)
  for (std::int64_t k = 0; k < size; ++k) probe += values[k] - values[k];
  if (probe != 0 || std::isnan(probe))
    throw Error(detail::concat("LOBPCG: the ", what,
                               " has NaN or Inf entries (the operator, the preconditioner or the "
                               "start block produced non-finite values)"));
  return H;
}

template <class S>
HostMatrixOf<S> select(const HostMatrixOf<S>& M, const std::vector<std::int64_t>& idx) {
  const auto n = static_cast<std::int64_t>(idx.size());
  HostMatrixOf<S> out(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) out(i, j) = M(idx[i], idx[j]);
  return out;
}

// The columns of a problem's eigenvectors that LOBPCG keeps: the `needed`
// smallest ascending, or the `needed` largest descending (largest first).
template <class S>
struct WantedEnd {
  std::int64_t needed;
  SpectrumEnd end;
  // Where the eigenproblems are solved; null: small_eigen (eigen_solvers.hpp).
  const EigenSolverOf<S>* eigen = nullptr;
};

// Ritz pairs of the standard problem M (symmetric, n x n): every value, the
// wanted end's vectors.
template <class S>
RitzPairsOf<S> standard_ritz(const HostMatrixOf<S>& M, const WantedEnd<S>& wanted) {
  const std::int64_t n = M.rows(), count = std::min(wanted.needed, n);
  const bool largest = wanted.end == SpectrumEnd::largest;
  const std::int64_t first = largest ? n - count : 0;
  EigenOf<S> eig = wanted.eigen ? (*wanted.eigen)(M, first, count) : small_eigen(M, first, count);
  RitzPairsOf<S> out;
  out.values = std::move(eig.values);
  if (!largest) {
    out.vectors = std::move(eig.vectors);
    return out;
  }
  out.vectors = HostMatrixOf<S>(n, count);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < count; ++c) out.vectors(i, c) = eig.vectors(i, count - 1 - c);
  return out;
}

// Level 0 for GB = I + E within rounding of I (is_identity_gram): with
// c = (I - E/2) y, GA c = theta GB c is the standard problem of
// M = (I - E/2) GA (I - E/2) = GA - (E GA + GA E)/2 + O(E^2), and then
// C^T GB C = I + O(E^2). Where ||E||_2 <= sqrt(eps) the O(E^2) terms are
// below rounding, so the pairs are the Cholesky path's to working
// accuracy, for one product where that path takes a factorisation, a
// condition estimate and three triangular solves
// (docs/benchmarks/solvers.md#host-window).
template <class S>
RitzPairsOf<S> near_identity_ritz(const HostMatrixOf<S>& GA, const HostMatrixOf<S>& GB, const WantedEnd<S>& wanted) {
  const std::int64_t n = GA.rows();
  HostMatrixOf<S> E = GB;
  for (std::int64_t i = 0; i < n; ++i) E(i, i) -= 1.0;
  HostMatrixOf<S> M = symmetrized(multiply(E, GA));  // (E GA + GA E) / 2
  for (std::int64_t e = 0; e < n * n; ++e) M.data()[e] = GA.data()[e] - M.data()[e];
  RitzPairsOf<S> out = standard_ritz(M, wanted);
  const HostMatrixOf<S> EY = multiply(E, out.vectors);
  for (std::int64_t e = 0; e < EY.rows() * EY.cols(); ++e) out.vectors.data()[e] -= 0.5 * EY.data()[e];
  return out;
}

// Level 0/1: Cholesky GB = U^T U, then the standard problem U^-T GA U^-1
// (GA and GB symmetric, both triangles; U^H for Hermitian ones). Returns
// false (and leaves `out` alone) when GB is not safely positive definite.
template <class S>
bool cholesky_ritz(const HostMatrixOf<S>& GA, const HostMatrixOf<S>& GB, const Tolerances& tol,
                   const WantedEnd<S>& wanted, RitzPairsOf<S>& out_sub) {
  HostMatrixOf<S> U;
  if (!cholesky_upper(GB, U) || !(reciprocal_condition(GB, U) >= tol.rcond_min)) return false;
  RitzPairsOf<S> sub = standard_ritz(reduce_to_standard(GA, U), wanted);
  solve_upper(U, sub.vectors);  // C = U^-1 Y
  out_sub = std::move(sub);
  return true;
}

// Level 2: a GB-orthonormal basis of the numerically independent directions
// (SVQB of GB), then the standard problem in it.
template <class S>
RitzPairsOf<S> truncated_ritz(const HostMatrixOf<S>& GA, const HostMatrixOf<S>& GB, const Tolerances& tol,
                              const WantedEnd<S>& wanted) {
  const HostMatrixOf<S> T = svqb_transform(GB, tol);
  const HostMatrixOf<S> M = symmetrized(transpose_times(T, multiply(GA, T)));
  RitzPairsOf<S> out = standard_ritz(M, wanted);
  out.vectors = multiply(T, out.vectors);
  return out;
}

}  // namespace

template <class S>
HostMatrixOf<S> symmetrized(const HostMatrixOf<S>& M) {
  const std::int64_t n = M.rows();
  HostMatrixOf<S> H(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) H(j, i) = conj_of(H(i, j) = 0.5 * (M(i, j) + conj_of(M(j, i))));
  return H;
}

template <class S>
bool is_identity_gram(const HostMatrixOf<S>& GB, const Tolerances& tol) {
  const std::int64_t n = GB.rows();
  bool within = GB.cols() == n;
  for (std::int64_t i = 0; i < n && within; ++i) {
    const S* row = GB.data() + i * n;
    for (std::int64_t j = 0; j < n; ++j)  // NaN fails the test too
      within &= double(n) * std::abs(row[j] - (i == j ? 1.0 : 0.0)) <= tol.identity_gram;
  }
  return within;
}

template <class S>
RitzPairsOf<S> rayleigh_ritz(const HostMatrixOf<S>& GA, const HostMatrixOf<S>& GB, std::int64_t p_begin,
                             std::int64_t p_end, std::int64_t needed, const Tolerances& tol, SpectrumEnd end,
                             std::type_identity_t<const EigenSolverOf<S>*> eigen) {
  const std::int64_t ns = GA.rows();
  const HostMatrixOf<S> A = symmetrized_finite(GA, "projected operator A_S = S^T A S"),
                        B = symmetrized_finite(GB, "basis Gram matrix S^T S");

  // Scatter a solution on columns `idx` back to all ns basis rows.
  auto expand = [&](RitzPairsOf<S> sub, const std::vector<std::int64_t>& idx, int level) {
    RitzPairsOf<S> out;
    out.level = level;
    out.values = std::move(sub.values);
    out.vectors = HostMatrixOf<S>(ns, sub.vectors.cols());
    for (std::size_t a = 0; a < idx.size(); ++a)
      for (std::int64_t c = 0; c < sub.vectors.cols(); ++c) out.vectors(idx[a], c) = sub.vectors(std::int64_t(a), c);
    return out;
  };

  const WantedEnd<S> wanted{needed, end, eigen};
  RitzPairsOf<S> sub;
  // Level 0, on all rows already: to first order in GB - I where GB is
  // within rounding of I, else through GB's Cholesky factor.
  if (is_identity_gram(B, tol)) return near_identity_ritz(A, B, wanted);
  if (cholesky_ritz(A, B, tol, wanted, sub)) return sub;
  std::vector<std::int64_t> without_p;
  for (std::int64_t j = 0; j < ns; ++j)
    if (j < p_begin || j >= p_end) without_p.push_back(j);
  const HostMatrixOf<S> A1 = select(A, without_p), B1 = select(B, without_p);
  if (p_end > p_begin && cholesky_ritz(A1, B1, tol, wanted, sub)) return expand(std::move(sub), without_p, 1);
  RitzPairsOf<S> truncated = truncated_ritz(A1, B1, tol, wanted);
  if (static_cast<std::int64_t>(truncated.values.size()) < needed)
    throw Error(detail::concat("LOBPCG: the search space collapsed to ", truncated.values.size(),
                               " independent directions, fewer than the block size ", needed));
  return expand(std::move(truncated), without_p, 2);
}

template <class S>
EigenSolverOf<S> ritz_eigen_solver(const dense::Context& context, std::int64_t rows) {
  if constexpr (is_complex_v<S>) {
    return projected_eigen_solver<S>(context, rows);
  } else {
    if (context.space() != Space::device || rows < device_eigen_min_rows) return {};
    auto device = std::make_shared<DeviceSymmetricEigen>(context);
    return [device](const HostMatrix& M, std::int64_t first, std::int64_t count) {
      return M.rows() >= device_eigen_min_rows ? (*device)(M, first, count) : symmetric_eigen(M, first, count);
    };
  }
}

template <class S>
HostMatrixOf<S> basis_selection(const HostMatrixOf<S>& Cx, const HostMatrixOf<S>& GB, std::int64_t x_rows,
                                const std::vector<std::int64_t>& active, const Tolerances& tol) {
  const std::int64_t ns = Cx.rows(), nb = Cx.cols(), na = static_cast<std::int64_t>(active.size());
  if (na == 0 || ns == x_rows) return HostMatrixOf<S>(ns, 0);
  // Z: the non-X parts of the active Ritz vectors' coefficients.
  HostMatrixOf<S> Z(ns, na);
  for (std::int64_t i = x_rows; i < ns; ++i)
    for (std::int64_t c = 0; c < na; ++c) Z(i, c) = Cx(i, active[c]);
  const HostMatrixOf<S> B = symmetrized(GB);
  // Z -= Cx (Cx^T B Z), twice (one projection leaves rounding-sized X
  // parts), with Cx^T B = (B Cx)^T formed once.
  const HostMatrixOf<S> BCx = multiply(B, Cx);
  HostMatrixOf<S> coeff(nb, na);
  for (int pass = 0; pass < 2; ++pass) {
    product(true, false, nb, na, ns, BCx.data(), nb, Z.data(), na, S(0), coeff.data(), na);
    product(false, false, ns, na, nb, Cx.data(), nb, coeff.data(), na, S(1), Z.data(), na, S(-1));
  }
  const HostMatrixOf<S> G = transpose_times(Z, multiply(B, Z));
  return multiply(Z, well_conditioned_transform(G, tol));
}

template <class S>
HostMatrixOf<S> assemble_ritz_matrix(const HostMatrixOf<S>& q_block, const HostMatrixOf<S>& w_columns) {
  const std::int64_t q = q_block.rows(), ns = w_columns.rows(), nw = w_columns.cols();
  if (q_block.cols() != q || ns != q + nw)
    throw Error(detail::concat("LOBPCG: Rayleigh-Ritz blocks of ", q, " x ", q_block.cols(), " and ", ns, " x ", nw,
                               " do not fit together"));
  HostMatrixOf<S> M(ns, ns);
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t j = 0; j < q; ++j) M(i, j) = 0.5 * (q_block(i, j) + conj_of(q_block(j, i)));
  for (std::int64_t i = 0; i < q; ++i)
    for (std::int64_t c = 0; c < nw; ++c) M(q + c, i) = conj_of(M(i, q + c) = w_columns(i, c));
  for (std::int64_t r = 0; r < nw; ++r)
    for (std::int64_t c = 0; c < nw; ++c) M(q + r, q + c) = 0.5 * (w_columns(q + r, c) + conj_of(w_columns(q + c, r)));
  return M;
}

template <class S>
HostMatrixOf<S> in_search_basis(const HostMatrixOf<S>& G, const HostMatrixOf<S>& from_q,
                                const HostMatrixOf<S>& from_z) {
  const std::int64_t q = from_q.rows(), raw = from_z.rows(), kept = from_z.cols(), ns = q + kept, nr = q + raw;
  BLOCKEIGS_ASSERT(G.rows() == nr && G.cols() == nr && from_q.cols() == kept);
  // G T_w = G's Q columns from_q + its Z columns from_z (Q's rows are [Q W]'s).
  HostMatrixOf<S> g_w(nr, kept), w_w(kept, kept);
  product(false, false, nr, kept, q, G.data(), nr, from_q.data(), kept, S(0), g_w.data(), kept);
  product(false, false, nr, kept, raw, G.data() + q, nr, from_z.data(), kept, S(1), g_w.data(), kept);
  // T_w^T G T_w = from_q^T (G T_w)'s first q rows + from_z^T its last raw.
  product(true, false, kept, kept, q, from_q.data(), kept, g_w.data(), kept, S(0), w_w.data(), kept);
  product(true, false, kept, kept, raw, from_z.data(), kept, g_w.data() + q * kept, kept, S(1), w_w.data(), kept);
  HostMatrixOf<S> out(ns, ns);
  for (std::int64_t i = 0; i < q; ++i) {
    for (std::int64_t j = 0; j < q; ++j) out(i, j) = G(i, j);
    for (std::int64_t j = 0; j < kept; ++j) out(q + j, i) = conj_of(out(i, q + j) = g_w(i, j));
  }
  for (std::int64_t i = 0; i < kept; ++i)
    for (std::int64_t j = 0; j < kept; ++j) out(q + i, q + j) = 0.5 * (w_w(i, j) + conj_of(w_w(j, i)));
  return out;
}

template <class S>
HostMatrixOf<S> to_raw_coefficients(const HostMatrixOf<S>& C, const HostMatrixOf<S>& from_q,
                                    const HostMatrixOf<S>& from_z) {
  const std::int64_t q = from_q.rows(), raw = from_z.rows(), kept = from_z.cols(), m = C.cols();
  BLOCKEIGS_ASSERT(C.rows() == q + kept && from_q.cols() == kept);
  const S* c_w = C.data() + q * m;  // C's W rows
  HostMatrixOf<S> out(q + raw, m);
  std::copy(C.data(), C.data() + q * m, out.data());
  product(false, false, q, m, kept, from_q.data(), kept, c_w, m, S(1), out.data(), m);
  product(false, false, raw, m, kept, from_z.data(), kept, c_w, m, S(0), out.data() + q * m, m);
  return out;
}

template <class S>
HostMatrixOf<S> without_span(const HostMatrixOf<S>& G, std::int64_t first, std::int64_t count) {
  const std::int64_t n = G.rows();
  BLOCKEIGS_ASSERT(G.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  if (count == 0) return G;
  std::vector<std::int64_t> keep;
  for (std::int64_t j = 0; j < n; ++j)
    if (j < first || j >= first + count) keep.push_back(j);
  return select(G, keep);
}

template <class S>
HostMatrixOf<S> with_zero_rows(const HostMatrixOf<S>& C, std::int64_t first, std::int64_t count, std::int64_t cols) {
  const std::int64_t rows = C.rows(), m = C.cols();
  BLOCKEIGS_ASSERT(first >= 0 && first <= rows && count >= 0 && cols >= m);
  HostMatrixOf<S> out(rows + count, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    std::copy(C.data() + i * m, C.data() + (i + 1) * m, out.data() + (i < first ? i : i + count) * cols);
  return out;
}

void broadcast(MPI_Comm comm, std::vector<double>& v) {
  std::int64_t size = static_cast<std::int64_t>(v.size());
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm));
  v.resize(static_cast<std::size_t>(size));
  large_bcast(comm, v.data(), size, 0);
}

void broadcast(MPI_Comm comm, int& value) { BLOCKEIGS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, 0, comm)); }

#define BLOCKEIGS_LOBPCG_SMALL(S)                                                                                   \
  template HostMatrixOf<S> symmetrized(const HostMatrixOf<S>&);                                                     \
  template bool is_identity_gram(const HostMatrixOf<S>&, const Tolerances&);                                        \
  template RitzPairsOf<S> rayleigh_ritz(const HostMatrixOf<S>&, const HostMatrixOf<S>&, std::int64_t, std::int64_t, \
                                        std::int64_t, const Tolerances&, SpectrumEnd, const EigenSolverOf<S>*);     \
  template EigenSolverOf<S> ritz_eigen_solver<S>(const dense::Context&, std::int64_t);                              \
  template HostMatrixOf<S> basis_selection(const HostMatrixOf<S>&, const HostMatrixOf<S>&, std::int64_t,            \
                                           const std::vector<std::int64_t>&, const Tolerances&);                    \
  template HostMatrixOf<S> assemble_ritz_matrix(const HostMatrixOf<S>&, const HostMatrixOf<S>&);                    \
  template HostMatrixOf<S> in_search_basis(const HostMatrixOf<S>&, const HostMatrixOf<S>&, const HostMatrixOf<S>&); \
  template HostMatrixOf<S> to_raw_coefficients(const HostMatrixOf<S>&, const HostMatrixOf<S>&,                      \
                                               const HostMatrixOf<S>&);                                             \
  template HostMatrixOf<S> without_span(const HostMatrixOf<S>&, std::int64_t, std::int64_t);                        \
  template HostMatrixOf<S> with_zero_rows(const HostMatrixOf<S>&, std::int64_t, std::int64_t, std::int64_t);
BLOCKEIGS_LOBPCG_SMALL(double)
BLOCKEIGS_LOBPCG_SMALL(std::complex<double>)
#undef BLOCKEIGS_LOBPCG_SMALL

}  // namespace lobpcg_detail
}  // namespace blockeigs::solver
