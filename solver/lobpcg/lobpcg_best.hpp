// LOBPCG's guard against losing ground: per wanted pair, the best iterate
// seen (returned when the last one is worse) and divergence (a residual that
// has grown by orders of magnitude from its minimum and stays there).
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

// The block's progress is its largest residual ||A x - lambda x|| (unit x)
// over the k wanted pairs: not the relative residual, which grows for the
// smallest pairs while their Ritz values fall from the far end. The block
// diverges when that stays above divergence_growth times its smallest for
// divergence_window consecutive iterations; the window lets a missed
// eigenvalue move in below a pair (a jump in its residual that falls again).
inline constexpr double divergence_growth = 1e3;
inline constexpr int divergence_window = 50;

// What the stopping test saw of one iterate's first k columns.
struct TestedPairs {
  const std::vector<double>& lambda;
  const std::vector<double>& r_norm;  // ||A x - lambda x|| for x as stored
  const std::vector<double>& x_norm;
};

// The best iterate: the one whose largest wanted residual was smallest. Whole
// blocks, not pairs mixed from several iterates: in a cluster the pairs trade
// places from one iterate to the next, and vectors of different iterates are
// not orthogonal (bcsstk16, where 74 eigenvalues lie within 1% of 1).
template <class T>
class BestIterate {
 public:
  BestIterate(const spmm::Context& context, std::int64_t rows, int k);

  // After each stopping test. `new_iterate` false: the same X tested again
  // (A X recomputed); true: X advanced, and `previous_x` (the other buffer's
  // first k columns) still holds the iterate tested last time. That iterate
  // is copied when it was a minimum (the largest residual has just risen
  // from it) below the kept one's: no copy at all while residuals fall.
  void record(spmm::ConstDenseView<T> previous_x, bool new_iterate, int iteration, const TestedPairs& now);

  // Whether the block has diverged, and where from.
  std::optional<LobpcgDivergence> divergence() const;

  // Replaces the result taken from the last iterate, where it did not
  // converge, by the kept iterate if that one, checked with an explicit A x,
  // has the smaller largest residual. Collective.
  void restore(LinearOperator<T>& A, MPI_Comm comm, const LobpcgOptions& options, double norm_a,
               LobpcgResult<T>& result) const;

 private:
  const spmm::Context& context_;
  std::int64_t rows_;
  int k_;
  // rows x k, allocated at the first copy. Whether there is one is `kept_`,
  // not its data, which is null on a rank that owns no rows.
  spmm::DenseBlock<T> copy_;
  bool kept_ = false;
  std::vector<double> kept_lambda_, kept_x_;
  double kept_worst_ = 0;
  bool seen_ = false;  // last_* hold the previous test's values
  std::vector<double> last_lambda_, last_x_;
  double last_worst_ = 0;
  int last_worst_pair_ = 0;
  double min_worst_ = 0;  // the smallest largest residual seen
  int min_iteration_ = 0;
  int above_ = 0;         // consecutive iterations above divergence_growth x min_worst_
};

}  // namespace blockeigs::solver::lobpcg_detail
