// LOBPCG's iteration as a class: its members are the state (the double
// buffered blocks, P's width and padding, the carried Rayleigh-Ritz matrices,
// where the residuals stand, the mode flags), its methods the algorithm's
// steps; run() is the main loop (lobpcg.cpp). Not part of the library's API.
//
// Storage: [X P] and A [X P] = [AX AP] side by side in one block, the
// residuals Z (the raw columns of the search block W) and A W each in a
// compact block of their own, double buffered: the Ritz update writes
// [X_new P_new], its A [X P] and the next residuals into the other buffer.
// The basis S = [X P Z] is taken in two views (SplitColumns); Z may be in
// fp32 beside fp64 blocks (LobpcgOptions::search_precision). P occupies
// only as many columns as it currently has, padded with zero columns to the
// column alignment (LobpcgTuning::column_alignment).
//
// The steps live one algorithmic piece per file: set-up, operator products
// and the stopping test in lobpcg_iteration.cpp, the search block W in
// lobpcg_search.cpp, the Rayleigh-Ritz step in lobpcg_rayleigh_ritz.cpp.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "solver/blocks/phase_timer.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/lobpcg/lobpcg_best.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/precond/preconditioner.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver::lobpcg_detail {

// LOBPCG's search block W as Z's block holds it: W itself
// (raw == kept, no coefficients), or the raw columns Z that condition_against
// left in coefficient form, W = [X P] from_q + Z from_z (BasisOptions::implicit),
// so that no pass over the big block forms W: A W, the Rayleigh-Ritz matrices
// and the Ritz update are all taken through Z and the coefficients.
// The small matrices are HostMatrixOf<S>, S = small_t<T> (complex double for complex blocks).
template <class S>
struct SearchBlockOf {
  std::int64_t raw = 0;   // columns of Z
  std::int64_t kept = 0;  // columns of W
  HostMatrixOf<S> from_q, from_z;
};

// One step's search: the columns that get a search direction (soft locking),
// W, and S^T A Z where it was measured with W's Gram matrix (else empty).
template <class S>
struct SearchStepOf {
  std::vector<std::int64_t> active;
  SearchBlockOf<S> w;
  HostMatrixOf<S> s_t_az;
};

// One Rayleigh-Ritz step's small matrices. GA, GB and coeff_w are rank 0's
// only; every rank receives the rest.
template <class S>
struct RitzStepOf {
  HostMatrixOf<S> GA, GB;          // the Rayleigh-Ritz matrices in the [X P W] basis
  HostMatrixOf<S> coeff;           // the Ritz coefficients for [X P Z] (P's new columns after X's)
  HostMatrixOf<S> coeff_w;         // the same for [X P W]
  std::vector<double> all_values;  // every Ritz value of the basis used
  std::vector<double> chosen;      // the nb wanted ones, in the chosen order
  int level = 0;                   // > 0: a restart dropped P
};

// The solver with the residual block Z in Ts (T, or fp32 for fp64 blocks).
template <class T, class Ts>
class LobpcgIteration {
 public:
  using Matrix = HostMatrixFor<T>;  // the small matrices: double, or complex double for complex blocks
  using SearchBlock = SearchBlockOf<small_t<T>>;
  using SearchStep = SearchStepOf<small_t<T>>;
  using RitzStep = RitzStepOf<small_t<T>>;

  // Sets up the blocks and, for the backward test, estimates ||A||. Collective.
  // `B` (or null) and `constraints` as lobpcg() takes them.
  LobpcgIteration(LinearOperator<T>& A, const LobpcgOptions& options, Preconditioner<T>* preconditioner,
                  std::optional<dense::ConstDenseView<T>> start, int nb, LinearOperator<T>* B = nullptr,
                  std::optional<dense::ConstDenseView<T>> constraints = std::nullopt);
  LobpcgIteration(const LobpcgIteration&) = delete;
  LobpcgIteration& operator=(const LobpcgIteration&) = delete;

  // The whole iteration; `t_begin` is the MPI_Wtime the call began at (for
  // timings.total). Once only. Collective.
  LobpcgResult<T> run(double t_begin);

 private:
  static constexpr bool single = !std::is_same_v<T, Ts>;  // Z in fp32 beside fp64 blocks

