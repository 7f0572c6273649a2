// Orthonormalisation in the B-inner product <u, v> = u^T B v for
// A x = lambda B x (Duersch et al. 2018, sec. 4 with B), and the projection
// that keeps LOBPCG's blocks B-orthogonal to a constraint block Y.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::solver::lobpcg_detail {
namespace {

// V -= Q C and BV -= BQ C (C: Q.cols x V.cols).
template <class T>
void subtract_projection(const dense::Context& context, const BBasis<T>& Q, const HostMatrixFor<T>& C,
                         dense::DenseView<T> V, dense::DenseView<T> BV) {
  if (Q.V.cols == 0) return;
  block_update(context, T(-1), Q.V, C, T(1), V);
  block_update(context, T(-1), Q.BV, C, T(1), BV);
}

// V <- (V - Y CY - Q C) T and BV likewise: the constraints' part apart
// (seldom more than a column), then V T - Q (C T) in one pass.
template <class T>
void combine_projected(const dense::Context& context, const BBasis<T>& Y, const HostMatrixFor<T>& CY,
                       const BBasis<T>& Q, const HostMatrixFor<T>& C, const HostMatrixFor<T>& transform,
                       dense::DenseView<T> V, dense::DenseView<T> BV, dense::DenseView<T> scratch) {
  subtract_projection(context, Y, CY, V, BV);
  HostMatrixFor<T> minus_ct = Q.V.cols > 0 ? multiply(C, transform) : HostMatrixFor<T>();
  for (auto& v : minus_ct.values()) v = -v;
  const std::int64_t kept = transform.cols();
  const dense::DenseView<T> out = column_range(scratch, 0, kept);
  for (const auto& [from, q] : {std::pair{V, Q.V}, std::pair{BV, Q.BV}}) {
    if (q.cols == 0) {
      transform_in_place(context, from, transform, scratch);
      continue;
    }
    block_combine_pair(context, dense::ConstDenseView<T>(from), transform, q, minus_ct, column_range(from, 0, kept),
                       out);
  }
}

}  // namespace

template <class S>
void require_positive_b_norms(const HostMatrixOf<S>& G, std::int64_t offset, std::int64_t count, double eps) {
  double largest = 0, lowest = 0;
  for (std::int64_t j = 0; j < count; ++j) {
    const double v = std::real(G(offset + j, j));
    largest = std::max(largest, std::abs(v));
    lowest = std::min(lowest, v);
  }
  if (lowest < -std::sqrt(eps) * largest)
    throw BNotPositiveDefinite(detail::concat(
        "B is not positive definite: LOBPCG met a vector x with x^T B x = ", lowest, " (the block's largest |x^T B x| ",
        largest, "); A x = lambda B x needs B symmetric positive definite"));
}
template void require_positive_b_norms(const HostMatrix&, std::int64_t, std::int64_t, double);
template void require_positive_b_norms(const ComplexHostMatrix&, std::int64_t, std::int64_t, double);

template <class T>
void project_out(const dense::Context& context, MPI_Comm comm, const BBasis<T>& Y, dense::DenseView<T> W) {
  if (Y.V.cols == 0 || W.cols == 0) return;
  const HostMatrixFor<T> C = gram<T>(context, comm, Y.BV, dense::ConstDenseView<T>(W));
  block_update(context, T(-1), Y.V, C, T(1), W);
}

