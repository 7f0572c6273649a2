// Distributed orthonormalisation: W against an orthonormal Q and among itself
// by block Gram-Schmidt plus SVQB with column dropping (Duersch et al.,
// "ortho_drop"), repeated until orthogonal to working accuracy. The fused
// first pass takes Cholesky QR instead where its Gram matrix is well
// conditioned and nothing would be dropped (well_conditioned_transform).
#include "solver/blocks/orthonormalize.hpp"

#include <algorithm>
#include <cmath>
#include <complex>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::solver {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

// The two goals share one loop: project W against Q, SVQB with dropping,
// repeat. `orthonormal` repeats until a pass changes nothing that matters;
// `well_conditioned` stops after the first pass that was safe to do once: its
// SVQB Gram matrix not too ill-conditioned, and no column losing so much of
// its norm to the projection that the rounding left in it (~eps of the norm
// before) could be a sizeable share of what remains.
enum class BasisGoal { orthonormal, well_conditioned };

// W's `selected` columns (strictly increasing) moved to its front, unless
// they are there already.
template <class T>
void move_to_front(const dense::Context& context, dense::DenseView<T> W, const std::vector<std::int64_t>& selected) {
  for (std::size_t j = 0; j < selected.size(); ++j)
    if (selected[j] != std::int64_t(j)) {
      keep_columns(context, W, selected);
      return;
    }
}

// [Q W]^T W for W = Q M1 + W0 M2, from G0 = [Q W0]^T W0 ((q + nw0) x nw0,
// C = Q^T W0 its first q rows) and Q^T Q (null: the identity):
//   Q^T W = (Q^T Q) M1 + C M2,
//   W^T W = M1^T (Q^T W) + M2^T (C^T M1) + M2^T (W0^T W0) M2,
// the latter made exactly symmetric.
template <class S>
HostMatrixOf<S> derived_basis_gram(const HostMatrixOf<S>& G0, const HostMatrixOf<S>& M1, const HostMatrixOf<S>& M2,
                                   const HostMatrixOf<S>* q_gram) {
  const std::int64_t q = M1.rows(), nw0 = M2.rows(), nw = M2.cols();
  const S* C = G0.data();
  const S* W0tW0 = G0.data() + q * nw0;
  HostMatrixOf<S> out(q + nw, nw);
  S* QtW = out.data();  // out's first q rows
  if (q_gram) {
    product(false, false, q, nw, q, q_gram->data(), q, M1.data(), nw, S(0), QtW, nw);
  } else {
    std::copy(M1.values().begin(), M1.values().end(), QtW);
  }
  product(false, false, q, nw, nw0, C, nw0, M2.data(), nw, S(1), QtW, nw);
  // S = M1^T QtW + M2^T (C^T M1) + M2^T (W0^T W0 M2), then out's last nw rows = (S + S^T) / 2.
  std::vector<S> Sm(static_cast<std::size_t>(nw * nw)), D(static_cast<std::size_t>(nw0 * nw));
  product(true, false, nw, nw, q, M1.data(), nw, QtW, nw, S(0), Sm.data(), nw);
  product(true, false, nw0, nw, q, C, nw0, M1.data(), nw, S(0), D.data(), nw);
  product(true, false, nw, nw, nw0, M2.data(), nw, D.data(), nw, S(1), Sm.data(), nw);
  product(false, false, nw0, nw, nw0, W0tW0, nw0, M2.data(), nw, S(0), D.data(), nw);
  product(true, false, nw, nw, nw0, M2.data(), nw, D.data(), nw, S(1), Sm.data(), nw);
  for (std::int64_t i = 0; i < nw; ++i)
    for (std::int64_t j = 0; j < nw; ++j) out(q + i, j) = 0.5 * (Sm[i * nw + j] + conj_of(Sm[j * nw + i]));
  return out;
}

