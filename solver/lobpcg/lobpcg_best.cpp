// LOBPCG's best iterate, divergence and stagnation (lobpcg_best.hpp).
#include "solver/lobpcg/lobpcg_best.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::solver::lobpcg_detail {
namespace {

// The block's progress: the geometric mean of the wanted pairs' residuals
// (unit vectors), and the pair with the largest.
std::pair<double, int> block_residual(const std::vector<double>& r_norm, const std::vector<double>& x_norm, int k) {
  double log_sum = 0, largest = -1;
  int pair = 0;
  for (int j = 0; j < k; ++j) {
    const double r = x_norm[j] > 0 ? r_norm[j] / x_norm[j] : INFINITY;
    log_sum += std::log(std::max(r, std::numeric_limits<double>::min()));
    if (!(r <= largest)) {
      largest = r;
      pair = j;
    }
  }
  return {std::exp(log_sum / k), pair};
}

// Each pair's residual bound ||r|| / ||x|| (with B, ||r|| / ||B x||).
std::vector<double> residual_bounds(const std::vector<double>& r_norm, const std::vector<double>& x_norm, int k) {
  std::vector<double> bound(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) bound[j] = x_norm[j] > 0 ? r_norm[j] / x_norm[j] : INFINITY;
  return bound;
}

}  // namespace

double RitzComparison::rounding(double bound) const {
  return ritz_rounding * eps * norm_a + (fp32_search ? ritz_fp32_drift * bound : 0.0);
}

bool RitzComparison::worse(const std::vector<double>& candidate, const std::vector<double>& bound,
                           const std::vector<double>& now, int k) const {
  for (int j = 0; j < k; ++j)
    if (sign * (candidate[j] - now[j]) > bound[j] + rounding(bound[j])) return true;
  return false;
}

template <class T>
BestIterate<T>::BestIterate(const dense::Context& context, std::int64_t rows, int k, int stagnation_window,
                            SpectrumEnd which, double eps, bool fp32_search)
    : context_(context),
      rows_(rows),
      k_(k),
      stagnation_window_(stagnation_window),
      sign_(which == SpectrumEnd::smallest ? 1 : -1),
      eps_(eps),
      fp32_search_(fp32_search) {}

template <class T>
void BestIterate<T>::record(dense::ConstDenseView<T> previous_x, bool new_iterate, int iteration,
                            const TestedPairs& now) {
  const auto [mean, largest_pair] = block_residual(now.r_norm, now.x_norm, k_);
  const std::vector<double> lambda(now.lambda.begin(), now.lambda.begin() + k_);
  const std::vector<double> bound = residual_bounds(now.r_norm, now.x_norm, k_);
  norm_a_ = std::max(norm_a_, now.norm_a);
  for (double v : lambda) norm_a_ = std::max(norm_a_, std::abs(v));
  const RitzComparison ritz = compare();
  // Iterates that missed an eigenvalue this one has found are no reference:
  // neither the one kept nor the minimum the divergence test measures from.
  if (kept_ && ritz.worse(kept_lambda_, kept_bound_, lambda, k_)) kept_ = false;
  if (seen_ && ritz.worse(min_lambda_, min_bound_, lambda, k_)) min_mean_ = INFINITY;
  // The previous iterate, where the mean has just risen from it: kept if it is the best so far.
  if (new_iterate && seen_ && last_mean_ < mean && (!kept_ || last_mean_ < kept_mean_) &&
      !ritz.worse(last_lambda_, last_bound_, lambda, k_)) {
    if (!allocated_) copy_ = dense::DenseBlock<T>(context_.space(), rows_, k_);
    allocated_ = true;
    kept_ = true;
    copy_block(context_, previous_x, copy_.view());
    kept_lambda_ = last_lambda_;
    kept_x_ = last_x_;
    kept_bound_ = last_bound_;
    kept_mean_ = last_mean_;
  }
  if (!seen_ || mean < min_mean_) {
    min_mean_ = mean;
    min_iteration_ = iteration;
    min_lambda_ = lambda;
    min_bound_ = bound;
  }
  if (!seen_ || mean < stagnation_fall * fallen_to_) {
    fallen_to_ = mean;
    fallen_at_ = iteration;
  }
  find_progress_and_jumps(iteration, lambda, bound, mean);
  last_iteration_ = iteration;
  if (new_iterate) above_ = mean > divergence_growth * min_mean_ ? above_ + 1 : 0;
  seen_ = true;
  last_lambda_ = lambda;
  last_x_.assign(now.x_norm.begin(), now.x_norm.begin() + k_);
  last_bound_ = bound;
  last_mean_ = mean;
  last_largest_pair_ = largest_pair;
}