  // ---- the steps (run() calls them in this order) ----------------------------
  void start();                                    // an orthonormal X, A X, the first Rayleigh-Ritz
  bool test_residuals();                           // R, the stopping test, best iterate; true: stop
  std::vector<std::int64_t> active_pairs() const;  // soft locking: the unconverged columns
  // W from the active residuals, conditioned against [X P], and A W; none
  // where no search direction is left.
  std::optional<SearchStep> build_search_block(std::vector<std::int64_t> active);
  bool refresh_due();  // A X and A P from the operator after this step?
  // On [X P W] (a restart drops P), then [X P] <- S C with A X, A P and the
  // residuals (or, with `refresh`, only [X P]); the carried matrices.
  void rayleigh_ritz(const SearchBlock& w, const std::vector<std::int64_t>& active, bool refresh,
                     const Matrix* s_t_az = nullptr);
  void refresh_products();                 // A X and A P with the operator
  LobpcgResult<T> finish(double t_begin);  // wanted pairs, stop reason, best iterate, tests

  // ---- their pieces -----------------------------------------------------------
  double initial_norm_estimate();         // ||A||_est before the first iteration
  void form_residuals();                  // R = A X - X Lambda in one pass, where the Ritz update did not
  void constrain_residuals(int buffer);   // with constraints: R less its part in span(B Y), and its norms
  void report(int converged, bool stop);  // history and monitor
  LobpcgIterate iterate();                // for LobpcgOptions::between_iterations
  bool place_search_columns(const std::vector<std::int64_t>& active);  // soft locking in Z's block
  std::optional<SearchStep> condition_search(std::vector<std::int64_t> active, bool z_product_ahead);
  // With B: W B-orthogonal to Y and conditioned against [X P] in the B-inner
  // product, in coefficient form over Z (B Z beside it), and A Z; or formed.
  std::optional<SearchStep> condition_search_b(std::vector<std::int64_t> active);
  void set_up_constraints(dense::ConstDenseView<T> Y);  // Y and B Y, B-orthonormal
  void ritz_matrices(const SearchBlock& w, bool derive, const Matrix* s_t_az, RitzStep& step);  // GA, GB
  bool solve_small_problem(const SearchBlock& w, const std::vector<std::int64_t>& active, bool derive,
                           RitzStep& step);  // rank 0's; true: retry on measured matrices
  void update_basis(const SearchBlock& w, const std::vector<std::int64_t>& active, const RitzStep& step, int next);
  void carry(const RitzStep& step);                      // the next step's [X P] blocks of GA and GB (rank 0)
  void apply_a(std::int64_t first, std::int64_t count);  // A S on a column range of [X P] or W
  void make_ax_explicit();                               // A X with the operator, where it was implied

