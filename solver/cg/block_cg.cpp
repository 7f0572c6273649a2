#include "solver/cg/block_cg.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "core/checks.hpp"
#include "solver/base/large_messages.hpp"
#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/cg/cg_stagnation.hpp"
#include "solver/cg/cg_small_solve.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::solver {

using cg_detail::factor_delta;
using cg_detail::SmallSolve;
using cg_detail::solve_delta;

bool BlockCgResult::all_converged() const {
  return std::all_of(converged.begin(), converged.end(), [](bool c) { return c; });
}

namespace {

template <class S>
HostMatrixOf<S> columns_of(const HostMatrixOf<S>& M, std::int64_t first, std::int64_t count) {
  return M.block(0, M.rows(), first, count);
}

template <class T>
void check_block_cg_arguments(const LinearOperator<T>& A, dense::ConstDenseView<T> B, dense::DenseView<T> X,
                              const BlockCgOptions& options) {
  const Space space = A.context().space();
  const std::int64_t m = A.local_rows(), s = B.cols;
  if (B.rows != m || X.rows != m || X.cols != s)
    fail_input("block CG: B is ", B.rows, " x ", B.cols, " and X is ", X.rows, " x ", X.cols,
               " on this rank, but the matrix gives this rank ", m, " rows: B and X must have the matrix's rows");
  if (B.space != space || X.space != space)
    fail_input("block CG: B and X must be in the operator's memory (", to_string(space), ")");
  if (s < 1) fail_input("block CG: B has no columns");
  if (!(options.rtol > 0) || !(options.atol >= 0) || options.max_iterations < 1 || options.stagnation_window < 0)
    fail_input(
        "block CG: rtol must be positive, atol non-negative, max_iterations at least 1 and "
        "stagnation_window non-negative");
}

// One solve: the blocks and small matrices are the members, the algorithm's
// steps the methods. Xa and R hold the active columns only (those not yet
// converged), in the order of `active_`; P has r_ columns.
template <class T>
class BlockCg {
  using Small = HostMatrixFor<T>;  // small matrices: double, or complex<double> for complex blocks
  using S = small_t<T>;

 public:
  BlockCg(LinearOperator<T>& A, dense::ConstDenseView<T> B, dense::DenseView<T> X, const BlockCgOptions& options,
          Preconditioner<T>* preconditioner, std::optional<dense::ConstDenseView<T>> search)
      : A_(A),
        B_(B),
        X_(X),
        options_(options),
        preconditioner_(preconditioner),
        search_(search),
        context_(A.context()),
        comm_(A.comm()),
        space_(context_.space()),
        m_(A.local_rows()),
        s_(B.cols),
        start_(MPI_Wtime()),
        clock_(context_),
        tol_(OrthonormalizeTolerances::for_type<T>()),
        PQR_(space_, m_, 3 * s_),
        Xa_(space_, m_, s_),
        scratch_(space_, m_, s_),
        Zbuf_(space_, preconditioner ? m_ : 0, preconditioner ? s_ : 0),
        watch_(s_, options.stagnation_window) {}

  BlockCgResult solve() {
    start();  // R = B - A X; P from R (or Z = M^{-1} R)
    while (!active_.empty() && r_ > 0 && iteration_ < options_.max_iterations) {
      ++iteration_;
      step();            // Q = A P; alpha = Delta^{-1} P^T R; R -= Q alpha, X += P alpha
      test_residuals();  // ||r_j|| from [Q R]^T R; converged columns retire; stagnation
      if (active_.empty() || stalled_) break;
      if (preconditioner_)
        next_search_block_preconditioned();  // P <- orth(Z + P beta), Z = M^{-1} R
      else
        next_search_block();  // P <- orth(R + P beta), its Gram matrix from small ones
      if (r_ > 0 && iteration_ < options_.max_iterations && options_.between_iterations &&
          options_.between_iterations(iterate())) {
        interrupted_ = true;  // a checkpoint's (X, P) goes on from here
        break;
      }
    }
    return finish();  // X of the active columns; the true residual B - A X
  }