// A wanted Ritz value's move toward the wanted end beyond rounding since the
// last such move restarts the stagnation window; one beyond jump_ratio times
// its pair's smallest bound since its last jump is a jump, reported where the
// pair had settled (jump_settled) unless the value only moved into the place
// of an earlier pair (which jumped itself).
template <class T>
void BestIterate<T>::find_progress_and_jumps(int iteration, const std::vector<double>& lambda,
                                             const std::vector<double>& bound, double mean) {
  const RitzComparison ritz = compare();
  jumps_.clear();
  if (!seen_) {
    anchor_ = lambda;
    jump_lambda_ = lambda;
    jump_bound_ = bound;
    return;
  }
  bool moved = false;
  const std::vector<double> before = jump_lambda_, before_bound = jump_bound_;
  // Within jump_ratio bounds of pair i's reference value.
  const auto near = [&](int i, double theta) {
    return std::abs(before[i] - theta) <= jump_ratio * before_bound[i] + ritz.rounding(before_bound[i]);
  };
  for (int j = 0; j < k_; ++j) {
    moved = moved || sign_ * (anchor_[j] - lambda[j]) > ritz.rounding(bound[j]);
    if (sign_ * (before[j] - lambda[j]) > jump_ratio * before_bound[j] + ritz.rounding(bound[j])) {
      // Reported where the pair had settled, unless it only took the place of one before it, which moved on.
      bool shifted = false;
      for (int i = 0; i < j && !shifted; ++i) shifted = near(i, lambda[j]);
      const bool settled = before_bound[j] <= jump_settled * std::abs(before[j]);
      if (settled && !shifted) jumps_.push_back({iteration, j, before[j], lambda[j], before_bound[j]});
      jump_lambda_[j] = lambda[j];
      jump_bound_[j] = bound[j];
    } else if (bound[j] < jump_bound_[j]) {
      jump_lambda_[j] = lambda[j];
      jump_bound_[j] = bound[j];
    }
  }
  if (moved) {
    anchor_ = lambda;
    fallen_to_ = mean;
    fallen_at_ = iteration;
  }
}

template <class T>
std::optional<LobpcgStall> BestIterate<T>::stall() const {
  const bool diverged = above_ >= divergence_window;
  const double patience = std::max<double>(stagnation_window_, stagnation_patience * fallen_at_);
  if (diverged || (stagnation_window_ > 0 && last_iteration_ - fallen_at_ >= patience))
    return LobpcgStall{diverged, last_largest_pair_, min_mean_, min_iteration_, last_mean_, fallen_at_};
  return std::nullopt;
}

template <class T>
void BestIterate<T>::restore(LinearOperator<T>& A, LinearOperator<T>* B, MPI_Comm comm, const LobpcgOptions& options,
                             double norm_a, dense::DenseView<T> workspace, LobpcgResult<T>& result) const {
  // The same decision on every rank: the values are global.
  if (result.all_converged() || !kept_ || !(kept_mean_ < last_mean_) ||
      compare().worse(kept_lambda_, kept_bound_, last_lambda_, k_))
    return;
  const dense::Context& ctx = A.context();
  BLOCKEIGS_ASSERT(workspace.rows == A.local_rows() && workspace.cols >= 4 * k_);
  const dense::DenseView<T> V = column_range(workspace, 0, k_), AV = column_range(workspace, k_, k_),
                            R = column_range(workspace, 2 * k_, k_), BV = column_range(workspace, 3 * k_, k_);
  copy_block(ctx, copy_.cview(), V);
  if (B) {
    B->apply(T(1), dense::ConstDenseView<T>(V), T(0), BV);  // V is B-orthonormal already
  } else {
    std::vector<double> unit(kept_x_.size());
    for (std::size_t j = 0; j < unit.size(); ++j) unit[j] = kept_x_[j] > 0 ? 1.0 / kept_x_[j] : 1.0;
    scale_columns(ctx, unit, V);
  }
  A.apply(T(1), dense::ConstDenseView<T>(V), T(0), AV);
  const ResidualNorms norms =
      eigen_residuals(ctx, comm, dense::ConstDenseView<T>(B ? BV : V), dense::ConstDenseView<T>(AV), kept_lambda_, R);
  if (!(block_residual(norms.residual, norms.x, k_).first < last_mean_)) return;
  copy_block(ctx, dense::ConstDenseView<T>(V), result.eigenvectors.view());
  for (int j = 0; j < k_; ++j) {
    // Without B, per unit vector (||x|| = 1); with B, per B-unit vector, scaled by ||B x||.
    const double r = B ? norms.residual[j] : (norms.x[j] > 0 ? norms.residual[j] / norms.x[j] : INFINITY);
    const double bx = B ? norms.x[j] : 1.0;
    double scaled = 0;
    result.eigenvalues[j] = kept_lambda_[j];
    result.residual_norms[j] = r;
    result.b_norms[j] = bx;
    result.relative_residuals[j] = r / (std::abs(kept_lambda_[j]) * bx);
    result.converged[j] = passes(options.test, options.tolerance, r, kept_lambda_[j], bx, norm_a, &scaled);
  }
  result.restored = true;
}

template class BestIterate<float>;
template class BestIterate<double>;
template class BestIterate<std::complex<float>>;
template class BestIterate<std::complex<double>>;

std::vector<int> pairs_below_floor(SpectrumEnd which, double eps, double norm_a, double tolerance,
                                   const std::vector<double>& lambda, const std::vector<bool>& converged, int k,
                                   double& floor) {
  std::vector<int> pairs;
  floor = 0;
  for (int j = 0; j < k; ++j) {
    const double theta = lambda[j];
    const bool away_from_zero = which == SpectrumEnd::smallest ? theta > 0 : theta < 0;
    if (converged[j] || !away_from_zero) continue;
    const double f = eps * norm_a / std::abs(theta);
    if (f > tolerance) {
      pairs.push_back(j);
      floor = std::max(floor, f);
    }
  }
  return pairs;
}

}  // namespace blockeigs::solver::lobpcg_detail
