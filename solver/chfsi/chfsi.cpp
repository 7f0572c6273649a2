// Chebyshev-filtered subspace iteration's main loop and its steps (chfsi.hpp
// says the method and its choices); the filter is chebyshev_filter.cpp's, the
// orthonormalisation chfsi_ortho.cpp's.
#include "solver/chfsi/chfsi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <type_traits>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/chfsi/chebyshev_filter.hpp"
#include "solver/chfsi/chfsi_ortho.hpp"
#include "solver/chfsi/spectrum_bounds.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::solver {
namespace {

constexpr int kFirstDegree = 16;
constexpr int kMaxDegree = 150;
constexpr int kLanczosSteps = 25;

// What the next filter does to each active column.
struct FilterPlan {
  std::vector<int> degree;
  std::vector<char> single;  // 1: in fp32 (the mixed filter)
};

// The iteration's state (the block V, A V, a scratch block, the Ritz values and
// residuals, the locked count) and its steps.
template <class T>
class ChfsiIteration {
 public:
  ChfsiIteration(LinearOperator<T>& A, const LobpcgOptions& options, const FilterTuning& tuning, int m)
      : A_(A),
        options_(options),
        private_comm_(A.comm()),
        comm_(private_comm_.get()),
        ctx_(A.context()),
        n_(A.local_rows()),
        m_(m),
        k_(options.k),
        sign_(options.which == SpectrumEnd::largest ? -1 : 1),
        guard_percent_(tuning.guard_degree_percent),
        first_degree_(tuning.first_degree > 0 ? tuning.first_degree : kFirstDegree),
        max_degree_(tuning.max_degree > 0 ? tuning.max_degree : kMaxDegree),
        lanczos_steps_(tuning.lanczos_steps > 0 ? tuning.lanczos_steps : kLanczosSteps),
        V_(ctx_.space(), n_, m),
        W_(ctx_.space(), n_, m),
        S_(ctx_.space(), n_, m),
        theta_(m),
        residual_(m),
        clock_(ctx_) {}

  LobpcgResult<T> run(std::optional<dense::ConstDenseView<T>> start, double t_begin);

  // Filter the columns far from convergence in fp32 (LobpcgOptions::search_precision). Collective.
  void use_single(bool requested);

 private:
  void start_block(std::optional<dense::ConstDenseView<T>> start);
  void rayleigh_ritz();               // on the active columns: A V, V^T A V, rotation, residuals
  bool passes(std::int64_t j) const;  // the stopping test for column j
  int lock();                         // the passing wanted pairs, in order; returns how many pass in all
  // Each active column's filter degree (even, in [2, max_degree]; first_degree in the first filter) and
  // whether the mixed filter takes it in fp32: the guard columns, the wanted ones far above
  // kMixedFilterFloor ||A|| (their degree then aims at it), and those still above it after their filter.
  FilterPlan plan(bool first) const;
  void filter(const FilterPlan& plan);  // the active columns, sorted by precision and degree
  // The filter of V's columns [0, w) of the active ones in fp32: rounded, filtered, widened back.
  void filter_single(const std::vector<int>& sorted, std::int64_t w);
  void filter_single_fp64(const std::vector<int>& sorted, std::int64_t w);
  void report(int iteration, int passing, bool last);
  // The caller's hook between iterations (checkpoints, interrupts); true: stop here.
  bool between_iterations(int iteration);
  LobpcgResult<T> finish(int iteration, LobpcgStop stop);

  dense::DenseView<T> active(dense::DenseBlock<T>& B) { return column_range(B.view(), locked_, m_ - locked_); }

