// LOBPCG's set-up, its operator products and its stopping test
// (lobpcg_iteration.hpp).
#include "solver/lobpcg/lobpcg_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/blocks/norm_estimate.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver::lobpcg_detail {
namespace {

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

}  // namespace

template <class T, class Ts>
LobpcgIteration<T, Ts>::Blocks::Blocks(Space space, std::int64_t n, std::int64_t ld, std::int64_t w_width)
    : SAS{{space, n, ld}, {space, n, ld}},
      ZB{{space, n, w_width}, {space, n, w_width}},
      AWB{{space, n, w_width}, {space, n, w_width}},
      ZT(single ? dense::DenseBlock<T>(space, n, w_width) : dense::DenseBlock<T>()) {
  for (auto& b : SAS) dense::fill_bytes(b.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * ld));
  for (auto& b : ZB) dense::fill_bytes(b.data(), space, 0, sizeof(Ts) * static_cast<std::size_t>(n * w_width));
  for (auto& b : AWB) dense::fill_bytes(b.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * w_width));
  if (single) dense::fill_bytes(ZT.data(), space, 0, sizeof(T) * static_cast<std::size_t>(n * w_width));
}

template <class T, class Ts>
LobpcgIteration<T, Ts>::LobpcgIteration(LinearOperator<T>& A, const LobpcgOptions& options,
                                        Preconditioner<T>* preconditioner,
                                        std::optional<dense::ConstDenseView<T>> start, int nb, LinearOperator<T>* B,
                                        std::optional<dense::ConstDenseView<T>> constraints)
    : A_(A),
      options_(options),
      preconditioner_(preconditioner),
      start_(start),
      nb_(nb),
      k_(options.k),
      private_comm_(A.comm()),
      comm_(private_comm_.get()),
      rank_(comm_rank(comm_)),
      ctx_(A.context()),
      space_(ctx_.space()),
      n_(A.local_rows()),
      tol_(Tolerances::for_type<T>()),
      B_(B),
      constrained_(constraints.has_value()),
      align_(column_alignment<T>(options, space_)),
      widest_xp_(round_up(2 * std::int64_t{nb}, align_)),
      ld_(2 * widest_xp_),
      w_width_(round_up(nb, align_)),
      blocks_(space_, n_, ld_, w_width_),
      scratch_(space_, n_, nb),
      time_(result_.stats.timings),
      clock_(ctx_),
      norm_a_(initial_norm_estimate()),
      ritz_eigen_(rank_ == 0 ? ritz_eigen_solver<small_t<T>>(ctx_, widest_xp_ + nb) : EigenSolverOf<small_t<T>>()),
      imply_ax_(!preconditioner && !B && !constraints &&
                (options.tuning.imply_ax == ImplyAX::always ||
                 (options.tuning.imply_ax == ImplyAX::automatic &&
                  ritz_update_prefers_implied_ax<T>(ctx_, widest_xp_ + nb, widest_xp_ + nb, widest_xp_, nb)))),
      scaled_(static_cast<std::size_t>(nb)),
      conv_(static_cast<std::size_t>(nb)),
      best_(ctx_, n_, k_, options_.stagnation_window, options_.which, tol_.eps, single) {
  result_.block_size = nb;
  result_.stats.search_in_fp32 = single;
  result_.generalized = B != nullptr;
  if (B) {
    for (auto& b : b_blocks_) {
      b = dense::DenseBlock<T>(space_, n_, widest_xp_);
      dense::fill_bytes(b.data(), space_, 0, sizeof(T) * static_cast<std::size_t>(n_ * widest_xp_));
    }
    bw_ = dense::DenseBlock<T>(space_, n_, w_width_);
    dense::fill_bytes(bw_.data(), space_, 0, sizeof(T) * static_cast<std::size_t>(n_ * w_width_));
  }
  if (constraints) set_up_constraints(*constraints);
}