 private:
  // PQR holds [P | Q | R] side by side (ld 3s): R from column 2s on, Q = A P
  // just before it and P before that, so that P^T [Q R] and [P Q R]^T R are
  // single reductions, and the new P can be written over the old one
  // (block_combine_pair reads a row before writing it).
  dense::DenseView<T> at(std::int64_t column, std::int64_t cols) {
    return dense::DenseView<T>{space_, m_, cols, 3 * s_, PQR_.data() + column};
  }
  dense::DenseView<T> R_view(std::int64_t a) { return at(2 * s_, a); }
  dense::DenseView<T> Q_view(std::int64_t r) { return at(2 * s_ - r, r); }
  dense::DenseView<T> P_view(std::int64_t r) { return at(2 * s_ - 2 * r, r); }
  dense::DenseView<T> narrow(dense::DenseBlock<T>& block, std::int64_t cols) {
    return dense::DenseView<T>{space_, m_, cols, block.ld(), block.data()};
  }
  static dense::ConstDenseView<T> cview(dense::DenseView<T> v) { return dense::ConstDenseView<T>(v); }
  std::int64_t active_count() const { return static_cast<std::int64_t>(active_.size()); }
  double threshold(std::int64_t column) const {
    return std::max(options_.rtol * result_.rhs_norms[column], options_.atol);
  }

  void start();
  void step();
  void test_residuals();
  void next_search_block_preconditioned();
  void next_search_block();
  BlockCgResult finish();

  std::vector<std::int64_t> retire_converged(const std::vector<double>& norms, int iteration);
  bool watch_progress(const std::vector<double>& norms, int iteration);
  double record(const std::vector<double>& norms);
  void monitor(int iteration, std::int64_t width, double worst) const;
  BlockCgIterate iterate();
  dense::DenseView<T> preconditioned_residual(std::int64_t a);
  void place_search_block(dense::DenseView<T> from, std::int64_t r);

  LinearOperator<T>& A_;
  const dense::ConstDenseView<T> B_;
  const dense::DenseView<T> X_;
  const BlockCgOptions& options_;
  Preconditioner<T>* const preconditioner_;
  const std::optional<dense::ConstDenseView<T>> search_;  // the first search block, if given
  const dense::Context& context_;
  const MPI_Comm comm_;
  const Space space_;
  const std::int64_t m_, s_;
  const double start_;
  BlockCgResult result_;
  BlockCgTimings& time_ = result_.stats.timings;
  PhaseTimer clock_;
  const OrthonormalizeTolerances tol_;
  dense::DenseBlock<T> PQR_, Xa_, scratch_, Zbuf_;