  LinearOperator<T>& A_;
  const LobpcgOptions& options_;
  const PrivateComm private_comm_;
  const MPI_Comm comm_;
  const dense::Context& ctx_;
  const std::int64_t n_, m_;
  const int k_, sign_, guard_percent_;
  const int first_degree_, max_degree_, lanczos_steps_;
  dense::DenseBlock<T> V_, W_, S_;                  // the block, s A V on its active columns, scratch
  using Single = single_t<T>;                       // fp32, or complex fp32
  std::unique_ptr<LinearOperator<Single>> single_;  // A in single precision for the mixed filter, else null
  dense::DenseBlock<Single> single_V_, single_S_;   // its block and scratch, made at its first use
  std::int64_t single_products_ = 0;                // the filter's column products in fp32
  std::vector<double> theta_,
      residual_;  // Ritz values of s A (ascending on the active columns) and ||s A v - theta v||
  std::int64_t locked_ = 0;
  FilterInterval interval_;
  double norm_a_ = 0;  // ||A||_est for the backward test: a lower bound (Lanczos' and the Ritz values' largest |value|)
  EigenSolverOf<small_t<T>> eigen_;
  CholeskyInverseOf<small_t<T>> factor_;  // CholQR's
  std::int64_t filter_products_ = 0;
  LobpcgTimings time_;
  PhaseTimer clock_;
  std::vector<LobpcgStep> history_;
  double t_begin_ = 0;  // MPI_Wtime at the call's start
};

template <class T>
void ChfsiIteration<T>::start_block(std::optional<dense::ConstDenseView<T>> start) {
  fill_random(ctx_, V_.view(), options_.seed, A_.first_row());
  if (start && start->cols > 0) copy_block(ctx_, *start, column_range(V_.view(), 0, start->cols));
  chfsi_orthonormalize(ctx_, comm_, V_.view(), 0, S_.view(), factor_);
  clock_.to(time_.orthogonalization);
}

template <class T>
void ChfsiIteration<T>::rayleigh_ritz() {
  const dense::DenseView<T> V = active(V_), W = active(W_), S = active(S_);
  const std::int64_t ma = V.cols;
  A_.apply(static_cast<T>(sign_), dense::ConstDenseView<T>(V), T(0), W);
  clock_.to(time_.spmm);
  HostMatrixFor<T> H = gram<T>(ctx_, comm_, dense::ConstDenseView<T>(V), dense::ConstDenseView<T>(W));
  clock_.to(time_.rayleigh_ritz);
  // The projected problem on rank 0 (its device where it has one), values and vectors to every rank.
  HostMatrix values;
  const HostMatrixFor<T> Q = projected_eigenpairs(comm_, H, eigen_, ma, values);
  clock_.to(time_.small_eigenproblem);
  transform_in_place(ctx_, V, Q, S);
  clock_.to(time_.rayleigh_ritz);
  // A V of the Ritz vectors: one more product, cheaper than rotating A V (a GEMM of ma^2 n) from ma ~ 100.
  A_.apply(static_cast<T>(sign_), dense::ConstDenseView<T>(V), T(0), W);
  clock_.to(time_.spmm);
  std::copy(values.data(), values.data() + ma, theta_.begin() + locked_);
  const std::vector<double> lambda(values.data(), values.data() + ma);
  const ResidualNorms norms =
      eigen_residuals(ctx_, comm_, dense::ConstDenseView<T>(V), dense::ConstDenseView<T>(W), lambda, S);
  std::copy(norms.residual.begin(), norms.residual.end(), residual_.begin() + locked_);
  for (const double v : lambda) norm_a_ = std::max(norm_a_, std::abs(v));
  // The damped interval's lower end: the block's largest Ritz value (it moves down as the block converges).
  interval_.lowest = std::min(interval_.lowest, *std::min_element(theta_.begin(), theta_.begin() + m_));
  interval_.a = std::min(theta_[m_ - 1], interval_.b - 1e-3 * (interval_.b - interval_.lowest));
  clock_.to(time_.rayleigh_ritz);
}

template <class T>
bool ChfsiIteration<T>::passes(std::int64_t j) const {
  const double scale = options_.test == StoppingTest::backward ? norm_a_ + std::abs(theta_[j]) : std::abs(theta_[j]);
  return residual_[j] <= options_.tolerance * scale;
}

template <class T>
int ChfsiIteration<T>::lock() {
  while (locked_ < k_ && passes(locked_)) ++locked_;
  int passing = 0;
  for (int j = 0; j < k_; ++j) passing += passes(j) ? 1 : 0;
  return passing;
}

template <class T>
FilterPlan ChfsiIteration<T>::plan(bool first) const {
  FilterPlan out;
  int wanted_max = 2;
  const double single_floor = kMixedFilterFloor * norm_a_;
  for (std::int64_t j = locked_; j < m_; ++j) {
    int d = first ? first_degree_ : max_degree_;
    bool single = single_ != nullptr;
    const double growth = filter_growth_per_degree(interval_, theta_[j]);
    if (j >= k_) {  // a guard column: filtered as much as the hardest wanted one, or a share of that
      if (!first) d = guard_percent_ > 0 ? std::max(2, wanted_max * guard_percent_ / 100) : wanted_max;
    } else if (!first) {
      const double scale =
          options_.test == StoppingTest::backward ? norm_a_ + std::abs(theta_[j]) : std::abs(theta_[j]);
      // Far from convergence, the mixed filter aims at fp32's floor; else at a margin below the test.
      const bool rough = single && residual_[j] > 10 * single_floor;
      const double target = rough ? single_floor : 0.5 * options_.tolerance * scale;
      if (residual_[j] <= target)
        d = 2;
      else if (growth > 1 + 1e-12)
        d = static_cast<int>(std::ceil(std::log(residual_[j] / target) / std::log(growth)));
      d = std::clamp(d, 2, max_degree_);
      d += d % 2;
      wanted_max = std::max(wanted_max, d);
      single = rough || (single && residual_[j] / std::pow(std::max(growth, 1.0), d) >= single_floor);
    } else {
      single = single && residual_[j] / std::pow(std::max(growth, 1.0), d) >= single_floor;
    }
    d += d % 2;
    out.degree.push_back(std::min(d, max_degree_ - max_degree_ % 2));
    out.single.push_back(single ? 1 : 0);
  }
  return out;
}

template <class T>
void ChfsiIteration<T>::filter(const FilterPlan& plan) {
  const std::int64_t ma = m_ - locked_;
  const std::vector<int>& degree = plan.degree;
  const std::vector<char>& single = plan.single;
  std::vector<std::int64_t> order(static_cast<std::size_t>(ma));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
    return single[x] != single[y] ? single[x] > single[y] : degree[x] > degree[y];
  });
  std::vector<int> sorted;
  for (const std::int64_t j : order) sorted.push_back(degree[j]);
  permute_columns(ctx_, active(V_), order);
  clock_.to(time_.other);
  const auto w = static_cast<std::int64_t>(std::count(single.begin(), single.end(), 1));
  if (w > 0) filter_single(sorted, w);
  if (w < ma)
    filter_products_ += chebyshev_filter(A_, interval_, std::vector<int>(sorted.begin() + w, sorted.end()),
                                         column_range(active(V_), w, ma - w), column_range(active(S_), w, ma - w));
  clock_.to(time_.filter);
  chfsi_orthonormalize(ctx_, comm_, V_.view(), locked_, S_.view(), factor_);
  clock_.to(time_.orthogonalization);
}