template <class T>
std::int64_t b_orthonormalize_against(const dense::Context& context, MPI_Comm comm, LinearOperator<T>& B,
                                      const BBasis<T>& Y, const BBasis<T>& Q, dense::DenseView<T> W,
                                      dense::DenseView<T> BW, dense::DenseView<T> scratch, const Tolerances& tol,
                                      bool until_orthonormal) {
  BLOCKEIGS_ASSERT(BW.rows == W.rows && BW.cols >= W.cols && scratch.cols >= W.cols);
  const std::int64_t q = Q.V.cols, m = Y.V.cols;
  std::int64_t kept = W.cols;
  for (int pass = 1; pass <= max_ortho_passes && kept > 0; ++pass) {
    const dense::DenseView<T> Wk = column_range(W, 0, kept), BWk = column_range(BW, 0, kept);
    B.apply(T(1), dense::ConstDenseView<T>(Wk), T(0), BWk);
    // [Q W]^T B W in one pass; Y^T B W apart (Y is seldom more than a column or two).
    const HostMatrixFor<T> G_all =
        q > 0
            ? gram<T>(context, comm, SplitColumns<T>(Q.V, dense::ConstDenseView<T>(Wk)), dense::ConstDenseView<T>(BWk))
            : gram<T>(context, comm, SplitColumns<T>(dense::ConstDenseView<T>(Wk)), dense::ConstDenseView<T>(BWk));
    require_positive_b_norms(G_all, q, kept, tol.eps);
    const HostMatrixFor<T> CY =
        m > 0 ? gram<T>(context, comm, Y.V, dense::ConstDenseView<T>(BWk)) : HostMatrixFor<T>(0, kept);
    const HostMatrixFor<T> C = G_all.block(0, q, 0, kept);
    HostMatrixFor<T> G = symmetrized(G_all.block(q, kept, 0, kept));
    std::vector<double> before(static_cast<std::size_t>(kept));
    for (std::int64_t j = 0; j < kept; ++j) before[j] = std::real(G(j, j));
    if (pass > 1 && std::max(max_abs(C), max_abs(CY)) <= tol.orthogonality &&
        max_abs_minus_identity(G) <= tol.orthogonality)
      return kept;
    // The projected block's Gram matrix W^T B W - C^T C - CY^T CY, where every
    // column keeps enough of its B-norm for the difference to be accurate;
    // otherwise project first and measure.
    using S = small_t<T>;
    if (q > 0) product(true, false, kept, kept, q, C.data(), kept, C.data(), kept, S(1), G.data(), kept, S(-1));
    if (m > 0) product(true, false, kept, kept, m, CY.data(), kept, CY.data(), kept, S(1), G.data(), kept, S(-1));
    bool derived = true;
    for (std::int64_t j = 0; j < kept; ++j)
      if (!(before[j] > 0) || !(std::real(G(j, j)) >= tol.derived_gram_min_kept * before[j])) derived = false;
    double ratio = 1;
    HostMatrixFor<T> transform;
    if (derived) {
      // W <- (W - Y CY - Q C) T in one pass over W and Q where Y is empty (B W likewise).
      transform = svqb_on_root(comm, G, tol, &before, ratio);
      combine_projected(context, Y, CY, Q, C, transform, Wk, BWk, scratch);
    } else {
      subtract_projection(context, Y, CY, Wk, BWk);
      subtract_projection(context, Q, C, Wk, BWk);
      G = symmetrized(
          gram<T>(context, comm, SplitColumns<T>(dense::ConstDenseView<T>(Wk)), dense::ConstDenseView<T>(BWk)));
      transform = svqb_on_root(comm, G, tol, &before, ratio);
      transform_in_place(context, Wk, transform, scratch);
      transform_in_place(context, BWk, transform, scratch);
    }
    kept = transform.cols();
    // B W is kept up to date by the updates: for a search block one pass
    // that was safe to do once is enough (its Rayleigh-Ritz measures S^T B S).
    if (!until_orthonormal && derived && ratio >= tol.single_pass_ratio) return kept;
  }
  if (kept > 0 && until_orthonormal)
    B.apply(T(1), dense::ConstDenseView<T>(column_range(W, 0, kept)), T(0), column_range(BW, 0, kept));
  return kept;
}

template <class T>
std::int64_t b_orthonormalize_constraints(const dense::Context& context, MPI_Comm comm, LinearOperator<T>* B,
                                          dense::DenseView<T> Y, dense::DenseView<T> BY, dense::DenseView<T> scratch,
                                          const Tolerances& tol) {
  if (!B) {
    const std::int64_t kept = orthonormalize(context, comm, Y, scratch, tol);
    if (kept == Y.cols) copy_block(context, dense::ConstDenseView<T>(Y), BY);
    return kept;
  }
  const BBasis<T> none{{Y.space, Y.rows, 0, Y.ld, Y.data}, {Y.space, Y.rows, 0, Y.ld, Y.data}};
  return b_orthonormalize_against(context, comm, *B, none, none, Y, BY, scratch, tol, true);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                     \
  template void project_out(const dense::Context&, MPI_Comm, const BBasis<T>&, dense::DenseView<T>);                 \
  template std::int64_t b_orthonormalize_against(const dense::Context&, MPI_Comm, LinearOperator<T>&,                \
                                                 const BBasis<T>&, const BBasis<T>&, dense::DenseView<T>,            \
                                                 dense::DenseView<T>, dense::DenseView<T>, const Tolerances&, bool); \
  template std::int64_t b_orthonormalize_constraints(const dense::Context&, MPI_Comm, LinearOperator<T>*,            \
                                                     dense::DenseView<T>, dense::DenseView<T>, dense::DenseView<T>,  \
                                                     const Tolerances&);
BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
BLOCKEIGS_INSTANTIATE(std::complex<float>)
BLOCKEIGS_INSTANTIATE(std::complex<double>)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::lobpcg_detail