  // ---- the blocks ----------------------------------------------------------------
  // Both buffers, zeroed once, so that the unused columns that a Gram pass or
  // a widened product also reads are finite.
  struct Blocks {
    Blocks(Space space, std::int64_t n, std::int64_t ld, std::int64_t w_width);
    dense::DenseBlock<T> SAS[2];  // [X P | A X A P]
    dense::DenseBlock<Ts> ZB[2];  // Z
    dense::DenseBlock<T> AWB[2];  // A W
    // With Z in fp32: an fp64 copy of Z for the rare steps that read or form
    // it in fp64 (measured Gram matrices, refreshes, W formed by the explicit
    // passes, residuals formed apart from the Ritz update).
    dense::DenseBlock<T> ZT;
  };
  dense::DenseView<T> S(int b) { return {space_, n_, widest_xp_, ld_, blocks_.SAS[b].data()}; }  // [X P]
  dense::DenseView<T> AS(int b) { return {space_, n_, widest_xp_, ld_, blocks_.SAS[b].data() + widest_xp_}; }
  dense::DenseView<Ts> Z(int b) { return {space_, n_, w_width_, w_width_, blocks_.ZB[b].data()}; }
  dense::DenseView<T> AW(int b) { return {space_, n_, w_width_, w_width_, blocks_.AWB[b].data()}; }
  dense::ConstDenseView<T> cS(int b) { return dense::ConstDenseView<T>(S(b)); }
  dense::ConstDenseView<T> cAS(int b) { return dense::ConstDenseView<T>(AS(b)); }
  dense::ConstDenseView<Ts> cZ(int b) { return dense::ConstDenseView<Ts>(Z(b)); }
  dense::ConstDenseView<T> cAW(int b) { return dense::ConstDenseView<T>(AW(b)); }
  // The basis [X P Z] of buffer b over q columns of [X P] and z of Z.
  SplitColumns<T, Ts> basis(int b, std::int64_t q, std::int64_t z) {
    return SplitColumns<T, Ts>(column_range(cS(b), 0, q), column_range(cZ(b), 0, z));
  }
  // The basis with Z in T: basis() itself, or (Z in fp32) with Z's first z
  // columns widened into ZT.
  SplitColumns<T> basis_in_t(int b, std::int64_t q, std::int64_t z) {
    if constexpr (single) {
      const dense::DenseView<T> widened{space_, n_, z, w_width_, blocks_.ZT.data()};
      convert_block(ctx_, column_range(cZ(b), 0, z), widened);
      return SplitColumns<T>(column_range(cS(b), 0, q), dense::ConstDenseView<T>(widened));
    } else {
      return basis(b, q, z);
    }
  }
  // With B: B [X P] beside [X P] (double buffered like it) and B W beside W.
  dense::DenseView<T> BS(int b) { return {space_, n_, widest_xp_, widest_xp_, b_blocks_[b].data()}; }
  dense::ConstDenseView<T> cBS(int b) { return dense::ConstDenseView<T>(BS(b)); }
  dense::DenseView<T> BW() { return {space_, n_, w_width_, w_width_, bw_.data()}; }
  // The constraint block Y and B Y (empty views without constraints).
  BBasis<T> constraints() const {
    return {dense::ConstDenseView<T>(y_.cview()), dense::ConstDenseView<T>(by_.cview())};
  }
  // C = A B for B in Z's block (fp32 or T), C in A W's.
  void apply_to_z(dense::ConstDenseView<Ts> B, dense::DenseView<T> C) {
    if constexpr (single)
      apply_single(A_, B, C);
    else
      A_.apply(T(1), B, T(0), C);
  }
  // A Z over `count` columns of Z, widened to whole sectors where the blocks
  // have room: the columns past Z hold the other residuals (finite), and
  // their products land in unused columns of A W's block. A row's sectors
  // are read whole anyway, so B's traffic stays the same, and C's rows end
  // on sector boundaries.
  std::int64_t z_product_width(std::int64_t count) const { return std::min(round_up(count, align_), w_width_); }

  // ---- the problem -----------------------------------------------------------------
  LinearOperator<T>& A_;
  const LobpcgOptions& options_;
  Preconditioner<T>* const preconditioner_;
  const std::optional<dense::ConstDenseView<T>> start_;
  const int nb_, k_;
  const PrivateComm private_comm_;
  const MPI_Comm comm_;
  const int rank_;
  const dense::Context& ctx_;
  const Space space_;
  const std::int64_t n_;
  const Tolerances tol_;
  // A x = lambda B x: B (null: the standard problem). With B, or with
  // constraints, the pass-saving forms that assume B = I and a free search
  // block are off: W is formed and conditioned explicitly, A X stored, Z in
  // T, and A Z is not multiplied ahead.
  LinearOperator<T>* const B_;
  const bool constrained_;

  // [X P] spans a multiple of `align` columns, P's last `p_padding` of them
  // zero: then the Ritz update's outputs and the residuals after them start
  // and end on whole 32-byte sectors. Partial sectors slow the fused update
  // once soft locking leaves P an odd width
  // (docs/benchmarks/solvers.md#compact-blocks). Zero columns add exact
  // zeros to every product; the small problems drop their rows and columns.
  const std::int64_t align_;
  // [X P] and A [X P] side by side in one block per buffer (at most 2 nb
  // columns each, rounded up). The residuals Z, where W is built (W's raw
  // columns), and A W each have a compact block of their own: the operator
  // reads and writes rows there faster than as 160 bytes in every 960
  // (docs/benchmarks/solvers.md#compact-blocks),
  // and a block of its own can take another precision. The basis S is [X P] and Z in two views (SplitColumns).
  const std::int64_t widest_xp_, ld_, w_width_;
  Blocks blocks_;
  dense::DenseBlock<T> b_blocks_[2], bw_;  // B [X P] and B W (with B only)
  dense::DenseBlock<T> y_, by_;            // the constraints Y and B Y (B-orthonormal)
  // The residuals go into Z's block, where W is built (nb of them); a
  // preconditioner reads them from there into scratch.
  dense::DenseBlock<T> scratch_;
  int cur_ = 0;                 // the buffer that holds the current iterate
  std::int64_t np_ = 0;         // columns of P, right after X, padding included
  std::int64_t p_padding_ = 0;  // P's last columns that are zero (rank 0's bookkeeping)