template <class T>
void ChfsiIteration<T>::filter_single(const std::vector<int>& sorted, std::int64_t w) {
  if constexpr (std::is_same_v<T, Single>) {
    BLOCKEIGS_ASSERT(!"the mixed filter is for fp64 blocks");
  } else {
    filter_single_fp64(sorted, w);
  }
}

template <class T>
void ChfsiIteration<T>::filter_single_fp64(const std::vector<int>& sorted, std::int64_t w) {
  if (single_V_.cols() < w) {  // made once, at the widest single-precision share (the first filter's)
    single_V_ = dense::DenseBlock<Single>(ctx_.space(), n_, w);
    single_S_ = dense::DenseBlock<Single>(ctx_.space(), n_, w);
  }
  const dense::DenseView<T> V = column_range(active(V_), 0, w);
  const dense::DenseView<Single> Vs{ctx_.space(), n_, w, w, single_V_.data()},
      Ss{ctx_.space(), n_, w, w, single_S_.data()};
  convert_values<T, Single>(ctx_, dense::ConstDenseView<T>(V), Vs);
  const std::int64_t products =
      chebyshev_filter(*single_, interval_, std::vector<int>(sorted.begin(), sorted.begin() + w), Vs, Ss);
  convert_values<Single, T>(ctx_, dense::ConstDenseView<Single>(Vs), V);
  filter_products_ += products;
  single_products_ += products;
}

template <class T>
void ChfsiIteration<T>::use_single(bool requested) {
  if constexpr (!std::is_same_v<T, Single>)
    if (requested) single_ = rounded_to_single(A_);
}

template <class T>
void ChfsiIteration<T>::report(int iteration, int passing, bool last) {
  const auto value = [&](std::int64_t j) { return sign_ * theta_[j]; };
  if (options_.keep_history) {
    LobpcgStep step;
    for (int j = 0; j < k_; ++j) {
      step.eigenvalues.push_back(value(j));
      step.residual_norms.push_back(residual_[j]);
    }
    history_.push_back(std::move(step));
  }
  if (!options_.monitor) return;
  LobpcgProgress p;
  p.iteration = iteration;
  p.converged = passing;
  const std::int64_t first = std::min<std::int64_t>(locked_, k_ - 1);
  p.eigenvalue = value(first);
  p.residual = residual_[first];
  p.scaled_residual = residual_[first] / std::max(std::abs(theta_[first]), 1e-300);
  p.max_iterations = options_.max_iterations;
  p.elapsed = MPI_Wtime() - t_begin_;
  p.last = last;
  p.norm_estimate = norm_a_;
  options_.monitor(p);
}