// Y copied and made B-orthonormal, B Y beside it; a rank-deficient Y is the
// caller's error.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::set_up_constraints(dense::ConstDenseView<T> Y) {
  const std::int64_t m = Y.cols;
  y_ = dense::DenseBlock<T>(space_, n_, m);
  by_ = dense::DenseBlock<T>(space_, n_, m);
  copy_block(ctx_, Y, y_.view());
  dense::DenseBlock<T> scratch(space_, n_, m);
  const std::int64_t independent =
      b_orthonormalize_constraints(ctx_, comm_, B_, y_.view(), by_.view(), scratch.view(), tol_);
  if (independent < m)
    fail_input("LOBPCG: the constraint block's ", m, " columns span only ", independent, " dimensions (",
               B_ ? "in the B-inner product; " : "", "they must be linearly independent)");
  result_.constraints = static_cast<int>(m);
}

// ||A||_est's start: the power method's lower bound for the backward test, 0
// for the relative one.
template <class T, class Ts>
double LobpcgIteration<T, Ts>::initial_norm_estimate() {
  if (options_.test != StoppingTest::backward) return 0;
  double norm = power_norm_estimate(A_, comm_, norm_estimate_steps, mix64(options_.seed ^ 0x6e6f726d5f657374ULL));
  // With B the test scales ||B x||, so ||A|| / ||B|| takes ||A||'s place (lobpcg.hpp).
  if (B_) {
    const double norm_b =
        power_norm_estimate(*B_, comm_, norm_estimate_steps, mix64(options_.seed ^ 0x625f6e6f726dULL));
    norm = norm_b > 0 ? norm / norm_b : 0;
  }
  clock_.to(time_.spmm);
  return norm;
}

// A S = A times S on a column range of [X P] (into A S) or of W (from
// nb + np on: Z's columns from 0, into A W's block).
template <class T, class Ts>
void LobpcgIteration<T, Ts>::apply_a(std::int64_t first, std::int64_t count) {
  if (count == 0) return;
  const std::int64_t q = nb_ + np_;
  BLOCKEIGS_ASSERT(first + count <= q || first >= q);
  if (first < q) {
    carried_.valid = false;
    residuals_.norms.reset();
  }
  if (first == 0 && count >= nb_) products_.ax_implied = false;
  clock_.to(time_.other);
  if (first < q) {
    A_.apply(T(1), column_range(cS(cur_), first, count), T(0), column_range(AS(cur_), first, count));
    if (B_) B_->apply(T(1), column_range(cS(cur_), first, count), T(0), column_range(BS(cur_), first, count));
  } else {
    apply_to_z(column_range(cZ(cur_), first - q, count), column_range(AW(cur_), first - q, count));
  }
  clock_.to(time_.spmm);
}

// A X into its columns of A S, where it was implied.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::make_ax_explicit() {
  if (!products_.ax_implied) return;
  apply_a(0, nb_);
  ++result_.stats.ax_recomputes;
}

// R = A X - X Lambda and the norms, formed by the Ritz update or here in
// one pass, in Z's block, where W is built. Then the stopping test, and the
// best iterate, divergence and stagnation recorded. True when the iteration stops; a
// stop is decided on, and reported with, true residuals.
template <class T, class Ts>
bool LobpcgIteration<T, Ts>::test_residuals() {
  for (;;) {
    if (!residuals_.norms) form_residuals();
    ResidualNorms norms = std::move(*residuals_.norms);
    residuals_.norms.reset();
    r_norm_ = std::move(norms.residual);
    x_norm_ = std::move(norms.x);
    int converged = 0;
    for (int j = 0; j < nb_; ++j) {
      conv_[j] = passes(options_.test, options_.tolerance, r_norm_[j], lambda_[j], x_norm_[j], norm_a_, &scaled_[j]);
      if (j < k_ && conv_[j]) ++converged;
    }
    best_.record(column_range(cS(1 - cur_), 0, k_), tested_buffer_ >= 0 && tested_buffer_ != cur_, iteration_,
                 {lambda_, r_norm_, x_norm_, norm_a_});
    tested_buffer_ = cur_;
    result_.jumps.insert(result_.jumps.end(), best_.jumps().begin(), best_.jumps().end());
    monitor_.pending_jumps.insert(monitor_.pending_jumps.end(), best_.jumps().begin(), best_.jumps().end());
    stop_.stall = best_.stall();
    clock_.to(time_.other);
    bool stop = converged == k_ || iteration_ >= options_.max_iterations || stop_.no_search_direction || stop_.stall;
    // No timer mark here: an event each iteration would settle the timer's
    // batch sooner, which waits for the device and breaks the overlap of the
    // test with the A Z queued ahead (a checkpoint's time goes to the next phase).
    if (!stop && !stop_.interrupted && options_.between_iterations) {
      stop_.interrupted = options_.between_iterations(iterate());
      stop = stop_.interrupted;
    }
    stop = stop || stop_.interrupted;
    if (stop && !products_.fresh) {
      // Decide on, and report, true residuals: recompute A X with the operator and test again.
      apply_a(0, nb_);
      products_.fresh = true;
      continue;
    }
    report(converged, stop);
    return stop;
  }
}

