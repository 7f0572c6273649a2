// Block CG's stagnation watch: host bookkeeping over the columns' relative
// residuals (O(columns) a test, no device work), and the floor a stagnated
// run is told about. Not part of the library's API.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "solver/cg/block_cg.hpp"
#include "solver/base/linear_operator.hpp"

namespace blockeigs::solver::cg_detail {

// A column makes progress when its relative residual falls below this
// fraction of the level it last fell to.
inline constexpr double stagnation_fall = 0.9;

class StagnationWatch {
 public:
  StagnationWatch(std::int64_t columns, int window) : level_(columns, 0.0), lowest_(columns, 0.0), window_(window) {}

  // After each test, with the active columns' relative residuals and
  // floors' lower bounds (in `active`'s order). True when none of them has
  // fallen by 10% for the window, or when all of them have fallen below
  // their floor's bound: the recurrence residual falls on without bound, but
  // the true one stops at about eps ||A|| ||x|| / ||b||, which is at least eps
  // (||b|| <= ||A|| ||x||; no bound, 0, for b = 0), so the column's tolerance
  // cannot be met.
  bool record(int iteration, const std::vector<std::int64_t>& active, const std::vector<double>& relative,
              const std::vector<double>& floor_bound);

  bool below_floor() const { return below_floor_; }

  int fallen_at() const { return fallen_at_; }
  double lowest(std::int64_t column) const { return lowest_[column]; }

 private:
  std::vector<double> level_;   // per column: the level it last fell to (0: not seen yet)
  std::vector<double> lowest_;  // per column: its lowest relative residual
  int window_;
  int fallen_at_ = 0;
  bool below_floor_ = false;  // the stop was for the floor
};

// The stall report for the columns still active: their lowest relative
// residual and the floor eps ||A|| ||x_j|| / ||b_j||, ||A|| by 20 power-method
// products. Collective (A's products, X's column norms).
template <class T>
BlockCgStall describe_stall(LinearOperator<T>& A, dense::ConstDenseView<T> X, const std::vector<std::int64_t>& active,
                            const std::vector<double>& rhs_norms, const StagnationWatch& watch);

}  // namespace blockeigs::solver::cg_detail