  std::vector<std::int64_t> active_;  // the columns not converged, in Xa's and R's order
  std::int64_t r_ = 0;                // columns of P
  int iteration_ = 0;
  // P^T P and P^T R for the current P and R, when the last step derived them
  // from small matrices (the unpreconditioned path); otherwise empty, and
  // they are read off the blocks.
  Small known_PtP_, known_PtR_;
  // This iteration's: Delta = P^T Q and its factor, C = P^T R, alpha, and
  // [Q R]^T R (its R^T R block from row r_ on).
  Small Delta_, C_, alpha_, QR_R_;
  SmallSolve<S> delta_;
  std::vector<std::int64_t> kept_;  // positions (in the previous active set) of the columns kept
  std::vector<double> norms_;
  cg_detail::StagnationWatch watch_;  // host bookkeeping only: results unchanged
  bool stalled_ = false;              // stagnated (BlockCgOptions::stagnation_window)
  bool interrupted_ = false;          // BlockCgOptions::between_iterations asked to stop
};

template <class T>
void BlockCg<T>::start() {
  result_.rhs_norms = column_norms(context_, comm_, B_);
  result_.iterations.assign(s_, 0);
  result_.converged.assign(s_, false);
  result_.residual_norms.assign(s_, 0.0);

  // R = B - A X; the active set starts with every column.
  A_.apply(T(-1), dense::ConstDenseView<T>(X_), T(0), R_view(s_));
  axpby(context_, T(1), B_, T(1), R_view(s_));
  copy_block(context_, dense::ConstDenseView<T>(X_), narrow(Xa_, s_));
  active_.resize(s_);
  for (std::int64_t j = 0; j < s_; ++j) active_[j] = j;
  clock_.to(time_.spmm);

  norms_ = column_norms(context_, comm_, cview(R_view(s_)));
  (void)watch_progress(norms_, 0);
  (void)retire_converged(norms_, 0);
  clock_.to(time_.other);

  if (!active_.empty() && search_) {
    // A given search block (an iterate's P): the solve goes on from it.
    r_ = search_->cols;
    copy_block(context_, *search_, P_view(r_));
  } else if (!active_.empty()) {
    // P = a well-conditioned basis of Z (or R), built in the columns before
    // R's (free now) and then moved to its place.
    const std::int64_t a = active_count();
    const dense::DenseView<T> W = at(0, a);
    copy_block(context_, preconditioner_ ? cview(preconditioned_residual(a)) : cview(R_view(a)), W);
    r_ = condition_basis(context_, comm_, W, narrow(scratch_, a), tol_);
    place_search_block(W, r_);
    clock_.to(time_.orthogonalization);
  }
}

template <class T>
void BlockCg<T>::step() {
  const std::int64_t a = active_count(), r = r_;
  const dense::ConstDenseView<T> Pr = cview(P_view(r));
  A_.apply(T(1), Pr, T(0), Q_view(r));
  clock_.to(time_.spmm);

  // Delta = P^T Q, C = P^T R (one reduction over [Q R] unless C is known);
  // alpha = Delta^{-1} C.
  if (known_PtR_.rows() == r && known_PtR_.cols() == a) {
    Delta_ = gram(context_, comm_, Pr, cview(Q_view(r)));
    C_ = known_PtR_;
  } else {
    const Small G = gram(context_, comm_, Pr, cview(at(2 * s_ - r, r + a)));
    Delta_ = columns_of(G, 0, r);
    C_ = columns_of(G, r, a);
  }
  delta_ = factor_delta(comm_, Delta_);
  if (!delta_.positive_definite)
    fail_input_everywhere("block CG: the matrix is not positive definite (negative curvature at iteration ", iteration_,
                          ": smallest ", is_complex_v<T> ? "p^H A p" : "p^T A p", " over the search block is ",
                          delta_.smallest_diagonal, ", or ", is_complex_v<T> ? "P^H A P" : "P^T A P",
                          " has no Cholesky factor)");
  alpha_ = solve_delta(comm_, delta_, C_, 1.0);
  block_update(context_, T(-1), cview(Q_view(r)), alpha_, T(1), R_view(a));
  clock_.to(time_.update);

  // [Q R]^T R in one pass: the residual norms are the square roots of its
  // R^T R diagonal, Q^T R is what beta needs, and with P^T P and
  // P^T R = C - Delta alpha (zero but for rounding: alpha made R orthogonal
  // to P) it gives the Gram matrix of the new search block without reading
  // that block. X += P alpha is queued behind it and runs while the host
  // works on the small matrices.
  GramInFlightFor<T> QR_R_in_flight = start_gram(context_, comm_, cview(at(2 * s_ - r, r + a)), cview(R_view(a)));
  block_update(context_, T(1), Pr, alpha_, T(1), narrow(Xa_, a));
  QR_R_ = QR_R_in_flight.finish();
  clock_.to(time_.update);
}

template <class T>
void BlockCg<T>::test_residuals() {
  const std::int64_t a = active_count(), r0 = r_;  // r0: first row of R^T R in QR_R
  norms_.resize(static_cast<std::size_t>(a));
  for (std::int64_t c = 0; c < a; ++c) norms_[c] = std::sqrt(std::max(0.0, std::real(QR_R_(r0 + c, c))));
  const double worst = record(norms_);
  const bool stuck = watch_progress(norms_, iteration_);
  kept_ = retire_converged(norms_, iteration_);
  stalled_ = stuck && !active_.empty();
  monitor(iteration_, r_, worst);
  clock_.to(time_.other);
}

// P <- a well-conditioned basis of Z + P beta, beta = -Delta^{-1} Q^T Z.
template <class T>
void BlockCg<T>::next_search_block_preconditioned() {
  const std::int64_t a2 = active_count(), r = r_;
  const dense::ConstDenseView<T> Pr = cview(P_view(r));
  const dense::DenseView<T> Z = preconditioned_residual(a2);
  const Small beta = solve_delta(comm_, delta_, gram(context_, comm_, cview(Q_view(r)), cview(Z)), -1.0);
  block_combine(context_, T(1), Pr, beta, T(1), cview(Z), Z);  // W = Z + P beta, in Z's buffer
  clock_.to(time_.update);
  r_ = condition_basis(context_, comm_, Z, narrow(scratch_, a2), tol_);
  place_search_block(Z, r_);
  clock_.to(time_.orthogonalization);
}

// P <- a well-conditioned basis of R + P beta, beta = -Delta^{-1} Q^T R.
// With M = [P R]^T [P R] (R's kept columns), W = [P R] [beta; I] has
// W^T W = [beta; I]^T M [beta; I]. No cancellation spoils it: R is
// orthogonal to P (alpha made it so), so ||W||^2 = ||R||^2 + ||P beta||^2
// up to rounding.
template <class T>
void BlockCg<T>::next_search_block() {
  const std::int64_t a2 = active_count(), r = r_, r0 = r_;
  const dense::ConstDenseView<T> Pr = cview(P_view(r));
  const Small PtP = known_PtP_.rows() == r ? known_PtP_ : gram(context_, comm_, Pr);
  const Small Delta_alpha = multiply(Delta_, alpha_);  // P^T R = C - Delta alpha
  Small QtR(r, a2), PtR(r, a2), RtR(a2, a2);
  for (std::int64_t c = 0; c < a2; ++c) {
    for (std::int64_t i = 0; i < r; ++i) {
      QtR(i, c) = QR_R_(i, kept_[c]);
      PtR(i, c) = C_(i, kept_[c]) - Delta_alpha(i, kept_[c]);
    }
    for (std::int64_t i = 0; i < a2; ++i) RtR(i, c) = QR_R_(r0 + kept_[i], kept_[c]);
  }
  const Small beta = solve_delta(comm_, delta_, QtR, -1.0);
  const std::int64_t n = r + a2;
  Small M(n, n), E(n, a2);  // M = [P R]^T [P R], E = [beta; I]
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      M(i, j) = i < r ? (j < r ? PtP(i, j) : PtR(i, j - r)) : (j < r ? conj_of(PtR(j, i - r)) : RtR(i - r, j - r));
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t c = 0; c < a2; ++c) E(i, c) = beta(i, c);
  for (std::int64_t c = 0; c < a2; ++c) E(r + c, c) = 1;
  const Small GW = transpose_times(E, multiply(M, E));
  // SVQB of W from GW.
  double ratio = 1;
  const Small Sv = svqb_on_root(comm_, GW, tol_, nullptr, ratio);
  std::int64_t r_next = Sv.cols();
  known_PtP_ = Small();
  known_PtR_ = Small();
  if (r_next > 0) {
    // P_new = P (beta S) + R S, written over the old P's columns.
    const Small betaS = multiply(beta, Sv);
    block_combine_pair(context_, Pr, betaS, cview(R_view(a2)), Sv, P_view(r_next), narrow(scratch_, r_next));
    clock_.to(time_.update);
    if (ratio >= tol_.single_pass_ratio) {
      // P_new^T P_new = S^T GW S and P_new^T R = (beta S)^T P^T R + S^T R^T R,
      // as exact as reading them off the blocks: the next iteration
      // needs no pass for them.
      known_PtP_ = transpose_times(Sv, multiply(GW, Sv));
      known_PtR_ = transpose_times(betaS, PtR);
      const Small StRtR = transpose_times(Sv, RtR);
      for (std::size_t e = 0; e < known_PtR_.values().size(); ++e) known_PtR_.values()[e] += StRtR.values()[e];
    } else {
      // One pass leaves W^T W within ~eps / ratio of I; far from it, condition again.
      const dense::DenseView<T> W = P_view(r_next);
      r_next = condition_basis(context_, comm_, W, narrow(scratch_, r_next), tol_);
      place_search_block(W, r_next);
    }
  }
  clock_.to(time_.orthogonalization);
  r_ = r_next;
}