template <class T>
LobpcgResult<T> ChfsiIteration<T>::run(std::optional<dense::ConstDenseView<T>> start, double t_begin) {
  t_begin_ = t_begin;
  const SpectrumEstimate bounds = lanczos_bounds(A_, sign_, lanczos_steps_, options_.seed + 1, comm_);
  interval_ = {bounds.lowest_ritz, bounds.upper_bound, bounds.upper_bound, sign_};
  norm_a_ = std::max(std::abs(bounds.lowest_ritz), std::abs(bounds.top_ritz));
  eigen_ = projected_eigen_solver<small_t<T>>(ctx_, m_);
  factor_ = cholesky_inverse_solver<small_t<T>>(ctx_, m_);
  clock_.to(time_.spmm);
  start_block(start);
  rayleigh_ritz();
  int iteration = 0;
  LobpcgStop stop = LobpcgStop::iteration_limit;
  for (;; ++iteration) {
    const int passing = lock();
    const bool done = locked_ >= k_;
    const bool last = done || iteration >= options_.max_iterations;
    report(iteration, passing, last);
    if (done) stop = LobpcgStop::converged;
    if (last) break;
    if (between_iterations(iteration)) {
      stop = LobpcgStop::interrupted;
      break;
    }
    clock_.to(time_.other);
    filter(plan(iteration == 0));
    rayleigh_ritz();
  }
  return finish(iteration, stop);
}

template <class T>
bool ChfsiIteration<T>::between_iterations(int iteration) {
  if (!options_.between_iterations) return false;
  std::vector<double> values;
  for (const double t : theta_) values.push_back(sign_ * t);
  LobpcgIterate it{iteration, static_cast<int>(m_), values, {}};
  it.block = [&] { return host_doubles<T>(V_.cview()); };  // complex values as (real, imaginary) pairs
  return options_.between_iterations(it);
}

template <class T>
LobpcgResult<T> ChfsiIteration<T>::finish(int iteration, LobpcgStop stop) {
  LobpcgResult<T> r;
  // The first k columns, ordered from the wanted end (a later active value may fall below a locked one).
  std::vector<std::int64_t> order(static_cast<std::size_t>(k_));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return theta_[x] < theta_[y]; });
  r.eigenvectors = dense::DenseBlock<T>(ctx_.space(), n_, k_);
  select_columns(ctx_, V_.cview(), order, r.eigenvectors.view());
  for (const std::int64_t j : order) {
    const double lambda = sign_ * theta_[j];
    r.eigenvalues.push_back(lambda);
    r.residual_norms.push_back(residual_[j]);
    r.relative_residuals.push_back(residual_[j] / std::abs(lambda));
    r.b_norms.push_back(1);
    r.converged.push_back(passes(j));
  }
  const bool all = std::all_of(r.converged.begin(), r.converged.end(), [](bool c) { return c; });
  r.stop = all ? LobpcgStop::converged : stop == LobpcgStop::interrupted ? stop : LobpcgStop::iteration_limit;
  r.iterations = iteration;
  r.block_size = static_cast<int>(m_);
  r.norm_estimate = norm_a_;
  r.history = std::move(history_);
  lobpcg_detail::mark_tests(options_.tolerance, r);
  clock_.to(time_.other);
  clock_.finish();
  time_.total = MPI_Wtime() - t_begin_;
  r.stats.timings = time_;
  r.stats.filter_products = filter_products_;
  r.stats.single_filter_products = single_products_;
  r.stats.search_in_fp32 = single_ != nullptr;
  return r;
}

}  // namespace

// auto: mixed in device memory, where the filter's products are bound by the bytes they move.
bool filter_mixed(SearchPrecision requested, Space space, int value_bytes) {
  return value_bytes == 8 &&
         (requested == SearchPrecision::fp32 || (requested == SearchPrecision::automatic && space == Space::device));
}

int default_filter_block_size(int k, std::int64_t global_rows) {
  return static_cast<int>(std::min<std::int64_t>(global_rows, k + std::max(16, std::min(k / 2, 128 + k / 10))));
}

template <class T>
LobpcgResult<T> chebyshev_filter_eigs(LinearOperator<T>& A, const LobpcgOptions& options, const FilterTuning& tuning,
                                      std::optional<dense::ConstDenseView<T>> start) {
  const double t_begin = MPI_Wtime();
  LobpcgOptions checked = options;
  if (checked.block_size == 0) checked.block_size = default_filter_block_size(options.k, A.global_rows());
  const int m = lobpcg_detail::validate_options(A, checked, start, false);
  if (tuning.first_degree < 0 || tuning.max_degree < 0 || tuning.lanczos_steps < 0 || tuning.guard_degree_percent < 0)
    fail_input("Chebyshev filter: its degrees and Lanczos steps must be 0 (automatic) or positive");
  ChfsiIteration<T> iteration(A, options, tuning, m);
  iteration.use_single(filter_mixed(options.search_precision, A.context().space(), sizeof(real_t<T>)));
  return iteration.run(start, t_begin);
}

#define BLOCKEIGS_CHFSI(T)                                                                                      \
  template LobpcgResult<T> chebyshev_filter_eigs(LinearOperator<T>&, const LobpcgOptions&, const FilterTuning&, \
                                                 std::optional<dense::ConstDenseView<T>>);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_CHFSI)
#undef BLOCKEIGS_CHFSI

}  // namespace blockeigs::solver
