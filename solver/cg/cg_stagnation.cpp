#include "solver/cg/cg_stagnation.hpp"

#include <limits>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/norm_estimate.hpp"

namespace blockeigs::solver::cg_detail {

bool StagnationWatch::record(int iteration, const std::vector<std::int64_t>& active,
                             const std::vector<double>& relative, const std::vector<double>& floor_bound) {
  bool all_below = !active.empty();
  for (std::size_t c = 0; c < active.size(); ++c) {
    all_below = all_below && relative[c] < floor_bound[c];
    const std::int64_t j = active[c];
    if (level_[j] == 0 || relative[c] < stagnation_fall * level_[j]) {
      if (level_[j] != 0) fallen_at_ = iteration;
      level_[j] = relative[c];
    }
    if (lowest_[j] == 0 || relative[c] < lowest_[j]) lowest_[j] = relative[c];
  }
  if (window_ == 0) return false;
  below_floor_ = all_below;
  return all_below || (!active.empty() && iteration - fallen_at_ >= window_);
}

template <class T>
BlockCgStall describe_stall(LinearOperator<T>& A, dense::ConstDenseView<T> X, const std::vector<std::int64_t>& active,
                            const std::vector<double>& rhs_norms, const StagnationWatch& watch) {
  constexpr int power_steps = 20;  // as LOBPCG's estimate: 84-100% of ||A||_2 on ../shared/data's matrices
  BlockCgStall stall;
  stall.below_floor = watch.below_floor();
  stall.fallen_at = watch.fallen_at();
  stall.norm_estimate = power_norm_estimate(A, A.comm(), power_steps, 1);
  const std::vector<double> x_norms = column_norms(A.context(), A.comm(), X);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (std::int64_t j : active) {
    const double b = rhs_norms[j] > 0 ? rhs_norms[j] : 1.0;
    stall.columns.push_back(static_cast<int>(j));
    stall.lowest.push_back(watch.lowest(j));
    stall.floor.push_back(eps * stall.norm_estimate * x_norms[j] / b);
  }
  return stall;
}

#define BLOCKEIGS_STALL(T)                                                                                             \
  template BlockCgStall describe_stall(LinearOperator<T>&, dense::ConstDenseView<T>, const std::vector<std::int64_t>&, \
                                       const std::vector<double>&, const StagnationWatch&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_STALL)
#undef BLOCKEIGS_STALL

}  // namespace blockeigs::solver::cg_detail
