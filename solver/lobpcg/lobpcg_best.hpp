// LOBPCG's guard against losing ground: the best iterate seen (returned
// when the last one is worse), divergence (residuals grown by orders of
// magnitude from their minimum, and staying there) and stagnation (residuals
// that have stopped falling).
// Not part of the library's API.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "solver/operator/linear_operator.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "spmm/dense.hpp"
#include "spmm/memory.hpp"

namespace blockeigs::solver::lobpcg_detail {

// The block's progress is the geometric mean of the wanted pairs' residuals
// ||A x - lambda x|| (unit x): not relative residuals, which grow for the
// smallest pairs while their Ritz values fall from the far end, and not the
// largest, which one pair can hold up while the others converge (bcsstk21).
// The block diverges when that mean stays above divergence_growth times its
// smallest for divergence_window consecutive iterations; the window lets a
// missed eigenvalue move in below a pair (a jump that falls again).
inline constexpr double divergence_growth = 1e3;
inline constexpr int divergence_window = 50;
// Stagnation: the mean's lowest has not fallen below this fraction of the
// level it last fell to, for LobpcgOptions::stagnation_window iterations and
// for stagnation_patience times the iterations before that last fall. Slow
// runs progress in bursts between long plateaus: unpreconditioned bcsstk21
// (relative 1e-4) converges at iteration 18088 after a plateau from 11571
// past 13571, which a fixed window of 2000 stopped as stagnating.
inline constexpr double stagnation_fall = 0.9;
inline constexpr double stagnation_patience = 0.5;

// The wanted, unconverged pairs whose relative-test floor eps ||A|| / |lambda|
// is above `tolerance` for a lower bound of it: ||A|| >= norm_a, and at the
// smallest end theta >= lambda (the Ritz values only fall), so a positive
// theta gives |lambda| <= theta where lambda >= 0 (at the largest end a
// negative one likewise). Pairs whose Ritz value has the other sign are not
// judged. Writes the largest such floor.
std::vector<int> pairs_below_floor(SpectrumEnd which, double eps, double norm_a, double tolerance,
                                   const std::vector<double>& lambda, const std::vector<bool>& converged, int k,
                                   double& floor);

// What the stopping test saw of one iterate's first k columns.
struct TestedPairs {
  const std::vector<double>& lambda;
  const std::vector<double>& r_norm;  // ||A x - lambda x|| for x as stored
  const std::vector<double>& x_norm;
};

// The best iterate: the one whose mean wanted residual was smallest. Whole
// blocks, not pairs mixed from several iterates: in a cluster the pairs trade
// places from one iterate to the next, and vectors of different iterates are
// not orthogonal (bcsstk16, where 74 eigenvalues lie within 1% of 1).
template <class T>
class BestIterate {
 public:
  BestIterate(const spmm::Context& context, std::int64_t rows, int k, int stagnation_window);

  // After each stopping test. `new_iterate` false: the same X tested again
  // (A X recomputed); true: X advanced, and `previous_x` (the other buffer's
  // first k columns) still holds the iterate tested last time. That iterate
  // is copied when it was a minimum (the mean residual has just risen from
  // it) below the kept one's: no copy at all while residuals fall.
  void record(spmm::ConstDenseView<T> previous_x, bool new_iterate, int iteration, const TestedPairs& now);

  // Whether the block has diverged or stagnated, and where from.
  std::optional<LobpcgStall> stall() const;

  // Replaces the result taken from the last iterate, where it did not
  // converge, by the kept iterate if that one, checked with an explicit A x,
  // has the smaller mean residual. `workspace` (the local rows, at least 4 k
  // columns, in the operator's space) holds the check's blocks: a block the
  // run no longer needs, so that the check allocates nothing. With B (A x =
  // lambda B x) the kept columns are B-orthonormal and checked with B x.
  // Collective.
  void restore(LinearOperator<T>& A, LinearOperator<T>* B, MPI_Comm comm, const LobpcgOptions& options, double norm_a,
               spmm::DenseView<T> workspace, LobpcgResult<T>& result) const;

 private:
  const spmm::Context& context_;
  std::int64_t rows_;
  int k_;
  int stagnation_window_;
  // rows x k, allocated at the first copy. Whether there is one is `kept_`,
  // not its data, which is null on a rank that owns no rows.
  spmm::DenseBlock<T> copy_;
  bool kept_ = false;
  std::vector<double> kept_lambda_, kept_x_;
  double kept_mean_ = 0;
  bool seen_ = false;  // last_* hold the previous test's values
  std::vector<double> last_lambda_, last_x_;
  double last_mean_ = 0;
  int last_largest_pair_ = 0;
  double min_mean_ = 0;  // the smallest mean residual seen
  int min_iteration_ = 0;
  int above_ = 0;         // consecutive iterations above divergence_growth x min_mean_
  double fallen_to_ = 0;  // the level the mean last fell to by stagnation_fall
  int fallen_at_ = 0;     // and when
  int last_iteration_ = 0;
};

}  // namespace blockeigs::solver::lobpcg_detail