template <class T>
BlockCgResult BlockCg<T>::finish() {
  result_.total_iterations = iteration_;
  result_.stop = active_.empty() ? BlockCgStop::converged
                 : stalled_      ? BlockCgStop::stagnated
                 : interrupted_  ? BlockCgStop::interrupted
                 : r_ == 0       ? BlockCgStop::no_search_direction
                                 : BlockCgStop::iteration_limit;

  // Columns still active keep their latest iterate.
  for (std::size_t c = 0; c < active_.size(); ++c)
    copy_block(context_, cview(column_range(narrow(Xa_, s_), std::int64_t(c), 1)), column_range(X_, active_[c], 1));

  // The true residual B - A X, which the recurrence only approximates.
  A_.apply(T(-1), dense::ConstDenseView<T>(X_), T(0), R_view(s_));
  axpby(context_, T(1), B_, T(1), R_view(s_));
  result_.true_residual_norms = column_norms(context_, comm_, dense::ConstDenseView<T>(R_view(s_)));
  if (stalled_)  // the floor's ||A||: 20 products, only for a run that stagnated
    result_.stall = cg_detail::describe_stall(A_, dense::ConstDenseView<T>(X_), active_, result_.rhs_norms, watch_);
  clock_.to(time_.other);
  clock_.finish();
  time_.total = MPI_Wtime() - start_;
  return std::move(result_);
}

