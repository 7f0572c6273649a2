// The slice iteration's loop and steps (slice_iteration.hpp says the method).
#include "solver/window/slice_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/chfsi_ortho.hpp"

namespace blockeigs::solver {
namespace {

// The columns of V: [0, fixed) fixed, [fixed, fixed + locked) locked, then the active ones; W and S hold
// A V and scratch for the active columns only.
template <class T>
class SliceIteration {
 public:
  SliceIteration(LinearOperator<T>& A, LinearOperator<single_t<T>>* single, const LobpcgOptions& options,
                 const SliceSpec& spec, dense::ConstDenseView<T> fixed, MPI_Comm comm,
                 const std::function<void(const SliceProgress&)>& progress)
      : A_(A),
        single_(single),
        options_(options),
        spec_(spec),
        progress_(progress),
        comm_(comm),
        ctx_(A.context()),
        n_(A.local_rows()),
        fixed_(fixed.cols),
        clock_(ctx_) {
    active_ = std::min<std::int64_t>(spec.block, A.global_rows() - fixed_);
    V_ = dense::DenseBlock<T>(ctx_.space(), n_, fixed_ + active_);
    if (fixed_ > 0) copy_block(ctx_, fixed, column_range(V_.view(), 0, fixed_));
    draw(fixed_, active_);
    resize_scratch();
  }

  SliceOutcome<T> run();

 private:
  std::int64_t first_active() const { return fixed_ + locked_; }
  dense::DenseView<T> active_v() { return column_range(V_.view(), first_active(), active_); }
  dense::DenseView<T> active_w() { return column_range(W_.view(), 0, active_); }
  dense::DenseView<T> active_s() { return column_range(S_.view(), 0, active_); }
  void draw(std::int64_t first, std::int64_t count);  // random columns [first, first + count) of V, orthonormalised
  void resize_scratch();
  void grow(std::int64_t extra);
  std::vector<double> filter();  // returns ||p(A) v_j|| of each active column before it is replaced
  // The active columns far from convergence first (fp32 where the single-precision A is given): their count.
  std::int64_t rough_first();
  void filter_single(std::int64_t w);  // the first w active columns through A's fp32 copy
  bool only_spurious_inside(const std::vector<double>& gain) const;
  void rayleigh_ritz();
  bool passes(std::int64_t j) const;
  bool inside(std::int64_t j) const { return theta_[j] >= spec_.lower && theta_[j] <= spec_.upper; }
  bool short_of_target() const { return spec_.target >= 0 && counted_ < spec_.target; }
  int lock();  // the passing pairs inside the slice; returns how many
  SliceProgress progress(int iteration) const;

