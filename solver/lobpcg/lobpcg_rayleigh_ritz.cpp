// LOBPCG's Rayleigh-Ritz step: the Gram matrices measured or derived, rank
// 0's small problem (with its retry), the Ritz update or the refresh's [X P],
// and the matrices carried to the next step (lobpcg_iteration.hpp).
#include <algorithm>
#include <cmath>
#include <utility>

#include "solver/lobpcg/lobpcg_iteration.hpp"

namespace blockeigs::solver::lobpcg_detail {
namespace {

// A Rayleigh-Ritz matrix of [X P Z] in the [X P W] basis (SearchBlock).
template <class S>
HostMatrixOf<S> in_w_basis(const SearchBlockOf<S>& w, HostMatrixOf<S> G) {
  return w.from_z.rows() > 0 ? in_search_basis(G, w.from_q, w.from_z) : G;
}

}  // namespace

// Rayleigh-Ritz on the basis [X P W] (P in [nb, nb + np)), then [X P] of
// the next iterate, with P selected from the `active` Ritz vectors, and its
// A X, A P and residuals in the same pass; with `refresh` only [X P], as
// the caller recomputes A X and A P with the operator. S(cur) and Z(cur)
// hold [X P Z]: W itself, or the raw columns Z it is formed from (SearchBlock).
// The small problems are solved in the [X P W] basis; their coefficients
// are then taken back to [X P Z] for the update.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::rayleigh_ritz(const SearchBlock& w, const std::vector<std::int64_t>& active, bool refresh,
                                           const Matrix* s_t_az) {
  const std::int64_t q = nb_ + np_;  // [X P]; W's raw columns are Z's
  RitzStep step;
  // Derived: S^T A Z measured, the rest carried or from the orthogonalisation.
  // The same choice on every rank: `carried` and the fused pass's branch are.
  // (With B the W rows of S^T B S come from the B-inner product's conditioning.)
  bool derive = (B_ || !constrained_) && carried_.valid && w.kept > 0 && basis_options_.w_gram.rows() == q + w.kept;
  for (;;) {
    ritz_matrices(w, derive, s_t_az, step);
    s_t_az = nullptr;
    if (!solve_small_problem(w, active, derive, step)) break;
    derive = false;
  }
  carried_.valid = true;
  result_.stats.carried_steps += derive ? 1 : 0;
  broadcast(comm_, step.level);
  broadcast(comm_, step.all_values);
  broadcast(comm_, step.chosen);
  broadcast(comm_, step.coeff);  // for [X P Z]
  const int next = 1 - cur_;
  if (!refresh) {
    update_basis(w, active, step, next);
  } else {
    // A X and A P come from the operator next, which drops the carried blocks.
    split_update<T>(ctx_, basis_in_t(cur_, q, w.raw), 0, step.coeff, T(0), column_range(S(next), 0, step.coeff.cols()));
  }
  cur_ = next;
  np_ = step.coeff.cols() - nb_;
  lambda_ = std::move(step.chosen);
  for (double v : step.all_values) norm_a_ = std::max(norm_a_, std::abs(v));
  result_.stats.restarts += step.level > 0 ? 1 : 0;
  clock_.to(time_.rayleigh_ritz);
}

// Rank 0's GA and GB, the Rayleigh-Ritz matrices in the [X P W] basis:
// derived (S^T A Z measured, or taken from the caller's `s_t_az`; the [X P]
// blocks carried; W's rows of S^T S from the orthogonalisation), or both
// measured.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::ritz_matrices(const SearchBlock& w, bool derive, const Matrix* s_t_az, RitzStep& step) {
  const std::int64_t q = nb_ + np_;
  const dense::ConstDenseView<T> AWv = column_range(cAW(cur_), 0, w.raw);
  if (derive) {
    // S^T A Z, measured with W's Gram matrix where the caller could.
    const Matrix G = s_t_az ? *s_t_az : gram<T>(ctx_, comm_, basis_in_t(cur_, q, w.raw), AWv);
    if (rank_ == 0) {
      step.GA = in_w_basis(w, assemble_ritz_matrix(carried_.a, G));
      step.GB = assemble_ritz_matrix(carried_.b, basis_options_.w_gram);
    }
  } else {
    // S^T [X P Z] (with B: S^T [B X B P B W]) and S^T [A [X P] A W]: GB and
    // GA, both queued before either is waited for.
    make_ax_explicit();
    const SplitColumns<T> St = basis_in_t(cur_, q, w.raw);
    GramInFlightOf<small_t<T>> b_gram = B_ ? start_gram_pair(ctx_, comm_, St, column_range(cBS(cur_), 0, q),
                                                             column_range(dense::ConstDenseView<T>(BW()), 0, w.raw))
                                           : start_gram_pair(ctx_, comm_, St, column_range(cS(cur_), 0, q), St.tail);
    GramInFlightOf<small_t<T>> a_gram = start_gram_pair(ctx_, comm_, St, column_range(cAS(cur_), 0, q), AWv);
    const Matrix G_b = b_gram.finish(), G_a = a_gram.finish();
    if (rank_ == 0) {
      step.GB = in_w_basis(w, G_b);
      step.GA = in_w_basis(w, G_a);
    }
  }
}