// The current solution for BlockCgOptions::between_iterations: X's retired
// columns with the active ones from Xa, assembled on the host if asked for.
template <class T>
BlockCgIterate BlockCg<T>::iterate() {
  BlockCgIterate it;
  it.iteration = iteration_;
  it.search_width = static_cast<int>(r_);
  // Doubles on the host (host_doubles: complex values as (real, imaginary) pairs).
  it.search = [this] { return host_doubles(cview(P_view(r_))); };
  it.solution = [this] {
    constexpr std::int64_t w = reals_per_value<T>;
    std::vector<double> x = host_doubles(dense::ConstDenseView<T>(X_));
    const std::int64_t a = active_count();
    const std::vector<double> xa = host_doubles(cview(narrow(Xa_, a)));
    for (std::int64_t i = 0; i < m_; ++i)
      for (std::int64_t c = 0; c < a; ++c)
        for (std::int64_t p = 0; p < w; ++p) x[(i * s_ + active_[c]) * w + p] = xa[(i * a + c) * w + p];
    return x;
  };
  return it;
}

// Marks converged columns, writes them to X and squeezes them out of Xa and
// R; returns the positions (in the previous active set) of those kept.
template <class T>
std::vector<std::int64_t> BlockCg<T>::retire_converged(const std::vector<double>& norms, int iteration) {
  std::vector<std::int64_t> keep;
  for (std::size_t c = 0; c < active_.size(); ++c) {
    const std::int64_t j = active_[c];
    result_.residual_norms[j] = norms[c];
    result_.iterations[j] = iteration;
    if (norms[c] <= threshold(j)) {
      result_.converged[j] = true;
      copy_block(context_, dense::ConstDenseView<T>(column_range(narrow(Xa_, s_), std::int64_t(c), 1)),
                 column_range(X_, j, 1));
    } else {
      keep.push_back(static_cast<std::int64_t>(c));
    }
  }
  if (keep.size() == active_.size()) return keep;
  const std::int64_t a = active_count(), kept = static_cast<std::int64_t>(keep.size());
  select_columns(context_, cview(narrow(Xa_, a)), keep, narrow(scratch_, kept));
  copy_block(context_, cview(narrow(scratch_, kept)), narrow(Xa_, kept));
  select_columns(context_, cview(R_view(a)), keep, narrow(scratch_, kept));
  copy_block(context_, cview(narrow(scratch_, kept)), R_view(kept));
  std::vector<std::int64_t> still;
  for (std::int64_t c : keep) still.push_back(active_[c]);
  active_ = std::move(still);
  return keep;
}