// The current iterate for LobpcgOptions::between_iterations; its rows are
// copied only if asked for.
template <class T, class Ts>
LobpcgIterate LobpcgIteration<T, Ts>::iterate() {
  LobpcgIterate it;
  it.iteration = iteration_;
  it.block_size = nb_;
  it.values = std::span<const double>(lambda_.data(), static_cast<std::size_t>(nb_));
  it.block = [this] { return host_doubles(column_range(cS(cur_), 0, nb_)); };
  return it;
}

// The residuals formed afresh in one pass (A X made explicit first where it
// was implied), in Z's block, in order.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::form_residuals() {
  const dense::ConstDenseView<T> X = column_range(cS(cur_), 0, nb_);
  const dense::DenseView<Ts> Rv = column_range(Z(cur_), 0, nb_);
  ahead_ = ProductAhead{};  // the residuals are formed afresh
  if (products_.ax_implied) {
    make_ax_explicit();
    products_.fresh = true;
  }
  if constexpr (single) {  // formed in fp64, then rounded into Z
    const dense::DenseView<T> Rt{space_, n_, nb_, w_width_, blocks_.ZT.data()};
    residuals_.norms = eigen_residuals(ctx_, comm_, X, column_range(cAS(cur_), 0, nb_), lambda_, Rt);
    convert_block(ctx_, dense::ConstDenseView<T>(Rt), Rv);
  } else {
    // With B: R = A X - B X Lambda, and ||B x|| for the test's scale.
    residuals_.norms = eigen_residuals(ctx_, comm_, B_ ? column_range(cBS(cur_), 0, nb_) : X,
                                       column_range(cAS(cur_), 0, nb_), lambda_, Rv);
  }
  residuals_.position.resize(static_cast<std::size_t>(nb_));
  std::iota(residuals_.position.begin(), residuals_.position.end(), std::int64_t{0});
  constrain_residuals(cur_);
}

// With constraints Y, each residual less its part in span(B Y), r - B Y (Y^T r)
// (Y B-orthonormal): at a solution x of the constrained problem A x - lambda B x
// = B Y mu, so that part is the multipliers', never an error to drive down;
// the test and the search block see the rest.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::constrain_residuals(int buffer) {
  if constexpr (!single) {
    if (!constrained_ || !residuals_.norms) return;
    const BBasis<T> Y = constraints();
    const dense::DenseView<T> R = column_range(Z(buffer), 0, nb_);
    project_out(ctx_, comm_, BBasis<T>{Y.BV, Y.V}, R);
    const std::vector<double> norms = column_norms(ctx_, comm_, dense::ConstDenseView<T>(R));
    for (int j = 0; j < nb_; ++j) residuals_.norms->residual[j] = norms[residuals_.position[j]];
  } else {
    (void)buffer;
  }
}