// The well-conditioned goal's first pass without reading W twice: one Gram
// matrix [Q W]^T W (LOBPCG's [X P Z]^T Z, in one pass over adjacent columns
// of one block or over the two blocks) gives C = Q^T W and W^T W, the projected block's Gram
// matrix is W^T W - C^T C (Q orthonormal), and (W - Q C) T = W T - Q (C T)
// is one update. Taken only when it is as safe as the explicit pass: every
// column keeps derived_gram_min_kept of its norm, SVQB drops nothing and
// its ratio allows a single pass. `selected` are the columns of W to use
// (their Gram entries are picked from the whole W's, and the update reads
// only them). Returns the kept count, or -1 with W untouched and C (= Q^T W
// of the selected columns) filled in for the explicit pass.
template <class T>
std::int64_t fused_first_pass(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q,
                              dense::DenseView<T> W, const std::vector<std::int64_t>& selected,
                              dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol, HostMatrixFor<T>& C,
                              BasisOptionsOf<small_t<T>>* options) {
  using Small = HostMatrixFor<T>;
  const std::int64_t q = Q.cols, nw = static_cast<std::int64_t>(selected.size());
  const dense::ConstDenseView<T> Wc(W);
  Small measured;
  if (!(options && options->measured_gram)) {
    // [Q W] as one view where W follows Q in one block.
    const bool adjacent = Q.ld == W.ld && Q.data + Q.cols == W.data;
    measured = gram<T>(context, comm,
                       adjacent ? SplitColumns<T>(dense::ConstDenseView<T>{Q.space, Q.rows, q + W.cols, Q.ld, Q.data})
                                : SplitColumns<T>(Q, Wc),
                       Wc);
  }
  const Small& G_whole = options && options->measured_gram ? *options->measured_gram : measured;
  BLOCKEIGS_ASSERT(G_whole.rows() == q + W.cols && G_whole.cols() == W.cols);
  // [Q W_sel]^T W_sel out of [Q W]^T W (itself where all of W is selected).
  bool all = nw == W.cols;
  for (std::int64_t j = 0; j < nw && all; ++j) all = selected[j] == j;
  Small picked;
  if (!all) {
    picked = Small(q + nw, nw);
    for (std::int64_t j = 0; j < nw; ++j) {
      for (std::int64_t i = 0; i < q; ++i) picked(i, j) = G_whole(i, selected[j]);
      for (std::int64_t i = 0; i < nw; ++i) picked(q + i, j) = G_whole(q + selected[i], selected[j]);
    }
  }
  const Small& G_all = all ? G_whole : picked;
  C = G_all.block(0, q, 0, nw);
  // G = (W^T W's symmetric (Hermitian) part) - C^T C.
  Small G(nw, nw);
  for (std::int64_t i = 0; i < nw; ++i)
    for (std::int64_t j = 0; j < nw; ++j) G(i, j) = 0.5 * (G_all(q + i, j) + conj_of(G_all(q + j, i)));
  using S = small_t<T>;
  product(true, false, nw, nw, q, C.data(), nw, C.data(), nw, S(1), G.data(), nw, S(-1));
  std::vector<double> before(static_cast<std::size_t>(nw));
  bool safe = true;
  for (std::int64_t j = 0; j < nw; ++j) {
    before[j] = std::real(G_all(q + j, j));
    if (!(std::real(G(j, j)) >= tol.derived_gram_min_kept * before[j]) || !(before[j] > 0)) safe = false;
  }
  if (!safe) return -1;
  double ratio = 1;
  const Small transform = well_conditioned_on_root(comm, G, tol, &before, ratio);
  if (transform.cols() != nw || ratio < tol.single_pass_ratio) return -1;
  // W(:, 0:nw) = Q (-C T) + W_sel T, each row read before it is written: T
  // spread over the rows of W's selected columns, zero on the others.
  Small minus_CT = multiply(C, transform);
  for (S& v : minus_CT.values()) v = -v;
  if (options && options->implicit) {
    // Coefficient form: only the chosen raw columns move (to the front).
    move_to_front(context, W, selected);
    options->w_gram = derived_basis_gram(G_all, minus_CT, transform, options->q_gram);
    options->w_from_q = std::move(minus_CT);
    options->w_from_z = transform;
    return nw;
  }
  Small spread(W.cols, nw);
  for (std::int64_t i = 0; i < nw; ++i)
    for (std::int64_t j = 0; j < nw; ++j) spread(selected[i], j) = transform(i, j);
  block_combine_pair(context, Q, minus_CT, dense::ConstDenseView<T>(W), spread, column_range(W, 0, nw), scratch);
  if (options) options->w_gram = derived_basis_gram(G_all, minus_CT, transform, options->q_gram);
  return nw;
}