  LobpcgResult<T> result_;
  LobpcgTimings& time_;
  PhaseTimer clock_;
  std::vector<double> lambda_;  // the nb current Ritz values, in the chosen order
  // ||A||_est (lobpcg.hpp, StoppingTest): the power method's lower bound for
  // the backward test, then the largest |Ritz value| seen. The relative test
  // needs no norm (and so no products).
  double norm_a_;
  // Where rank 0 solves its Rayleigh-Ritz eigenproblems (the large ones on
  // the device; ritz_eigen_solver).
  const EigenSolverOf<small_t<T>> ritz_eigen_;

  // Rank 0's Rayleigh-Ritz matrices of the next [X P], C^T GA C and C^T GB C
  // for the last step's coefficients C: the next step then measures only
  // S^T A W, and takes the W rows of S^T S from the orthogonalisation
  // (BasisOptions). Dropped when A X or A P is recomputed (they were made for
  // the implicitly updated blocks), so that every recompute_interval
  // iterations the full Gram matrices are measured again and rounding cannot
  // accumulate in them.
  struct Carried {
    Matrix a, b;         // C^T GA C, C^T GB C (rank 0)
    bool valid = false;  // on every rank: made for the current [X P]
  } carried_;
  BasisOptionsOf<small_t<T>> basis_options_;
  // The residuals of the current X, in Z's block.
  struct Residuals {
    std::optional<ResidualNorms> norms;  // when the Ritz update formed them (else form_residuals)
    // Where the update placed each column's residual among Z's columns: the
    // last step's active ones first, so that soft locking seldom has to move
    // any (see place_search_columns).
    std::vector<std::int64_t> position;
  } residuals_;
  // A X held implied instead of stored: X Lambda plus the residuals, which
  // stay in Z's block as W's raw columns (ImpliedAX). The Ritz
  // update then neither writes A X nor reads it (LOBPCG's 220 columns of
  // traffic a step at block 20 become 180). Not with a preconditioner, which
  // writes W over the residuals. Whatever else reads A X makes it explicit
  // with the operator first (make_ax_explicit), which is rare.
  const bool imply_ax_;
  // How A X and A P stand against the operator's own products.
  struct Products {
    bool ax_implied = false;  // A X is held implied now (imply_ax_)
    bool fresh = false;       // A X computed by the operator since the last update
    int implicit_steps = 0;   // Ritz updates since A X and A P were last computed by the operator
    double z_drift_sum = 0;   // Z in fp32: the steps' largest residual norms since then
  } products_;

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
  } ahead_;

  // ---- the loop's state ------------------------------------------------------------
  int iteration_ = 0;
  // The last test, per column of X: ||r||, ||x|| (||B x|| with B), the
  // residual as the test scales it, and its verdict.
  std::vector<double> r_norm_, x_norm_, scaled_;
  std::vector<bool> conv_;
  int tested_buffer_ = -1;  // the buffer whose X the last test saw
  BestIterate<T> best_;     // the best iterate; divergence and stagnation
  // What stops the loop short of convergence (finish() names it a LobpcgStop).
  struct Stop {
    bool no_search_direction = false;  // no search direction left outside span[X P]
    bool interrupted = false;          // LobpcgOptions::between_iterations asked to stop
    std::optional<LobpcgStall> stall;  // the guard's: diverged or stagnated
  } stop_;
  // What the monitor has been told.
  struct Monitor {
    int last_iteration = -1;
    bool saw_stop = false;                  // the stop was reported
    bool floor_warned = false;              // LobpcgProgress::below_floor reported
    std::vector<LobpcgJump> pending_jumps;  // found since the last report
  } monitor_;
  double t_begin_ = 0;  // MPI_Wtime when the solve began
};

}  // namespace blockeigs::solver::lobpcg_detail