// The history and the monitor, once per iteration.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::report(int converged, bool stop) {
  if (options_.keep_history) {
    LobpcgStep step{std::vector<double>(lambda_.begin(), lambda_.begin() + k_),
                    std::vector<double>(r_norm_.begin(), r_norm_.begin() + k_)};
    // One entry per iteration (a stagnation stop re-tests the last one).
    if (result_.history.size() > std::size_t(iteration_))
      result_.history.back() = std::move(step);
    else
      result_.history.push_back(std::move(step));
  }
  // Once per iteration, and again at the stop where an earlier test of the
  // same iteration was reported (no search direction left).
  if (options_.monitor && (iteration_ != monitor_.last_iteration || (stop && !monitor_.saw_stop))) {
    monitor_.last_iteration = iteration_;
    monitor_.saw_stop = stop;
    int first = 0;
    while (first < k_ && conv_[first]) ++first;
    if (first == k_) first = 0;
    LobpcgProgress progress;
    progress.iteration = iteration_;
    progress.converged = converged;
    progress.eigenvalue = lambda_[first];
    progress.residual = r_norm_[first];
    progress.scaled_residual = scaled_[first];
    progress.max_iterations = options_.max_iterations;
    progress.elapsed = MPI_Wtime() - t_begin_;
    progress.last = stop;
    progress.jumps = std::move(monitor_.pending_jumps);
    monitor_.pending_jumps.clear();
    // The floor warning, once, where the Ritz values first show it (host arithmetic on k values).
    if (!monitor_.floor_warned && options_.test == StoppingTest::relative) {
      progress.below_floor =
          pairs_below_floor(options_.which, tol_.eps, norm_a_, options_.tolerance, lambda_, conv_, k_, progress.floor);
      progress.norm_estimate = norm_a_;
      monitor_.floor_warned = !progress.below_floor.empty();
    }
    options_.monitor(progress);
  }
}

// Implicit updates accumulate rounding (~eps ||A|| per step): A X and A P
// are recomputed right after every interval-th step, which then forms only
// [X P] (its A X, A P and residuals would be formed twice). Counts this
// step.
template <class T, class Ts>
bool LobpcgIteration<T, Ts>::refresh_due() {
  const int interval =
      options_.tuning.recompute_interval > 0
          ? options_.tuning.recompute_interval
          : automatic_recompute_interval(tol_.eps, norm_a_, options_.tolerance, options_.test, lambda_, x_norm_, k_);
  bool refresh = ++products_.implicit_steps >= interval;
  if constexpr (single) {
    // Z's rounding in the implied A X (search_drift_due), unless the
    // user fixed the interval.
    if (products_.ax_implied) products_.z_drift_sum += *std::max_element(r_norm_.begin(), r_norm_.end());
    if (!refresh && options_.tuning.recompute_interval == 0 &&
        search_drift_due(std::numeric_limits<Ts>::epsilon() / 2, products_.z_drift_sum, r_norm_, conv_)) {
      refresh = true;
      ++result_.stats.drift_recomputes;
    }
  }
  return refresh;
}

// A X and A P recomputed with the operator after a Ritz update that formed
// only [X P].
template <class T, class Ts>
void LobpcgIteration<T, Ts>::refresh_products() {
  apply_a(0, nb_ + np_);
  products_.fresh = true;
  products_.implicit_steps = 0;
  products_.z_drift_sum = 0;
  ++result_.stats.recomputes;
}

// Each file instantiates the members it defines that the others call.
#define BLOCKEIGS_LOBPCG_ITERATION(T, Ts)                                                                            \
  template LobpcgIteration<T, Ts>::LobpcgIteration(LinearOperator<T>&, const LobpcgOptions&, Preconditioner<T>*,     \
                                                   std::optional<dense::ConstDenseView<T>>, int, LinearOperator<T>*, \
                                                   std::optional<dense::ConstDenseView<T>>);                         \
  template void LobpcgIteration<T, Ts>::apply_a(std::int64_t, std::int64_t);                                         \
  template void LobpcgIteration<T, Ts>::make_ax_explicit();                                                          \
  template bool LobpcgIteration<T, Ts>::test_residuals();                                                            \
  template bool LobpcgIteration<T, Ts>::refresh_due();                                                               \
  template void LobpcgIteration<T, Ts>::refresh_products();                                                          \
  template void LobpcgIteration<T, Ts>::constrain_residuals(int);
BLOCKEIGS_LOBPCG_TYPES(BLOCKEIGS_LOBPCG_ITERATION)
#undef BLOCKEIGS_LOBPCG_ITERATION

}  // namespace blockeigs::solver::lobpcg_detail