template <class T>
std::int64_t make_basis(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q, dense::DenseView<T> W,
                        dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol, BasisGoal goal,
                        BasisOptionsOf<small_t<T>>* options = nullptr) {
  using Small = HostMatrixFor<T>;
  if (options) options->w_gram = options->w_from_q = options->w_from_z = Small();
  std::vector<std::int64_t> selected;
  if (options && options->columns) {
    selected = *options->columns;
  } else {
    for (std::int64_t j = 0; j < W.cols; ++j) selected.push_back(j);
  }
  std::int64_t nw = static_cast<std::int64_t>(selected.size());
  // The selected columns moved to the front, and W narrowed to them.
  auto compact = [&] {
    move_to_front(context, W, selected);
    for (std::int64_t j = 0; j < nw; ++j) selected[j] = j;
    W = column_range(W, 0, nw);
  };
  // Below half of W, a compaction pass reads less than the fused pass would
  // spend reading the unselected columns (unless their Gram matrix is in).
  if (2 * nw < W.cols && !(options && options->measured_gram)) compact();
  // C = Q^T W when the fused pass has already computed it for the first pass.
  Small known_C;
  if (goal == BasisGoal::well_conditioned && Q.cols > 0 && nw > 0) {
    const std::int64_t kept = fused_first_pass(context, comm, Q, W, selected, scratch, tol, known_C, options);
    if (kept >= 0) return kept;
  }
  if (options && options->implicit_only) return -1;
  compact();  // the explicit passes work on the selected columns only
  for (int pass = 0; pass < max_ortho_passes && nw > 0; ++pass) {
    dense::DenseView<T> Wv = column_range(W, 0, nw);
    Small C(Q.cols, nw);
    if (Q.cols > 0) {
      C = pass == 0 && known_C.rows() == Q.cols ? known_C : gram(context, comm, Q, dense::ConstDenseView<T>(Wv));
      block_update(context, T(-1), Q, C, T(1), Wv);
    }
    const Small G = gram(context, comm, dense::ConstDenseView<T>(Wv));
    // Done when the last pass changed nothing that matters: W was already
    // orthogonal to Q and orthonormal.
    if (goal == BasisGoal::orthonormal && pass > 0 && max_abs(C) <= tol.orthogonality &&
        max_abs_minus_identity(G) <= tol.orthogonality)
      return nw;
    // ||w_j||^2 before the projection, by Pythagoras (Q is orthonormal).
    std::vector<double> before(static_cast<std::size_t>(nw));
    double kept_fraction = 1;  // smallest ||w_j||^2 after / before over the columns
    for (std::int64_t j = 0; j < nw; ++j) {
      before[j] = std::real(G(j, j));
      for (std::int64_t i = 0; i < Q.cols; ++i) before[j] += abs2(C(i, j));
      if (before[j] > 0) kept_fraction = std::min(kept_fraction, std::real(G(j, j)) / before[j]);
    }
    double ratio = 1;
    const Small transform = svqb_on_root(comm, G, tol, Q.cols > 0 ? &before : nullptr, ratio);
    const std::int64_t kept = transform.cols();
    if (kept == 0) return 0;
    transform_in_place(context, Wv, transform, scratch);
    nw = kept;
    if (goal == BasisGoal::well_conditioned && ratio >= tol.single_pass_ratio && kept_fraction >= tol.single_pass_ratio)
      break;
  }
  return nw;
}

}  // namespace

namespace {

// transform_of(&kept_ratio) on rank 0, broadcast with kept_ratio.
template <class S, class Transform>
HostMatrixOf<S> transform_on_root(MPI_Comm comm, Transform&& transform_of, double& kept_ratio) {
  HostMatrixOf<S> transform;
  kept_ratio = 1;
  collectively(comm, [&] {
    if (rank_of(comm) == 0) transform = transform_of(&kept_ratio);
  });
  broadcast(comm, transform);
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&kept_ratio, 1, MPI_DOUBLE, 0, comm));
  return transform;
}

}  // namespace