  using Single = single_t<T>;  // fp32, or complex fp32
  LinearOperator<T>& A_;
  LinearOperator<Single>* const single_;
  const LobpcgOptions& options_;
  const SliceSpec& spec_;
  const std::function<void(const SliceProgress&)>& progress_;
  const MPI_Comm comm_;
  const dense::Context& ctx_;
  const std::int64_t n_, fixed_;
  std::int64_t locked_ = 0, active_ = 0, drawn_ = 0, counted_ = 0;  // counted_: locked at or above count_from
  dense::DenseBlock<T> V_, W_, S_;
  std::vector<double> theta_, residual_;    // the active columns' Ritz values and residual norms
  std::vector<double> values_, residuals_;  // the locked pairs'
  EigenSolverOf<small_t<T>> eigen_;
  CholeskyInverseOf<small_t<T>> factor_;  // CholQR's
  std::int64_t products_ = 0, largest_ = 0, single_products_ = 0;
  dense::DenseBlock<Single> single_V_, single_S_, single_Y_;  // the fp32 filter's blocks, made at their first use
  LobpcgTimings time_;
  PhaseTimer clock_;
};

template <class T>
void SliceIteration<T>::draw(std::int64_t first, std::int64_t count) {
  // Each drawn column its own: the hash's column index counts every column this slice drew.
  fill_random(ctx_, column_range(V_.view(), first, count), spec_.seed, A_.first_row(), drawn_);
  drawn_ += count;
}

template <class T>
void SliceIteration<T>::resize_scratch() {
  W_ = dense::DenseBlock<T>(ctx_.space(), n_, active_);
  S_ = dense::DenseBlock<T>(ctx_.space(), n_, active_);
  eigen_ = projected_eigen_solver<small_t<T>>(ctx_, active_);
  factor_ = cholesky_inverse_solver<small_t<T>>(ctx_, active_);
  largest_ = std::max(largest_, active_);
}

template <class T>
void SliceIteration<T>::grow(std::int64_t extra) {
  extra = std::min(extra, A_.global_rows() - fixed_ - locked_ - active_);
  if (extra <= 0) return;
  dense::DenseBlock<T> V(ctx_.space(), n_, V_.cols() + extra);
  copy_block(ctx_, V_.cview(), column_range(V.view(), 0, V_.cols()));
  V_ = std::move(V);
  draw(first_active() + active_, extra);
  active_ += extra;
  resize_scratch();
}

template <class T>
std::int64_t SliceIteration<T>::rough_first() {
  if (!single_ || active_ == 0) return 0;
  if (theta_.size() != static_cast<std::size_t>(active_)) return active_;  // columns without a Ritz pair yet
  const double rough = 10 * kMixedFilterFloor * spec_.norm_estimate;
  std::vector<std::int64_t> order;
  for (std::int64_t j = 0; j < active_; ++j)
    if (residual_[j] > rough) order.push_back(j);
  const auto w = static_cast<std::int64_t>(order.size());
  if (w == 0 || w == active_) return w;
  for (std::int64_t j = 0; j < active_; ++j)
    if (!(residual_[j] > rough)) order.push_back(j);
  permute_columns(ctx_, active_v(), order);
  std::vector<double> theta, residual;
  for (const std::int64_t j : order) {
    theta.push_back(theta_[j]);
    residual.push_back(residual_[j]);
  }
  theta_ = std::move(theta);
  residual_ = std::move(residual);
  return w;
}

template <class T>
void SliceIteration<T>::filter_single(std::int64_t w) {
  if (single_V_.cols() < w) {
    single_V_ = dense::DenseBlock<Single>(ctx_.space(), n_, w);
    single_S_ = dense::DenseBlock<Single>(ctx_.space(), n_, w);
    single_Y_ = dense::DenseBlock<Single>(ctx_.space(), n_, w);
  }
  const auto view = [&](dense::DenseBlock<Single>& b) {
    return dense::DenseView<Single>{ctx_.space(), n_, w, w, b.data()};
  };
  const dense::DenseView<Single> V = view(single_V_), S = view(single_S_), Y = view(single_Y_);
  convert_values<T, Single>(ctx_, dense::ConstDenseView<T>(column_range(active_v(), 0, w)), V);
  const std::int64_t products = apply_window_filter(*single_, spec_.filter, V, S, Y);
  convert_values<Single, T>(ctx_, dense::ConstDenseView<Single>(Y), column_range(active_s(), 0, w));
  products_ += products;
  single_products_ += products;
}

template <class T>
std::vector<double> SliceIteration<T>::filter() {
  const dense::DenseView<T> V = active_v();
  const std::int64_t w = rough_first();
  if (w > 0) filter_single(w);
  if (w < active_)
    products_ +=
        apply_window_filter(A_, spec_.filter, column_range(V, w, active_ - w), column_range(active_w(), w, active_ - w),
                            column_range(active_s(), w, active_ - w));
  std::vector<double> gain = column_norms(ctx_, comm_, dense::ConstDenseView<T>(active_s()));
  copy_block(ctx_, dense::ConstDenseView<T>(active_s()), V);
  clock_.to(time_.filter);
  chfsi_orthonormalize(ctx_, comm_, V_.view(), first_active(), active_s(), factor_);
  clock_.to(time_.orthogonalization);
  return gain;
}

// The unconverged Ritz values inside the slice are none, or spurious: their
// vectors (unit, orthogonal to every pair locked) lose more than half of
// what the filter keeps of any eigenvector in the slice, so they hold little
// of the slice's eigenvectors (Rayleigh quotients of eigenvectors on both
// sides of the slice can fall inside it).
template <class T>
bool SliceIteration<T>::only_spurious_inside(const std::vector<double>& gain) const {
  const double bar = 0.5 * spec_.filter_floor;
  // Columns drawn since the last Rayleigh-Ritz (a grown block) have no Ritz value yet: none lies inside.
  const auto ritz = std::min<std::int64_t>(active_, static_cast<std::int64_t>(theta_.size()));
  for (std::int64_t j = 0; j < ritz; ++j)
    if (inside(j) && !passes(j) && gain[j] >= bar) return false;
  return true;
}

template <class T>
void SliceIteration<T>::rayleigh_ritz() {
  const dense::DenseView<T> V = active_v(), W = active_w(), S = active_s();
  A_.apply(T(1), dense::ConstDenseView<T>(V), T(0), W);
  clock_.to(time_.spmm);
  HostMatrixFor<T> H = gram<T>(ctx_, comm_, dense::ConstDenseView<T>(V), dense::ConstDenseView<T>(W));
  clock_.to(time_.rayleigh_ritz);
  HostMatrix values;
  const HostMatrixFor<T> Q = projected_eigenpairs(comm_, H, eigen_, active_, values);
  clock_.to(time_.small_eigenproblem);
  transform_in_place(ctx_, V, Q, S);
  clock_.to(time_.rayleigh_ritz);
  A_.apply(T(1), dense::ConstDenseView<T>(V), T(0), W);
  clock_.to(time_.spmm);
  theta_.assign(values.data(), values.data() + active_);
  residual_ =
      eigen_residuals(ctx_, comm_, dense::ConstDenseView<T>(V), dense::ConstDenseView<T>(W), theta_, S).residual;
  clock_.to(time_.rayleigh_ritz);
}

template <class T>
bool SliceIteration<T>::passes(std::int64_t j) const {
  const double scale =
      options_.test == StoppingTest::backward ? spec_.norm_estimate + std::abs(theta_[j]) : std::abs(theta_[j]);
  return residual_[j] <= options_.tolerance * scale;
}

template <class T>
int SliceIteration<T>::lock() {
  std::vector<std::int64_t> order, rest;
  for (std::int64_t j = 0; j < active_; ++j) (inside(j) && passes(j) ? order : rest).push_back(j);
  const auto newly = static_cast<int>(order.size());
  if (newly == 0) return 0;
  for (const std::int64_t j : order) {
    values_.push_back(theta_[j]);
    residuals_.push_back(residual_[j]);
    if (theta_[j] >= spec_.count_from) ++counted_;
  }
  order.insert(order.end(), rest.begin(), rest.end());
  permute_columns(ctx_, active_v(), order);
  std::vector<double> theta, residual;
  for (const std::int64_t j : rest) {
    theta.push_back(theta_[j]);
    residual.push_back(residual_[j]);
  }
  theta_ = std::move(theta);
  residual_ = std::move(residual);
  locked_ += newly;
  active_ -= newly;
  return newly;
}

template <class T>
SliceProgress SliceIteration<T>::progress(int iteration) const {
  SliceProgress p;
  p.iteration = iteration;
  p.found = static_cast<int>(locked_);
  p.block = static_cast<int>(active_);
  for (std::int64_t j = 0; j < active_; ++j)
    if (inside(j) && !passes(j)) {
      ++p.inside;
      p.worst = std::max(p.worst, residual_[j] / std::max(std::abs(theta_[j]), 1e-300));
    }
  return p;
}

template <class T>
SliceOutcome<T> SliceIteration<T>::run() {
  const double t_begin = MPI_Wtime();
  chfsi_orthonormalize(ctx_, comm_, V_.view(), fixed_, S_.view(), factor_);
  clock_.to(time_.orthogonalization);
  SliceOutcome<T> out;
  int iteration = 1, newly = -1;
  for (;; ++iteration) {
    // The filter's gains on the last Ritz vectors: where the last round locked nothing and the
    // only unconverged values inside are spurious, the slice is done.
    const std::vector<double> gain = filter();
    if (iteration >= 3 && newly == 0 && only_spurious_inside(gain)) {
      if (!short_of_target()) {
        out.complete = true;
        break;
      }
      grow(spec_.target - counted_ + spec_.guard);  // the certified count says pairs are missing
      newly = -1;
    }
    rayleigh_ritz();
    newly = lock();
    SliceProgress p = progress(iteration);
    p.elapsed = MPI_Wtime() - t_begin;
    if (progress_) progress_(p);
    clock_.to(time_.other);
    if (spec_.target >= 0 && !short_of_target()) {  // every pair the inertia counted
      out.complete = true;
      break;
    }
    if (p.inside == 0 && newly == 0 && iteration >= 2) {  // nothing inside left, and this round found nothing new
      if (!short_of_target()) {
        out.complete = true;
        break;
      }
      grow(spec_.target - counted_ + spec_.guard);
      newly = -1;
    }
    if (iteration >= options_.max_iterations) break;
    const std::int64_t outside = active_ - p.inside;
    if (outside < spec_.guard) grow(std::max<std::int64_t>(spec_.guard, (active_ + locked_) / 4));
    if (active_ == 0) grow(spec_.guard);  // every column locked: more may lie inside
  }
  out.iterations = iteration;
  out.block = static_cast<int>(largest_);
  out.products = products_;
  out.single_products = single_products_;
  // The locked pairs, ascending.
  std::vector<std::int64_t> order(static_cast<std::size_t>(locked_));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return values_[x] < values_[y]; });
  out.vectors = dense::DenseBlock<T>(ctx_.space(), n_, locked_);
  std::vector<std::int64_t> columns;
  for (const std::int64_t j : order) {
    columns.push_back(fixed_ + j);
    out.values.push_back(values_[j]);
    out.residuals.push_back(residuals_[j]);
  }
  if (locked_ > 0) select_columns(ctx_, V_.cview(), columns, out.vectors.view());
  clock_.to(time_.other);
  clock_.finish();
  time_.total = MPI_Wtime() - t_begin;
  out.time = time_;
  return out;
}

}  // namespace

template <class T>
SliceOutcome<T> solve_slice(LinearOperator<T>& A, LinearOperator<single_t<T>>* single, const LobpcgOptions& options,
                            const SliceSpec& spec, dense::ConstDenseView<T> fixed, MPI_Comm comm,
                            const std::function<void(const SliceProgress&)>& progress) {
  BLOCKEIGS_ASSERT(spec.block >= 1 && spec.guard >= 1 && spec.filter.degree() >= 1);
  return SliceIteration<T>(A, single, options, spec, fixed, comm, progress).run();
}

#define BLOCKEIGS_SOLVE_SLICE(T)                                                                               \
  template SliceOutcome<T> solve_slice(LinearOperator<T>&, LinearOperator<single_t<T>>*, const LobpcgOptions&, \
                                       const SliceSpec&, dense::ConstDenseView<T>, MPI_Comm,                   \
                                       const std::function<void(const SliceProgress&)>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SOLVE_SLICE)
#undef BLOCKEIGS_SOLVE_SLICE

}  // namespace blockeigs::solver