// The stagnation watch, on the relative residuals of the columns active
// before retiring; whether none has fallen by 10% for the window.
template <class T>
bool BlockCg<T>::watch_progress(const std::vector<double>& norms, int iteration) {
  std::vector<double> relative(active_.size()), floor_bound(active_.size());
  for (std::size_t c = 0; c < active_.size(); ++c) {
    const double b = result_.rhs_norms[active_[c]];
    relative[c] = b > 0 ? norms[c] / b : norms[c];
    floor_bound[c] = b > 0 ? std::numeric_limits<real_t<T>>::epsilon() : 0.0;
  }
  return watch_.record(iteration, active_, relative, floor_bound);
}

// History row (before retiring, while `active_` still maps norms to columns);
// returns the worst relative residual for the monitor.
template <class T>
double BlockCg<T>::record(const std::vector<double>& norms) {
  double worst = 0;
  std::vector<double> row(s_, 0.0);
  for (std::size_t c = 0; c < active_.size(); ++c) {
    const double b = result_.rhs_norms[active_[c]];
    const double rel = b > 0 ? norms[c] / b : norms[c];
    row[active_[c]] = rel;
    worst = std::max(worst, rel);
  }
  if (options_.keep_history) result_.history.push_back(std::move(row));
  return worst;
}

template <class T>
void BlockCg<T>::monitor(int iteration, std::int64_t width, double worst) const {
  if (!options_.monitor) return;
  BlockCgProgress progress;
  progress.iteration = iteration;
  progress.search_width = static_cast<int>(width);
  progress.worst_relative = worst;
  progress.converged = static_cast<int>(std::count(result_.converged.begin(), result_.converged.end(), true));
  progress.max_iterations = options_.max_iterations;
  progress.elapsed = MPI_Wtime() - start_;
  progress.last = active_.empty() || iteration >= options_.max_iterations || stalled_;
  options_.monitor(progress);
}

// Z = M^{-1} R for the active columns (preconditioned runs only).
template <class T>
dense::DenseView<T> BlockCg<T>::preconditioned_residual(std::int64_t a) {
  preconditioner_->apply(cview(R_view(a)), narrow(Zbuf_, a));
  clock_.to(time_.preconditioner);
  return narrow(Zbuf_, a);
}

// The search block's columns sit where P_view(r) expects them: a block made
// elsewhere (or conditioned into fewer columns at the wrong offset) is moved
// there through scratch.
template <class T>
void BlockCg<T>::place_search_block(dense::DenseView<T> from, std::int64_t r) {
  if (from.data == P_view(r).data) return;
  copy_block(context_, cview(column_range(from, 0, r)), narrow(scratch_, r));
  copy_block(context_, cview(narrow(scratch_, r)), P_view(r));
}

}  // namespace

template <class T>
BlockCgResult block_cg(LinearOperator<T>& A, dense::ConstDenseView<T> B, dense::DenseView<T> X,
                       const BlockCgOptions& options, Preconditioner<T>* preconditioner,
                       std::optional<dense::ConstDenseView<T>> search) {
  check_block_cg_arguments(A, B, X, options);
  if (search && (search->rows != A.local_rows() || search->cols < 1 || search->cols > B.cols ||
                 search->space != A.context().space()))
    fail_input("block CG: the search block is ", search->rows, " x ", search->cols,
               " on this rank; it must have the "
               "matrix's ",
               A.local_rows(), " rows, 1 to ", B.cols, " columns, and be in the operator's memory");
  BlockCg<T> solver(A, B, X, options, preconditioner, search);
  return solver.solve();
}

#define BLOCKEIGS_BLOCK_CG(T)                                                                        \
  template BlockCgResult block_cg(LinearOperator<T>&, dense::ConstDenseView<T>, dense::DenseView<T>, \
                                  const BlockCgOptions&, Preconditioner<T>*, std::optional<dense::ConstDenseView<T>>);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_BLOCK_CG)
#undef BLOCKEIGS_BLOCK_CG

const char* to_string(BlockCgStop stop) {
  switch (stop) {
    case BlockCgStop::converged: return "converged";
    case BlockCgStop::iteration_limit: return "iteration_limit";
    case BlockCgStop::stagnated: return "stagnated";
    case BlockCgStop::no_search_direction: return "no_search_direction";
    case BlockCgStop::interrupted: return "interrupted";
  }
  return "";
}

}  // namespace blockeigs::solver
