// LOBPCG's main loop (see lobpcg.hpp for the method and its choices).
//
// Storage: [X P] and A [X P] = [AX AP] side by side in one block, the
// residuals Z (the raw columns of the search block W) and A W each in a
// compact block of their own, double buffered: the Ritz update writes
// [X_new P_new], its A [X P] and the next residuals into the other buffer.
// The basis S = [X P Z] is taken in two views (SplitColumns); Z may be in
// fp32 beside fp64 blocks (LobpcgOptions::search_precision). P occupies
// only as many columns as it currently has, padded with zero columns to the
// column alignment (LobpcgOptions::column_alignment).
#include "solver/lobpcg/lobpcg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/blocks/search_block_ops.hpp"
#include "solver/lobpcg/lobpcg_best.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/lobpcg/norm_estimate.hpp"
#include "spmm/memory.hpp"

namespace blockeigs::solver {
namespace {

using namespace lobpcg_detail;

// LOBPCG's search block W as Z's block holds it: W itself
// (raw == kept, no coefficients), or the raw columns Z that condition_against
// left in coefficient form, W = [X P] from_q + Z from_z (BasisOptions::implicit),
// so that no pass over the big block forms W: A W, the Rayleigh-Ritz matrices
// and the Ritz update are all taken through Z and the coefficients.
struct SearchBlock {
  std::int64_t raw = 0;   // columns of Z
  std::int64_t kept = 0;  // columns of W
  HostMatrix from_q, from_z;
};

}  // namespace

// The solver with the residual block Z in Ts (T, or fp32 for fp64 blocks).
template <class T, class Ts>
LobpcgResult<T> run_lobpcg(LinearOperator<T>& A, const LobpcgOptions& options, Preconditioner<T>* preconditioner,
                           std::optional<spmm::ConstDenseView<T>> start, int nb, double t_begin) {
  constexpr bool single = !std::is_same_v<T, Ts>;  // Z in fp32 beside fp64 blocks
  const int k = options.k;
  const PrivateComm private_comm(A.comm());
  const MPI_Comm comm = private_comm.get();
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const spmm::Context& ctx = A.context();
  const Space space = ctx.space();
  const std::int64_t n = A.local_rows();
  const Tolerances tol = Tolerances::for_type<T>();

  // [X P] spans a multiple of `align` columns, P's last `p_padding` of them
  // zero: then the Ritz update's outputs and the residuals after them start
  // and end on whole 32-byte sectors. Partial sectors cost the fused update
  // up to 45% once soft locking leaves P an odd width (block-ops-bench's
  // locking cases). Zero columns add exact zeros to every product; the small
  // problems drop their rows and columns.
  const std::int64_t align = column_alignment<T>(options, space);
  // [X P] and A [X P] side by side in one block per buffer (at most 2 nb
  // columns each, rounded up). The residuals Z, where W is built (W's raw
  // columns), and A W each have a compact block of their own: the operator
  // reads and writes rows there faster than as 160 bytes in every 960 (H200,
  // block 20: A Z 0.376 -> 0.326 ms; docs/benchmarks/solvers.md#compact-blocks),
  // and a block of its own can take another precision. The basis S is [X P] and Z in two views (SplitColumns).
  // Zeroed once, so that the unused columns that a Gram pass or a widened
  // product also reads are finite.
  const std::int64_t widest_xp = round_up(2 * std::int64_t{nb}, align);
  const std::int64_t ld = 2 * widest_xp, w_width = round_up(nb, align);
  spmm::DenseBlock<T> SAS[2] = {{space, n, ld}, {space, n, ld}};
  spmm::DenseBlock<Ts> ZB[2] = {{space, n, w_width}, {space, n, w_width}};
  spmm::DenseBlock<T> AWB[2] = {{space, n, w_width}, {space, n, w_width}};
  // With Z in fp32: an fp64 copy of Z for the rare steps that read or form
  // it in fp64 (measured Gram matrices, refreshes, W formed by the explicit
  // passes, residuals formed apart from the Ritz update).
  spmm::DenseBlock<T> ZT = single ? spmm::DenseBlock<T>(space, n, w_width) : spmm::DenseBlock<T>();
  for (auto& b : SAS) spmm::fill_bytes(b.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * ld));
  for (auto& b : ZB) spmm::fill_bytes(b.data(), space, 0, sizeof(Ts) * static_cast<std::size_t>(n * w_width));
  for (auto& b : AWB) spmm::fill_bytes(b.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * w_width));
  if (single) spmm::fill_bytes(ZT.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * w_width));
  auto S = [&](int b) { return spmm::DenseView<T>{space, n, widest_xp, ld, SAS[b].data()}; };  // [X P]
  auto AS = [&](int b) { return spmm::DenseView<T>{space, n, widest_xp, ld, SAS[b].data() + widest_xp}; };
  auto Z = [&](int b) { return spmm::DenseView<Ts>{space, n, w_width, w_width, ZB[b].data()}; };
  auto AW = [&](int b) { return spmm::DenseView<T>{space, n, w_width, w_width, AWB[b].data()}; };
  auto cS = [&](int b) { return spmm::ConstDenseView<T>(S(b)); };
  auto cAS = [&](int b) { return spmm::ConstDenseView<T>(AS(b)); };
  auto cZ = [&](int b) { return spmm::ConstDenseView<Ts>(Z(b)); };
  auto cAW = [&](int b) { return spmm::ConstDenseView<T>(AW(b)); };
  // The basis [X P Z] of buffer b over q columns of [X P] and z of Z.
  auto basis = [&](int b, std::int64_t q, std::int64_t z) {
    return SplitColumns<T, Ts>(column_range(cS(b), 0, q), column_range(cZ(b), 0, z));
  };
  // The basis with Z in T: basis() itself, or (Z in fp32) with Z's first z
  // columns widened into ZT.
  auto basis_in_t = [&](int b, std::int64_t q, std::int64_t z) {
    if constexpr (single) {
      const spmm::DenseView<T> widened{space, n, z, w_width, ZT.data()};
      convert_block(ctx, column_range(cZ(b), 0, z), widened);
      return SplitColumns<T>(column_range(cS(b), 0, q), spmm::ConstDenseView<T>(widened));
    } else {
      return basis(b, q, z);
    }
  };
  // C = A B for B in Z's block (fp32 or T), C in A W's.
  auto apply_to_z = [&](spmm::ConstDenseView<Ts> B, spmm::DenseView<T> C) {
    if constexpr (single) apply_single(A, B, C);
    else A.apply(T(1), B, T(0), C);
  };
  // The residuals go into Z's block, where W is built (nb of them); a
  // preconditioner reads them from there into scratch.
  spmm::DenseBlock<T> scratch(space, n, nb);
  int cur = 0;
  std::int64_t np = 0;         // columns of P, right after X, padding included
  std::int64_t p_padding = 0;  // P's last columns that are zero (rank 0's bookkeeping)

  LobpcgResult<T> result;
  result.block_size = nb;
  result.search_in_fp32 = single;
  LobpcgTimings& time = result.timings;
  PhaseTimer clock(ctx);
  std::vector<double> lambda;  // the nb current Ritz values, in the chosen order
  // ||A||_est (lobpcg.hpp, StoppingTest): the power method's lower bound for
  // the backward test, then the largest |Ritz value| seen. The relative test
  // needs no norm (and so no products).
  double norm_a = 0;
  if (options.test == StoppingTest::backward) {
    norm_a = power_norm_estimate(A, comm, norm_estimate_steps, mix64(options.seed ^ 0x6e6f726d5f657374ULL));
    clock.to(time.spmm);
  }

  // Where rank 0 solves its Rayleigh-Ritz eigenproblems (the large ones on
  // the device; ritz_eigen_solver).
  const SymmetricEigenSolver ritz_eigen = rank == 0 ? ritz_eigen_solver(ctx, widest_xp + nb) : SymmetricEigenSolver();

  // Rank 0's Rayleigh-Ritz matrices of the next [X P], C^T GA C and C^T GB C
  // for the last step's coefficients C: the next step then measures only
  // S^T A W, and takes the W rows of S^T S from the orthogonalisation
  // (BasisOptions). Dropped when A X or A P is recomputed (they were made for
  // the implicitly updated blocks), so that every recompute_interval
  // iterations the full Gram matrices are measured again and rounding cannot
  // accumulate in them.
  HostMatrix carried_a, carried_b;
  bool carried = false;
  solver::BasisOptions basis_options;
  // The residual norms of the current X, when the Ritz update formed them,
  // and where it placed each residual among Z's columns: the
  // last step's active ones first, so that soft locking seldom has to move
  // any (see the compaction below).
  std::optional<ResidualNorms> residuals;
  std::vector<std::int64_t> residual_position;
  // A X held implied instead of stored: X Lambda plus the residuals, which
  // stay in Z's block as W's raw columns (ImpliedAX). The Ritz
  // update then neither writes A X nor reads it (LOBPCG's 220 columns of
  // traffic a step at block 20 become 180). Not with a preconditioner, which
  // writes W over the residuals. Whatever else reads A X makes it explicit
  // with the operator first (make_ax_explicit), which is rare.
  const bool imply_ax =
      !preconditioner &&
      (options.imply_ax == ImplyAX::always ||
       (options.imply_ax == ImplyAX::automatic &&
        ritz_update_prefers_implied_ax<T>(ctx, widest_xp + nb, widest_xp + nb, widest_xp, nb)));
  bool ax_implied = false;

  // A Z over `count` columns of Z, widened to whole sectors where the blocks
  // have room: the columns past Z hold the other residuals (finite), and
  // their products land in unused columns of A W's block. A row's sectors
  // are read whole anyway, so B's traffic stays the same, and C's rows end
  // on sector boundaries.
  auto z_product_width = [&](std::int64_t count) { return std::min(round_up(count, align), w_width); };
  // A S = A times S on a column range of [X P] (into A S) or of W (from
  // nb + np on: Z's columns from 0, into A W's block).
  auto apply_a = [&](std::int64_t first, std::int64_t count) {
    if (count == 0) return;
    const std::int64_t q = nb + np;
    BLOCKEIGS_ASSERT(first + count <= q || first >= q);
    if (first < q) {
      carried = false;
      residuals.reset();
    }
    if (first == 0 && count >= nb) ax_implied = false;
    clock.to(time.other);
    if (first < q)
      A.apply(T(1), column_range(cS(cur), first, count), T(0), column_range(AS(cur), first, count));
    else
      apply_to_z(column_range(cZ(cur), first - q, count), column_range(AW(cur), first - q, count));
    clock.to(time.spmm);
  };

  // A Z queued right behind the Ritz update, before the convergence test
  // has decided which residuals go on: the last step's active ones, which
  // the update placed first, and which usually go on again. The device then
  // multiplies while the host waits for the norms and tests them. Used where
  // the next Z lies within those `count` columns at `q` (moved with Z when
  // soft locking moves it); otherwise A Z is multiplied again. Not with a
  // preconditioner (Z is not the residuals).
  struct ProductAhead {
    bool queued = false;
    std::int64_t q = 0, count = 0;
  } ahead;

  // A X into its columns of A S, where it was implied.
  auto make_ax_explicit = [&] {
    if (!ax_implied) return;
    apply_a(0, nb);
    ++result.ax_recomputes;
  };

  // Rayleigh-Ritz on the basis [X P W] (P in [nb, nb + np)), then [X P] of
  // the next iterate, with P selected from the `active` Ritz vectors, and its
  // A X, A P and residuals in the same pass; with `refresh` only [X P], as
  // the caller recomputes A X and A P with the operator. S(cur) and Z(cur)
  // hold [X P Z]: W itself, or the raw columns Z it is formed from (SearchBlock).
  // The small problems are solved in the [X P W] basis; their coefficients
  // are then taken back to [X P Z] for the update.
  auto rayleigh_ritz_step = [&](const SearchBlock& w, const std::vector<std::int64_t>& active, bool refresh,
                                const HostMatrix* s_t_az = nullptr) {
    const std::int64_t q = nb + np;  // [X P]; W's raw columns are Z's
    const std::int64_t ns = q + w.kept;
    const SplitColumns<T, Ts> Sv = basis(cur, q, w.raw);
    const spmm::ConstDenseView<T> AWv = column_range(cAW(cur), 0, w.raw);
    const SplitColumns<T> ASv(column_range(cAS(cur), 0, q), AWv);
    const bool implicit = w.from_z.rows() > 0;
    int level = 0;
    std::vector<double> all_values, chosen;
    HostMatrix coeff, coeff_w, GA, GB;  // coeff for [X P Z], coeff_w for [X P W] (rank 0)
    auto in_w_basis = [&](HostMatrix G) { return implicit ? in_search_basis(G, w.from_q, w.from_z) : G; };
    // Derived: S^T A Z measured, the rest carried or from the orthogonalisation.
    // The same choice on every rank: `carried` and the fused pass's branch are.
    bool derive = carried && w.kept > 0 && basis_options.w_gram.rows() == ns;
    for (;;) {
      if (derive) {
        // S^T A Z, measured with W's Gram matrix where the caller could.
        const HostMatrix G = s_t_az ? *s_t_az : gram<T>(ctx, comm, basis_in_t(cur, q, w.raw), AWv);
        s_t_az = nullptr;
        if (rank == 0) {
          GA = in_w_basis(assemble_ritz_matrix(carried_a, G));
          GB = assemble_ritz_matrix(carried_b, basis_options.w_gram);
        }
      } else {
        // S^T [X P Z] and S^T [A [X P] A W]: GB and GA, both queued before either is waited for.
        make_ax_explicit();
        const SplitColumns<T> St = basis_in_t(cur, q, w.raw);
        GramInFlight b_gram = start_gram_pair(ctx, comm, St, column_range(cS(cur), 0, q), St.tail);
        GramInFlight a_gram = start_gram_pair(ctx, comm, St, column_range(cAS(cur), 0, q), AWv);
        const HostMatrix G_b = b_gram.finish(), G_a = a_gram.finish();
        if (rank == 0) {
          GB = in_w_basis(G_b);
          GA = in_w_basis(G_a);
        }
      }
      const double host_begin = MPI_Wtime();
      int retry = 0;
      collectively(comm, [&] {
        if (rank != 0) return;
        // The small problems skip P's zero columns [q - p_padding, q).
        const std::int64_t pad_at = q - p_padding;
        HostMatrix GA_dropped, GB_dropped;
        if (p_padding > 0) {
          GA_dropped = without_span(GA, pad_at, p_padding);
          GB_dropped = without_span(GB, pad_at, p_padding);
        }
        const HostMatrix& GAu = p_padding > 0 ? GA_dropped : GA;
        const HostMatrix& GBu = p_padding > 0 ? GB_dropped : GB;
        RitzPairs pairs =
            rayleigh_ritz(GAu, GBu, nb, pad_at, nb, tol, options.which, ritz_eigen ? &ritz_eigen : nullptr);
        // A restart is decided on measured Gram matrices only. (Not seen in
        // the tests: the orthogonalisation keeps the carried GB within
        // rounding of the identity, so this guards against the unforeseen.)
        if (derive && pairs.level > 0) {
          retry = 1;
          return;
        }
        level = pairs.level;
        const auto m = static_cast<std::int64_t>(pairs.values.size());
        // The wanted end's vectors, in order (largest: largest first).
        const HostMatrix& Cx = pairs.vectors;
        for (std::int64_t c = 0; c < nb; ++c)
          chosen.push_back(pairs.values[options.which == SpectrumEnd::smallest ? c : m - 1 - c]);
        const HostMatrix Cp = basis_selection(Cx, GBu, nb, active, tol);
        const std::int64_t used = nb + Cp.cols();
        HostMatrix c_used(ns - p_padding, used);
        for (std::int64_t i = 0; i < c_used.rows(); ++i) {
          for (std::int64_t c = 0; c < nb; ++c) c_used(i, c) = Cx(i, c);
          for (std::int64_t c = 0; c < Cp.cols(); ++c) c_used(i, nb + c) = Cp(i, c);
        }
        all_values = std::move(pairs.values);
        // Zero rows for this P's padding; zero columns pad the next P.
        coeff_w = with_zero_rows(c_used, pad_at, p_padding, round_up(used, align));
        p_padding = coeff_w.cols() - used;
        coeff = implicit ? to_raw_coefficients(coeff_w, w.from_q, w.from_z) : coeff_w;
      });
      time.small_eigenproblem += MPI_Wtime() - host_begin;
      broadcast(comm, retry);
      if (!retry) break;
      derive = false;
    }
    carried = true;
    result.carried_steps += derive ? 1 : 0;
    broadcast(comm, level);
    broadcast(comm, all_values);
    broadcast(comm, chosen);
    broadcast(comm, coeff);  // for [X P Z]
    const int next = 1 - cur;
    const std::int64_t m = coeff.cols();
    // The next step's [X P] blocks of both Rayleigh-Ritz matrices, on rank 0
    // while the device updates.
    auto carry = [&] {
      if (rank != 0) return;
      carried_a = transpose_times(coeff_w, multiply(GA, coeff_w));
      carried_b = transpose_times(coeff_w, multiply(GB, coeff_w));
    };
    if (!refresh) {
      // A X as the last residuals describe it, and whether the next A X is
      // stored or left to the residuals this update forms.
      std::optional<ImpliedAX> implied;
      if (ax_implied) implied = ImpliedAX{lambda, q, residual_position};
      const bool store_ax = !imply_ax;
      // Active residuals first, in order, then the converged ones.
      residual_position.assign(static_cast<std::size_t>(nb), 0);
      std::int64_t place = 0;
      std::vector<bool> is_active(static_cast<std::size_t>(nb), active.empty());
      for (std::int64_t j : active) is_active[j] = true;
      for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < nb; ++j)
          if (is_active[j] == (pass == 0)) residual_position[j] = place++;
      // With A X implied, S's view reaches the residuals (all nb of them).
      const SplitColumns<T, Ts> S_read = implied ? basis(cur, q, std::max(w.raw, std::int64_t{nb})) : Sv;
      ahead = ProductAhead{};
      // A Z of the next buffer: the operator directly, not apply_a, whose
      // bookkeeping (carried blocks, residuals) is about the current one.
      auto meanwhile = [&] {
        if (!preconditioner) {
          ahead = ProductAhead{true, m, z_product_width(active.empty() ? nb : std::int64_t(active.size()))};
          clock.to(time.rayleigh_ritz);
          apply_to_z(column_range(cZ(next), 0, ahead.count), column_range(AW(next), 0, ahead.count));
          clock.to(time.spmm);
        }
        carry();
        clock.settle_done();  // the host waits for the update anyway
      };
      residuals = ritz_update(ctx, comm, S_read, ASv, coeff, chosen, column_range(S(next), 0, m),
                              column_range(AS(next), 0, m), column_range(Z(next), 0, nb), residual_position,
                              meanwhile, implied ? &*implied : nullptr, store_ax);
      ax_implied = !store_ax;
      result.implied_ax_steps += implied ? 1 : 0;
    } else {
      // A X and A P come from the operator next, which drops the carried blocks.
      split_update<T>(ctx, basis_in_t(cur, q, w.raw), 0, coeff, T(0), column_range(S(next), 0, m));
    }
    cur = next;
    np = coeff.cols() - nb;
    lambda = std::move(chosen);
    for (double v : all_values) norm_a = std::max(norm_a, std::abs(v));
    result.restarts += level > 0 ? 1 : 0;
    clock.to(time.rayleigh_ritz);
  };

  // Start: an orthonormal block, A X, and its own Rayleigh-Ritz.
  make_start_block(ctx, comm, column_range(S(cur), 0, nb), scratch.view(), start ? &*start : nullptr,
                   options.seed, A.first_row(), tol);
  clock.to(time.orthogonalization);
  apply_a(0, nb);
  rayleigh_ritz_step(SearchBlock{}, {}, false);

  int iteration = 0;
  int implicit_steps = 0;  // Ritz updates since A X and A P were last computed by the operator
  double z_drift_sum = 0;  // Z in fp32: the steps' largest residual norms since then
  bool fresh = false;      // A X computed by the operator since the last update
  bool stagnated = false;  // no search direction left outside span[X P]
  std::vector<double> r_norm, x_norm, scaled(static_cast<std::size_t>(nb));
  std::vector<bool> conv(static_cast<std::size_t>(nb));
  int last_reported = -1;
  BestIterate<T> best(ctx, n, k);  // the best iterate, and divergence
  int tested_buffer = -1;        // the buffer whose X the last test saw
  std::optional<LobpcgDivergence> divergence;
  for (;;) {
    const spmm::ConstDenseView<T> X = column_range(cS(cur), 0, nb);
    // R = A X - X Lambda and the norms, formed by the Ritz update or here in
    // one pass, in Z's block, where W is built.
    const spmm::DenseView<Ts> Rv = column_range(Z(cur), 0, nb);
    if (!residuals) {
      ahead = ProductAhead{};  // the residuals are formed afresh
      if (ax_implied) {
        make_ax_explicit();
        fresh = true;
      }
      if constexpr (single) {  // formed in fp64, then rounded into Z
        const spmm::DenseView<T> Rt{space, n, nb, w_width, ZT.data()};
        residuals = eigen_residuals(ctx, comm, X, column_range(cAS(cur), 0, nb), lambda, Rt);
        convert_block(ctx, spmm::ConstDenseView<T>(Rt), Rv);
      } else {
        residuals = eigen_residuals(ctx, comm, X, column_range(cAS(cur), 0, nb), lambda, Rv);
      }
      residual_position.resize(static_cast<std::size_t>(nb));
      std::iota(residual_position.begin(), residual_position.end(), std::int64_t{0});
    }
    ResidualNorms norms = std::move(*residuals);
    residuals.reset();
    r_norm = std::move(norms.residual);
    x_norm = std::move(norms.x);
    int converged = 0;
    for (int j = 0; j < nb; ++j) {
      conv[j] = passes(options.test, options.tolerance, r_norm[j], lambda[j], x_norm[j], norm_a, &scaled[j]);
      if (j < k && conv[j]) ++converged;
    }
    best.record(column_range(cS(1 - cur), 0, k), tested_buffer >= 0 && tested_buffer != cur, iteration,
                {lambda, r_norm, x_norm});
    tested_buffer = cur;
    divergence = best.divergence();
    clock.to(time.other);
    const bool stop = converged == k || iteration >= options.max_iterations || stagnated || divergence;
    if (stop && !fresh) {
      // Decide on, and report, true residuals: recompute A X with the operator and test again.
      apply_a(0, nb);
      fresh = true;
      continue;
    }
    if (options.keep_history) {
      LobpcgStep step{std::vector<double>(lambda.begin(), lambda.begin() + k),
                      std::vector<double>(r_norm.begin(), r_norm.begin() + k)};
      // One entry per iteration (a stagnation stop re-tests the last one).
      if (result.history.size() > std::size_t(iteration)) result.history.back() = std::move(step);
      else result.history.push_back(std::move(step));
    }
    if (options.monitor && iteration != last_reported) {
      last_reported = iteration;
      int first = 0;
      while (first < k && conv[first]) ++first;
      if (first == k) first = 0;
      options.monitor({iteration, converged, lambda[first], r_norm[first], scaled[first]});
    }
    if (stop) break;

    ++iteration;
    // Soft locking: only unconverged columns get a new search direction.
    std::vector<std::int64_t> active;
    for (int j = 0; j < nb; ++j)
      if (!conv[j]) active.push_back(j);
    const auto na = static_cast<std::int64_t>(active.size());
    const std::int64_t q = nb + np;
    const spmm::DenseView<Ts> W = column_range(Z(cur), 0, na);
    // The active residuals' columns in Rv, and whether A Z was multiplied
    // ahead for all of them (A W's columns then move with them).
    std::vector<std::int64_t> active_columns;
    for (std::int64_t j : active) active_columns.push_back(residual_position[j]);
    const bool z_product_ahead =
        ahead.queued && ahead.q == q &&
        std::all_of(active_columns.begin(), active_columns.end(), [&](std::int64_t c) { return c < ahead.count; });
    ahead = ProductAhead{};
    const spmm::DenseView<T> AR = column_range(AW(cur), 0, nb);  // A W's columns, beside Rv's
    if (preconditioner) {
      if constexpr (!single) {  // (search_in_fp32 refuses a preconditioner)
        const spmm::DenseView<T> Ra = column_range(scratch.view(), 0, na);
        select_columns(ctx, spmm::ConstDenseView<T>(Rv), active_columns, Ra);
        clock.to(time.other);
        preconditioner->apply(Ra, W);
        clock.to(time.preconditioner);
      }
    } else {
      // Soft locking: only the active residuals go on, as the raw columns of
      // W in any order. The Ritz update put last step's active ones first,
      // so they need moving only when one has converged (or come back).
      std::sort(active_columns.begin(), active_columns.end());
      if (active_columns.back() != na - 1) {
        if (ax_implied) {
          // A X needs every residual: reorder them instead, the converged after.
          std::vector<std::int64_t> order = active_columns, moved_to(static_cast<std::size_t>(nb), 0);
          for (std::int64_t c = 0; c < nb; ++c)
            if (!std::binary_search(active_columns.begin(), active_columns.end(), c)) order.push_back(c);
          for (std::int64_t c = 0; c < nb; ++c) moved_to[order[c]] = c;
          permute_columns(ctx, Rv, order);
          if (z_product_ahead) permute_columns(ctx, AR, order);
          for (auto& p : residual_position) p = moved_to[p];
        } else {
          keep_columns(ctx, Rv, active_columns);
          if (z_product_ahead) keep_columns(ctx, AR, active_columns);
        }
      }
    }
    // W is conditioned against [X P] in coefficient form from the raw
    // columns Z now in W's place (BasisOptions::implicit): A Z and, on a
    // carried step, S^T A Z do not wait for it. So A Z comes first, then
    // [X P Z]^T [Z A Z], W's Gram matrix and S^T A Z in one pass over
    // [X P Z]. (Where S^T A Z is not wanted, W's Gram matrix is queued
    // before A Z instead, and the host conditions W while the device
    // multiplies.)
    const spmm::ConstDenseView<T> XP = column_range(cS(cur), 0, q);
    const SplitColumns<T, Ts> XPZ = basis(cur, q, na);
    HostMatrix measured, s_t_az;
    result.z_products_ahead += z_product_ahead ? 1 : 0;
    if (carried) {
      if (!z_product_ahead) apply_a(q, z_product_width(na));
      const HostMatrix both =
          start_gram_pair(ctx, comm, XPZ, spmm::ConstDenseView<Ts>(W), column_range(cAW(cur), 0, na)).finish();
      measured = both.block(0, q + na, 0, na);
      s_t_az = both.block(0, q + na, na, na);
      clock.to(time.rayleigh_ritz);
    } else {
      GramInFlight z_gram = start_gram_pair(ctx, comm, XPZ, spmm::ConstDenseView<Ts>(W), column_range(cAW(cur), 0, 0));
      clock.to(time.orthogonalization);
      if (!z_product_ahead) apply_a(q, z_product_width(na));
      measured = z_gram.finish();
    }
    basis_options.q_gram = rank == 0 && carried ? &carried_b : nullptr;
    basis_options.implicit = true;
    basis_options.measured_gram = &measured;
    const ConditionedSearch conditioned = condition_search_block<T, Ts>(
        ctx, comm, XP, W, spmm::DenseView<T>{space, n, na, w_width, single ? ZT.data() : nullptr}, scratch.view(),
        tol, basis_options, options.seed, A.first_row(), std::int64_t{nb} * (max_refills + 1 + iteration));
    std::int64_t nw = conditioned.kept;
    // A Z and S^T A Z stand where W kept the raw columns as they were.
    const bool products_current = !conditioned.refilled && basis_options.w_from_z.rows() == na;
    SearchBlock search{nw, nw, std::move(basis_options.w_from_q), std::move(basis_options.w_from_z)};
    if (search.from_z.rows() > 0) {
      search.raw = search.from_z.rows();
      ++result.implicit_search_steps;
    }
    if (nw == 0) {
      // Not even a random direction: [X P] spans the whole space (a matrix
      // barely wider than the block) and the tolerance is below its rounding
      // floor. Nothing can improve; stop with the pairs as they are.
      --iteration;
      stagnated = true;
      continue;
    }
    clock.to(time.orthogonalization);
    if (!products_current) {
      // W was formed (the explicit passes) or refilled: multiply it afresh.
      // It overwrote residuals that an implied A X needs.
      make_ax_explicit();
      s_t_az = HostMatrix();
      apply_a(q, z_product_width(search.raw));
    }
    // Implicit updates accumulate rounding (~eps ||A|| per step): A X and A P
    // are recomputed right after every interval-th step, which then forms only
    // [X P] (its A X, A P and residuals would be formed twice).
    const int interval = options.recompute_interval > 0
                             ? options.recompute_interval
                             : automatic_recompute_interval(tol.eps, norm_a, options.tolerance, options.test,
                                                            lambda, x_norm, k);
    bool refresh = ++implicit_steps >= interval;
    if constexpr (single) {
      // Z's rounding in the implied A X (search_drift_due), unless the
      // user fixed the interval.
      if (ax_implied) z_drift_sum += *std::max_element(r_norm.begin(), r_norm.end());
      if (!refresh && options.recompute_interval == 0 &&
          search_drift_due(std::numeric_limits<Ts>::epsilon() / 2, z_drift_sum, r_norm, conv)) {
        refresh = true;
        ++result.drift_recomputes;
      }
    }
    rayleigh_ritz_step(search, active, refresh, s_t_az.rows() > 0 ? &s_t_az : nullptr);
    fresh = false;
    if (refresh) {
      apply_a(0, nb + np);
      fresh = true;
      implicit_steps = 0;
      z_drift_sum = 0;
      ++result.recomputes;
    }
  }

  result.iterations = iteration;
  result.norm_estimate = norm_a;
  take_wanted_pairs(ctx, column_range(cS(cur), 0, k), lambda, x_norm, r_norm, conv, result);
  result.divergence = divergence;
  result.stop = std::all_of(conv.begin(), conv.begin() + k, [](bool c) { return c; }) ? LobpcgStop::converged
                : stagnated ? LobpcgStop::no_search_direction
                : divergence ? LobpcgStop::diverged : LobpcgStop::iteration_limit;
  best.restore(A, comm, options, norm_a, result);
  mark_tests(options.tolerance, result);
  clock.to(time.other);
  clock.finish();
  time.total = MPI_Wtime() - t_begin;
  return result;
}

template <class T>
LobpcgResult<T> lobpcg(LinearOperator<T>& A, const LobpcgOptions& options, Preconditioner<T>* preconditioner,
                       std::optional<spmm::ConstDenseView<T>> start) {
  const double t_begin = MPI_Wtime();
  const int nb = validate_options(A, options, start, preconditioner != nullptr);
  if constexpr (std::is_same_v<T, double>)
    if (search_in_fp32(A, options, preconditioner != nullptr, nb))
      return run_lobpcg<T, float>(A, options, preconditioner, start, nb, t_begin);
  return run_lobpcg<T, T>(A, options, preconditioner, start, nb, t_begin);
}

template LobpcgResult<float> lobpcg(LinearOperator<float>&, const LobpcgOptions&, Preconditioner<float>*,
                                    std::optional<spmm::ConstDenseView<float>>);
template LobpcgResult<double> lobpcg(LinearOperator<double>&, const LobpcgOptions&, Preconditioner<double>*,
                                     std::optional<spmm::ConstDenseView<double>>);

}  // namespace blockeigs::solver
