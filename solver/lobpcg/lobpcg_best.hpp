// LOBPCG's guard against losing ground: the best iterate seen (returned
// when the last one is worse), divergence (residuals grown by orders of
// magnitude from their minimum, and staying there), stagnation (neither the
// residuals nor the wanted Ritz values moving toward the wanted end) and
// jumps of the Ritz values (an eigenvalue missed so far, found).
// Not part of the library's API.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "solver/base/linear_operator.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

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

// Progress by what was asked for: at the smallest end the Rayleigh-Ritz
// values are upper bounds of the eigenvalues (Courant-Fischer) and, the
// search space holding X, fall monotonically; at the largest end they rise.
// A wanted Ritz value that moved toward the wanted end by more than its
// rounding since the last such move is progress, whatever the residuals do
// (s1rmq4m1 with Jacobi sits near 0.7487 for 1800 iterations while its
// residuals stall, then finds 0.3797). The rounding is ritz_rounding eps
// ||A||_est: the implicit updates' drift of about 10 eps ||A|| a step over up
// to 100 steps between refreshes (lobpcg_detail.hpp), which also covers the
// Gram matrices' rounding (bcsstk16 at its floor: steps of 1.4 eps ||A||_est).
inline constexpr double ritz_rounding = 1000;
// With the residual block in fp32 the implied A X carries up to
// search_drift_fraction of the residuals (lobpcg_detail.hpp); the Ritz
// values move by as much, which a fall must exceed as well.
inline constexpr double ritz_fp32_drift = 2 * 0.05;
// A jump: a wanted Ritz value moved toward the wanted end by more than
// jump_ratio times the smallest residual bound ||r|| / ||x|| (||r|| / ||B x||
// with B) its pair had since its last jump, plus rounding. Within the bound
// lies an eigenvalue; beyond it the pair has moved to one the block had missed.
inline constexpr double jump_ratio = 10;
// A jump is reported only where its pair had settled, its bound at most
// jump_settled |theta|: the first iterations' moves from a random start (a
// largest-end Ritz value of 3e6, bound 2.5e7, rising to 7e8 on bcsstk28)
// are beyond their bounds too, but nothing had been taken for an eigenvalue.
inline constexpr double jump_settled = 1e-2;

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
  const std::vector<double>& x_norm;  // ||x||, or ||B x|| with B
  double norm_a = 0;                  // ||A||_est, the Ritz values' rounding scale (with the block's |Ritz values|)
};

// The Ritz values of the same wanted pairs in two iterates, compared at the
// wanted end, where `sign` is +1 (smallest) or -1 (largest).
struct RitzComparison {
  int sign = 1;
  double eps = 0;
  double norm_a = 0;
  bool fp32_search = false;

  // The rounding of a Ritz value whose pair has residual bound `bound`.
  double rounding(double bound) const;
  // Whether `candidate` (with residual bounds `bound`) is further from the
  // wanted end than `now` at some pair j by more than bound_j plus rounding:
  // its pair j then lies at another eigenvalue than the one `now` bounds.
  bool worse(const std::vector<double>& candidate, const std::vector<double>& bound, const std::vector<double>& now,
             int k) const;
};

// The best iterate: the one whose mean wanted residual was smallest among
// those whose Ritz values are no worse than the last iterate's by more than
// their residual bounds (RitzComparison::worse): an iterate that missed an
// eigenvalue the run has since found is never returned, however small its
// residuals, and the divergence test then measures from the new iterates
// only. Whole blocks, not pairs mixed from several iterates: in a cluster
// the pairs trade places from one iterate to the next, and vectors of
// different iterates are not orthogonal (bcsstk16, where 74 eigenvalues lie
// within 1% of 1).
template <class T>
class BestIterate {
 public:
  // `eps`: the blocks' unit of rounding; `fp32_search`: the residual block in fp32.
  BestIterate(const dense::Context& context, std::int64_t rows, int k, int stagnation_window,
              SpectrumEnd which = SpectrumEnd::smallest, double eps = 0x1p-52, bool fp32_search = false);

  // After each stopping test. `new_iterate` false: the same X tested again
  // (A X recomputed); true: X advanced, and `previous_x` (the other buffer's
  // first k columns) still holds the iterate tested last time. That iterate
  // is copied when it was a minimum (the mean residual has just risen from
  // it) below the kept one's: no copy at all while residuals fall.
  void record(dense::ConstDenseView<T> previous_x, bool new_iterate, int iteration, const TestedPairs& now);

  // Whether the block has diverged or stagnated, and where from.
  std::optional<LobpcgStall> stall() const;

  // The jumps the last record() found (empty for most iterates).
  const std::vector<LobpcgJump>& jumps() const { return jumps_; }

  // Replaces the result taken from the last iterate, where it did not
  // converge, by the kept iterate if that one, checked with an explicit A x,
  // has the smaller mean residual. `workspace` (the local rows, at least 4 k
  // columns, in the operator's space) holds the check's blocks: a block the
  // run no longer needs, so that the check allocates nothing. With B (A x =
  // lambda B x) the kept columns are B-orthonormal and checked with B x.
  // Collective.
  void restore(LinearOperator<T>& A, LinearOperator<T>* B, MPI_Comm comm, const LobpcgOptions& options, double norm_a,
               dense::DenseView<T> workspace, LobpcgResult<T>& result) const;

 private:
  RitzComparison compare() const { return {sign_, eps_, norm_a_, fp32_search_}; }
  void find_progress_and_jumps(int iteration, const std::vector<double>& lambda, const std::vector<double>& bound,
                               double mean);

  const dense::Context& context_;
  std::int64_t rows_;
  int k_;
  int stagnation_window_;
  int sign_;  // +1: the smallest end, -1: the largest
  double eps_;
  bool fp32_search_;
  double norm_a_ = 0;  // ||A||_est, and the largest |Ritz value| recorded
  // rows x k, allocated at the first copy. Whether there is one is `kept_`,
  // not its data, which is null on a rank that owns no rows.
  dense::DenseBlock<T> copy_;
  bool allocated_ = false;
  bool kept_ = false;
  std::vector<double> kept_lambda_, kept_x_, kept_bound_;  // bound: ||r|| / ||x|| per pair
  double kept_mean_ = 0;
  bool seen_ = false;  // last_* hold the previous test's values
  std::vector<double> last_lambda_, last_x_, last_bound_;
  double last_mean_ = 0;
  int last_largest_pair_ = 0;
  double min_mean_ = 0;  // the smallest mean residual seen (since a jump past its iterate's bounds)
  int min_iteration_ = 0;
  std::vector<double> min_lambda_, min_bound_;    // that iterate's
  std::vector<double> anchor_;                    // the wanted Ritz values at their last move toward the wanted end
  std::vector<double> jump_lambda_, jump_bound_;  // per pair: the smallest bound since its last jump, and its value
  std::vector<LobpcgJump> jumps_;
  int above_ = 0;         // consecutive iterations above divergence_growth x min_mean_
  double fallen_to_ = 0;  // the level the mean last fell to by stagnation_fall (or stood at a Ritz move)
  int fallen_at_ = 0;     // and when (the last progress, either kind)
  int last_iteration_ = 0;
};

}  // namespace blockeigs::solver::lobpcg_detail
