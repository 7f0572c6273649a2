// LOBPCG's search block W: soft locking, the active residuals (or their
// preconditioned form) at the front of Z's block, conditioned against [X P],
// and A W (lobpcg_iteration.hpp).
#include <algorithm>
#include <utility>

#include "solver/lobpcg/lobpcg_iteration.hpp"

namespace blockeigs::solver::lobpcg_detail {

// Soft locking: only unconverged columns get a new search direction.
template <class T, class Ts>
std::vector<std::int64_t> LobpcgIteration<T, Ts>::active_pairs() const {
  std::vector<std::int64_t> active;
  for (int j = 0; j < nb_; ++j)
    if (!conv_[j]) active.push_back(j);
  return active;
}

// W from the `active` residuals, conditioned against [X P], and its
// product A W; none where no search direction is left.
template <class T, class Ts>
auto LobpcgIteration<T, Ts>::build_search_block(std::vector<std::int64_t> active) -> std::optional<SearchStep> {
  const bool z_product_ahead = place_search_columns(active);
  if (B_) return condition_search_b(std::move(active));
  if constexpr (!single) {
    // Constraints: the search block B-orthogonal to Y (B = I here); [X P] is already.
    if (constrained_) project_out(ctx_, comm_, constraints(), column_range(Z(cur_), 0, std::int64_t(active.size())));
  }
  return condition_search(std::move(active), z_product_ahead);
}

// The active residuals, W's raw columns, at the front of Z's block (with a
// preconditioner, W itself formed there from them). True where A Z was
// multiplied ahead for all of them (A W's columns then moved with them).
template <class T, class Ts>
bool LobpcgIteration<T, Ts>::place_search_columns(const std::vector<std::int64_t>& active) {
  const auto na = static_cast<std::int64_t>(active.size());
  const std::int64_t q = nb_ + np_;
  const dense::DenseView<Ts> Rv = column_range(Z(cur_), 0, nb_);  // the residuals
  const dense::DenseView<Ts> W = column_range(Z(cur_), 0, na);
  // The active residuals' columns in Rv, and whether A Z was multiplied
  // ahead for all of them (A W's columns then move with them).
  std::vector<std::int64_t> active_columns;
  for (std::int64_t j : active) active_columns.push_back(residuals_.position[j]);
  const bool z_product_ahead =
      ahead_.queued && ahead_.q == q &&
      std::all_of(active_columns.begin(), active_columns.end(), [&](std::int64_t c) { return c < ahead_.count; });
  ahead_ = ProductAhead{};
  const dense::DenseView<T> AR = column_range(AW(cur_), 0, nb_);  // A W's columns, beside Rv's
  if (preconditioner_) {
    if constexpr (!single) {  // (search_in_fp32 refuses a preconditioner)
      const dense::DenseView<T> Ra = column_range(scratch_.view(), 0, na);
      select_columns(ctx_, dense::ConstDenseView<T>(Rv), active_columns, Ra);
      clock_.to(time_.other);
      preconditioner_->apply(Ra, W);
      clock_.to(time_.preconditioner);
    }
  } else {
    // Soft locking: only the active residuals go on, as the raw columns of
    // W in any order. The Ritz update put last step's active ones first,
    // so they need moving only when one has converged (or come back).
    std::sort(active_columns.begin(), active_columns.end());
    if (active_columns.back() != na - 1) {
      if (products_.ax_implied) {
        // A X needs every residual: reorder them instead, the converged after.
        std::vector<std::int64_t> order = active_columns, moved_to(static_cast<std::size_t>(nb_), 0);
        for (std::int64_t c = 0; c < nb_; ++c)
          if (!std::binary_search(active_columns.begin(), active_columns.end(), c)) order.push_back(c);
        for (std::int64_t c = 0; c < nb_; ++c) moved_to[order[c]] = c;
        permute_columns(ctx_, Rv, order);
        if (z_product_ahead) permute_columns(ctx_, AR, order);
        for (auto& p : residuals_.position) p = moved_to[p];
      } else {
        keep_columns(ctx_, Rv, active_columns);
        if (z_product_ahead) keep_columns(ctx_, AR, active_columns);
      }
    }
  }
  return z_product_ahead;
}

// W conditioned against [X P] (condition_search_block), and A W and S^T A Z
// where the conditioning did not leave them current.
template <class T, class Ts>
auto LobpcgIteration<T, Ts>::condition_search(std::vector<std::int64_t> active, bool z_product_ahead)
    -> std::optional<SearchStep> {
  const auto na = static_cast<std::int64_t>(active.size());
  const std::int64_t q = nb_ + np_;
  const dense::DenseView<Ts> W = column_range(Z(cur_), 0, na);
  // W is conditioned against [X P] in coefficient form from the raw
  // columns Z now in W's place (BasisOptions::implicit): A Z and, on a
  // carried step, S^T A Z do not wait for it. So A Z comes first, then
  // [X P Z]^T [Z A Z], W's Gram matrix and S^T A Z in one pass over
  // [X P Z]. (Where S^T A Z is not wanted, W's Gram matrix is queued
  // before A Z instead, and the host conditions W while the device
  // multiplies.)
  const dense::ConstDenseView<T> XP = column_range(cS(cur_), 0, q);
  const SplitColumns<T, Ts> XPZ = basis(cur_, q, na);
  Matrix measured, s_t_az;
  result_.stats.z_products_ahead += z_product_ahead ? 1 : 0;
  if (carried_.valid) {
    if (!z_product_ahead) apply_a(q, z_product_width(na));
    const Matrix both =
        start_gram_pair(ctx_, comm_, XPZ, dense::ConstDenseView<Ts>(W), column_range(cAW(cur_), 0, na)).finish();
    measured = both.block(0, q + na, 0, na);
    s_t_az = both.block(0, q + na, na, na);
    clock_.to(time_.rayleigh_ritz);
  } else {
    GramInFlightOf<small_t<T>> z_gram =
        start_gram_pair(ctx_, comm_, XPZ, dense::ConstDenseView<Ts>(W), column_range(cAW(cur_), 0, 0));
    clock_.to(time_.orthogonalization);
    if (!z_product_ahead) apply_a(q, z_product_width(na));
    measured = z_gram.finish();
  }
  basis_options_.q_gram = rank_ == 0 && carried_.valid ? &carried_.b : nullptr;
  basis_options_.implicit = true;
  basis_options_.measured_gram = &measured;
  const ConditionedSearch conditioned = condition_search_block<T, Ts>(
      ctx_, comm_, XP, W, dense::DenseView<T>{space_, n_, na, w_width_, single ? blocks_.ZT.data() : nullptr},
      scratch_.view(), tol_, basis_options_, options_.seed, A_.first_row(),
      std::int64_t{nb_} * (max_refills + 1 + iteration_), constraints());
  std::int64_t nw = conditioned.kept;
  // A Z and S^T A Z stand where W kept the raw columns as they were.
  const bool products_current = !conditioned.refilled && basis_options_.w_from_z.rows() == na;
  SearchBlock search{nw, nw, std::move(basis_options_.w_from_q), std::move(basis_options_.w_from_z)};
  if (search.from_z.rows() > 0) {
    search.raw = search.from_z.rows();
    ++result_.stats.implicit_search_steps;
  }
  // Not even a random direction: [X P] spans the whole space (a matrix
  // barely wider than the block) and the tolerance is below its rounding
  // floor. Nothing can improve; the caller stops with the pairs as they are.
  if (nw == 0) return std::nullopt;
  clock_.to(time_.orthogonalization);
  if (!products_current) {
    // W was formed (the explicit passes) or refilled: multiply it afresh.
    // It overwrote residuals that an implied A X needs.
    make_ax_explicit();
    s_t_az = Matrix();
    apply_a(q, z_product_width(search.raw));
  }
  return SearchStep{std::move(active), std::move(search), std::move(s_t_az)};
}

// With B, as condition_search in the B-inner product: B Z and A Z of the
// active residuals Z (B-orthogonal to Y first), [X P Z]^T [B Z  A Z] in one
// pass, and W in coefficient form over Z from that Gram matrix, so that no
// pass forms W or B W (the Ritz update reads [X P Z] and [B X B P B Z]).
// Where the single derived pass is not safe, W is formed and
// B-orthonormalised explicitly.
template <class T, class Ts>
auto LobpcgIteration<T, Ts>::condition_search_b(std::vector<std::int64_t> active) -> std::optional<SearchStep> {
  if constexpr (single) {
    BLOCKEIGS_ASSERT(!"the residuals are in the blocks' precision with B");
    return std::nullopt;
  } else {
    const auto na = static_cast<std::int64_t>(active.size());
    const std::int64_t q = nb_ + np_;
    const dense::DenseView<T> W = column_range(Z(cur_), 0, na), BWv = column_range(BW(), 0, na);
    if (constrained_) project_out(ctx_, comm_, constraints(), W);
    clock_.to(time_.orthogonalization);
    B_->apply(T(1), dense::ConstDenseView<T>(W), T(0), BWv);
    clock_.to(time_.spmm);
    apply_a(q, na);
    const Matrix both =
        start_gram_pair(ctx_, comm_, basis(cur_, q, na), dense::ConstDenseView<T>(BWv), column_range(cAW(cur_), 0, na))
            .finish();
    Matrix measured = both.block(0, q + na, 0, na), s_t_az = both.block(0, q + na, na, na);
    require_positive_b_norms(measured, q, na, tol_.eps);
    clock_.to(time_.rayleigh_ritz);
    // Q^T B Q for Q = [X P]: carried, else B-orthonormal to rounding.
    basis_options_.q_gram = rank_ == 0 && carried_.valid ? &carried_.b : nullptr;
    basis_options_.implicit = true;
    basis_options_.implicit_only = true;
    basis_options_.measured_gram = &measured;
    const std::int64_t kept =
        condition_against(ctx_, comm_, column_range(cS(cur_), 0, q), W, scratch_.view(), tol_, &basis_options_);
    basis_options_.implicit_only = false;
    basis_options_.measured_gram = nullptr;
    clock_.to(time_.orthogonalization);
    if (kept > 0 && basis_options_.w_from_z.rows() == na) {
      ++result_.stats.implicit_search_steps;
      SearchBlock search{na, kept, std::move(basis_options_.w_from_q), std::move(basis_options_.w_from_z)};
      return SearchStep{std::move(active), std::move(search), std::move(s_t_az)};
    }
    basis_options_.w_gram = basis_options_.w_from_q = basis_options_.w_from_z = Matrix();
    // W formed: B-orthonormalised against Y and [X P] with B W beside it
    // (repeated passes where one is not safe), then A W; refilled at random
    // where no direction is left.
    const BBasis<T> XP{column_range(cS(cur_), 0, q), column_range(cBS(cur_), 0, q)};
    std::int64_t nw =
        b_orthonormalize_against(ctx_, comm_, *B_, constraints(), XP, W, BWv, scratch_.view(), tol_, false);
    if (nw == 0) {
      // Every residual direction lies in span[X P] to working precision: explore at random.
      fill_random(ctx_, W, options_.seed, A_.first_row(), std::int64_t{nb_} * (max_refills + 1 + iteration_));
      nw = b_orthonormalize_against(ctx_, comm_, *B_, constraints(), XP, W, BWv, scratch_.view(), tol_, false);
    }
    clock_.to(time_.orthogonalization);
    if (nw == 0) return std::nullopt;
    apply_a(q, nw);
    return SearchStep{std::move(active), SearchBlock{nw, nw, {}, {}}, {}};
  }
}

#define BLOCKEIGS_LOBPCG_SEARCH(T, Ts)                                                         \
  template std::vector<std::int64_t> LobpcgIteration<T, Ts>::active_pairs() const;             \
  template std::optional<SearchStepOf<small_t<T>>> LobpcgIteration<T, Ts>::build_search_block( \
      std::vector<std::int64_t>);
BLOCKEIGS_LOBPCG_TYPES(BLOCKEIGS_LOBPCG_SEARCH)
#undef BLOCKEIGS_LOBPCG_SEARCH

}  // namespace blockeigs::solver::lobpcg_detail
