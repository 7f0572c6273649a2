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

}  // namespace

template <class T>
BestIterate<T>::BestIterate(const spmm::Context& context, std::int64_t rows, int k, int stagnation_window)
    : context_(context), rows_(rows), k_(k), stagnation_window_(stagnation_window) {}

template <class T>
void BestIterate<T>::record(spmm::ConstDenseView<T> previous_x, bool new_iterate, int iteration,
                            const TestedPairs& now) {
  const auto [mean, largest_pair] = block_residual(now.r_norm, now.x_norm, k_);
  if (new_iterate && seen_ && last_mean_ < mean && (!kept_ || last_mean_ < kept_mean_)) {
    if (!kept_) copy_ = spmm::DenseBlock<T>(context_.space(), rows_, k_);
    kept_ = true;
    copy_block(context_, previous_x, copy_.view());
    kept_lambda_ = last_lambda_;
    kept_x_ = last_x_;
    kept_mean_ = last_mean_;
  }
  if (!seen_ || mean < min_mean_) {
    min_mean_ = mean;
    min_iteration_ = iteration;
  }
  if (!seen_ || mean < stagnation_fall * fallen_to_) {
    fallen_to_ = mean;
    fallen_at_ = iteration;
  }
  last_iteration_ = iteration;
  if (new_iterate) above_ = mean > divergence_growth * min_mean_ ? above_ + 1 : 0;
  seen_ = true;
  last_lambda_.assign(now.lambda.begin(), now.lambda.begin() + k_);
  last_x_.assign(now.x_norm.begin(), now.x_norm.begin() + k_);
  last_mean_ = mean;
  last_largest_pair_ = largest_pair;
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
                             double norm_a, spmm::DenseView<T> workspace, LobpcgResult<T>& result) const {
  // The same decision on every rank: the values are global.
  if (result.all_converged() || !kept_ || !(kept_mean_ < last_mean_)) return;
  const spmm::Context& ctx = A.context();
  BLOCKEIGS_ASSERT(workspace.rows == A.local_rows() && workspace.cols >= 4 * k_);
  const spmm::DenseView<T> V = column_range(workspace, 0, k_), AV = column_range(workspace, k_, k_),
                           R = column_range(workspace, 2 * k_, k_), BV = column_range(workspace, 3 * k_, k_);
  copy_block(ctx, copy_.cview(), V);
  if (B) {
    B->apply(T(1), spmm::ConstDenseView<T>(V), T(0), BV);  // V is B-orthonormal already
  } else {
    std::vector<double> unit(kept_x_.size());
    for (std::size_t j = 0; j < unit.size(); ++j) unit[j] = kept_x_[j] > 0 ? 1.0 / kept_x_[j] : 1.0;
    scale_columns(ctx, unit, V);
  }
  A.apply(T(1), spmm::ConstDenseView<T>(V), T(0), AV);
  const ResidualNorms norms = eigen_residuals(ctx, comm, spmm::ConstDenseView<T>(B ? BV : V),
                                              spmm::ConstDenseView<T>(AV), kept_lambda_, R);
  if (!(block_residual(norms.residual, norms.x, k_).first < last_mean_)) return;
  copy_block(ctx, spmm::ConstDenseView<T>(V), result.eigenvectors.view());
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