// Rank 0 solves the small problem GA c = theta GB c (every rank agrees on an
// error there) for the wanted Ritz values, X's and P's coefficients and the
// next P's padding. True where the matrices were derived and the problem
// asks for a restart: it is then solved again on measured ones.
template <class T, class Ts>
bool LobpcgIteration<T, Ts>::solve_small_problem(const SearchBlock& w, const std::vector<std::int64_t>& active,
                                                 bool derive, RitzStep& step) {
  const std::int64_t q = nb_ + np_;
  const std::int64_t ns = q + w.kept;
  const bool implicit = w.from_z.rows() > 0;
  const double host_begin = MPI_Wtime();
  int retry = 0;
  collectively(comm_, [&] {
    if (rank_ != 0) return;
    // The small problems skip P's zero columns [q - p_padding, q).
    const std::int64_t pad_at = q - p_padding_;
    Matrix GA_dropped, GB_dropped;
    if (p_padding_ > 0) {
      GA_dropped = without_span(step.GA, pad_at, p_padding_);
      GB_dropped = without_span(step.GB, pad_at, p_padding_);
    }
    const Matrix& GAu = p_padding_ > 0 ? GA_dropped : step.GA;
    const Matrix& GBu = p_padding_ > 0 ? GB_dropped : step.GB;
    RitzPairsOf<small_t<T>> pairs = lobpcg_detail::rayleigh_ritz(GAu, GBu, nb_, pad_at, nb_, tol_, options_.which,
                                                                 ritz_eigen_ ? &ritz_eigen_ : nullptr);
    // A restart is decided on measured Gram matrices only. (Not seen in
    // the tests: the orthogonalisation keeps the carried GB within
    // rounding of the identity, so this guards against the unforeseen.)
    if (derive && pairs.level > 0) {
      retry = 1;
      return;
    }
    step.level = pairs.level;
    const auto m = static_cast<std::int64_t>(pairs.values.size());
    // The wanted end's vectors, in order (largest: largest first).
    const Matrix& Cx = pairs.vectors;
    for (std::int64_t c = 0; c < nb_; ++c)
      step.chosen.push_back(pairs.values[options_.which == SpectrumEnd::smallest ? c : m - 1 - c]);
    const Matrix Cp = basis_selection(Cx, GBu, nb_, active, tol_);
    const std::int64_t used = nb_ + Cp.cols();
    Matrix c_used(ns - p_padding_, used);
    for (std::int64_t i = 0; i < c_used.rows(); ++i) {
      for (std::int64_t c = 0; c < nb_; ++c) c_used(i, c) = Cx(i, c);
      for (std::int64_t c = 0; c < Cp.cols(); ++c) c_used(i, nb_ + c) = Cp(i, c);
    }
    step.all_values = std::move(pairs.values);
    // Zero rows for this P's padding; zero columns pad the next P.
    step.coeff_w = with_zero_rows(c_used, pad_at, p_padding_, round_up(used, align_));
    p_padding_ = step.coeff_w.cols() - used;
    step.coeff = implicit ? to_raw_coefficients(step.coeff_w, w.from_q, w.from_z) : step.coeff_w;
  });
  time_.small_eigenproblem += MPI_Wtime() - host_begin;
  broadcast(comm_, retry);
  return retry != 0;
}