template <class S>
HostMatrixOf<S> svqb_on_root(MPI_Comm comm, const HostMatrixOf<S>& G, const OrthonormalizeTolerances& tol,
                             const std::vector<double>* reference_sq_norms, double& kept_ratio) {
  return transform_on_root<S>(
      comm, [&](double* ratio) { return svqb_transform(G, tol, reference_sq_norms, ratio); }, kept_ratio);
}

template <class S>
HostMatrixOf<S> well_conditioned_on_root(MPI_Comm comm, const HostMatrixOf<S>& G, const OrthonormalizeTolerances& tol,
                                         const std::vector<double>* reference_sq_norms, double& kept_ratio) {
  return transform_on_root<S>(
      comm, [&](double* ratio) { return well_conditioned_transform(G, tol, reference_sq_norms, ratio); }, kept_ratio);
}

#define BLOCKEIGS_ON_ROOT(S)                                                                                           \
  template HostMatrixOf<S> svqb_on_root(MPI_Comm, const HostMatrixOf<S>&, const OrthonormalizeTolerances&,             \
                                        const std::vector<double>*, double&);                                          \
  template HostMatrixOf<S> well_conditioned_on_root(MPI_Comm, const HostMatrixOf<S>&, const OrthonormalizeTolerances&, \
                                                    const std::vector<double>*, double&);
BLOCKEIGS_ON_ROOT(double)
BLOCKEIGS_ON_ROOT(std::complex<double>)
#undef BLOCKEIGS_ON_ROOT

template <class T>
std::int64_t orthonormalize_against(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q,
                                    dense::DenseView<T> W, dense::DenseView<T> scratch,
                                    const OrthonormalizeTolerances& tol) {
  return make_basis(context, comm, Q, W, scratch, tol, BasisGoal::orthonormal);
}

template <class T>
std::int64_t condition_against(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q,
                               dense::DenseView<T> W, dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol,
                               BasisOptionsOf<small_t<T>>* options) {
  return make_basis(context, comm, Q, W, scratch, tol, BasisGoal::well_conditioned, options);
}

template <class T>
std::int64_t condition_basis(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> W,
                             dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol) {
  const dense::ConstDenseView<T> none{W.space, W.rows, 0, W.ld, W.data};
  return make_basis(context, comm, none, W, scratch, tol, BasisGoal::well_conditioned);
}

#define BLOCKEIGS_BASES(T)                                                                                           \
  template std::int64_t condition_basis(const dense::Context&, MPI_Comm, dense::DenseView<T>, dense::DenseView<T>,   \
                                        const OrthonormalizeTolerances&);                                            \
  template std::int64_t condition_against(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>,                 \
                                          dense::DenseView<T>, dense::DenseView<T>, const OrthonormalizeTolerances&, \
                                          BasisOptionsOf<small_t<T>>*);                                              \
  template std::int64_t orthonormalize_against(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>,            \
                                               dense::DenseView<T>, dense::DenseView<T>,                             \
                                               const OrthonormalizeTolerances&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_BASES)
#undef BLOCKEIGS_BASES

template <class S>
double max_abs(const HostMatrixOf<S>& M) {
  double m = 0;
  for (const S& v : M.values()) m = std::max(m, std::abs(v));
  return m;
}

template <class S>
double max_abs_minus_identity(const HostMatrixOf<S>& M) {
  double m = 0;
  for (std::int64_t i = 0; i < M.rows(); ++i)
    for (std::int64_t j = 0; j < M.cols(); ++j) m = std::max(m, std::abs(M(i, j) - S(i == j ? 1.0 : 0.0)));
  return m;
}

template double max_abs(const HostMatrix&);
template double max_abs(const ComplexHostMatrix&);
template double max_abs_minus_identity(const HostMatrix&);
template double max_abs_minus_identity(const ComplexHostMatrix&);

}  // namespace blockeigs::solver