// The Ritz update into buffer `next`: [X P] of the next iterate, its A X
// (unless left implied), A P and the next residuals in one pass, with A Z of
// the next step queued behind it and the carried matrices formed meanwhile.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::update_basis(const SearchBlock& w, const std::vector<std::int64_t>& active,
                                          const RitzStep& step, int next) {
  const std::int64_t q = nb_ + np_;
  const std::int64_t m = step.coeff.cols();
  const SplitColumns<T, Ts> Sv = basis(cur_, q, w.raw);
  const SplitColumns<T> ASv(column_range(cAS(cur_), 0, q), column_range(cAW(cur_), 0, w.raw));
  // A X as the last residuals describe it, and whether the next A X is
  // stored or left to the residuals this update forms.
  std::optional<ImpliedAX> implied;
  if (products_.ax_implied) implied = ImpliedAX{lambda_, q, residuals_.position};
  const bool store_ax = !imply_ax_;
  // Active residuals first, in order, then the converged ones.
  residuals_.position.assign(static_cast<std::size_t>(nb_), 0);
  std::int64_t place = 0;
  std::vector<bool> is_active(static_cast<std::size_t>(nb_), active.empty());
  for (std::int64_t j : active) is_active[j] = true;
  for (int pass = 0; pass < 2; ++pass)
    for (int j = 0; j < nb_; ++j)
      if (is_active[j] == (pass == 0)) residuals_.position[j] = place++;
  // With A X implied, S's view reaches the residuals (all nb of them).
  const SplitColumns<T, Ts> S_read = implied ? basis(cur_, q, std::max(w.raw, std::int64_t{nb_})) : Sv;
  ahead_ = ProductAhead{};
  // A Z of the next buffer: the operator directly, not apply_a, whose
  // bookkeeping (carried blocks, residuals) is about the current one.
  auto meanwhile = [&] {
    if (!preconditioner_ && !B_ && !constrained_) {
      ahead_ = ProductAhead{true, m, z_product_width(active.empty() ? nb_ : std::int64_t(active.size()))};
      clock_.to(time_.rayleigh_ritz);
      apply_to_z(column_range(cZ(next), 0, ahead_.count), column_range(AW(next), 0, ahead_.count));
      clock_.to(time_.spmm);
    }
    carry(step);
    clock_.settle_done();  // the host waits for the update anyway
  };
  if constexpr (!single) {
    if (B_) {
      // B [X P] takes the place of [X P] in the update, so that its residuals
      // are A X - B X Lambda with ||B x||; then [X P] itself.
      const SplitColumns<T> BSv(column_range(cBS(cur_), 0, q), column_range(dense::ConstDenseView<T>(BW()), 0, w.raw));
      residuals_.norms = solver::ritz_update(ctx_, comm_, BSv, ASv, step.coeff, step.chosen,
                                             column_range(BS(next), 0, m), column_range(AS(next), 0, m),
                                             column_range(Z(next), 0, nb_), residuals_.position, meanwhile);
      split_update<T>(ctx_, basis_in_t(cur_, q, w.raw), 0, step.coeff, T(0), column_range(S(next), 0, m));
      constrain_residuals(next);
      return;
    }
  }
  residuals_.norms = solver::ritz_update(ctx_, comm_, S_read, ASv, step.coeff, step.chosen, column_range(S(next), 0, m),
                                         column_range(AS(next), 0, m), column_range(Z(next), 0, nb_),
                                         residuals_.position, meanwhile, implied ? &*implied : nullptr, store_ax);
  products_.ax_implied = !store_ax;
  result_.stats.implied_ax_steps += implied ? 1 : 0;
  constrain_residuals(next);
}

// The next step's [X P] blocks of both Rayleigh-Ritz matrices, on rank 0
// while the device updates.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::carry(const RitzStep& step) {
  if (rank_ != 0) return;
  carried_.a = transpose_times(step.coeff_w, multiply(step.GA, step.coeff_w));
  carried_.b = transpose_times(step.coeff_w, multiply(step.GB, step.coeff_w));
}

#define BLOCKEIGS_LOBPCG_RAYLEIGH_RITZ(T, Ts)                                                                     \
  template void LobpcgIteration<T, Ts>::rayleigh_ritz(const SearchBlock&, const std::vector<std::int64_t>&, bool, \
                                                      const HostMatrixFor<T>*);
BLOCKEIGS_LOBPCG_TYPES(BLOCKEIGS_LOBPCG_RAYLEIGH_RITZ)
#undef BLOCKEIGS_LOBPCG_RAYLEIGH_RITZ

}  // namespace blockeigs::solver::lobpcg_detail
