// LOBPCG's progress by what the user asked for (solver/lobpcg/lobpcg_best.hpp),
// at np 1-4 with a rank that owns no rows: a wanted Ritz value moving toward
// the wanted end restarts the stagnation window whatever the residuals do;
// rounding does not; an iterate whose Ritz values are worse than the last
// one's beyond its residual bounds is never kept, restored or measured from;
// a jump past a pair's bound is reported, by BestIterate and through the
// monitor and the result of a run that finds an eigenvalue its start missed;
// a guard stop below the fp64 floor ends with the floor's verdict, with B and
// a constraint, at both ends.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <numbers>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/lobpcg/lobpcg_best.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/laplacian_iterates.hpp"

namespace blockeigs {
namespace {

using solver::lobpcg_detail::BestIterate;
using solver::lobpcg_detail::divergence_window;
using solver::lobpcg_detail::jump_ratio;

constexpr std::int64_t n = 60;
constexpr int k = 3;
constexpr double eps = 0x1p-52;

int world_size() {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

// lambda_j = 2 - 2 cos((j + 1) pi / (n + 1)).
double exact_value(int j) { return test::laplacian_1d_eigenvalue(n, j); }

// Iterates recorded from numbers alone (no vectors are read unless one is restored).
struct Recorder {
  dense::Context context = dense::Context::host();  // BestIterate keeps a reference: it must outlive it
  dense::DenseBlock<double> X;
  BestIterate<double> best;
  int iteration = 0;
  Recorder(std::int64_t rows, int window, SpectrumEnd which)
      : X(Space::host, rows, k), best(context, rows, k, window, which, eps) {}
  // Unit vectors (x_norm 1) with these Ritz values and residual norms; ||A||_est 4.
  void record(const std::vector<double>& lambda, const std::vector<double>& r_norm) {
    const std::vector<double> x_norm(k, 1.0);
    best.record(X.cview(), iteration > 0, iteration, {lambda, r_norm, x_norm, 4.0});
    ++iteration;
  }
};

const std::vector<double> stalled(k, 1e-3);  // residuals that neither fall nor rise

// Residuals stalled for 5 windows while the leading Ritz value falls by
// 1e-6 an iteration (far beyond rounding, 1000 eps ||A|| = 9e-13): no stop,
// where values that stand still stop at the window. Once the values move by
// rounding only (100 eps ||A|| either way), the window (and the patience)
// runs out from their last fall.
TEST(LobpcgProgress, FallingRitzValuesRestartTheWindow) {
  constexpr int window = 10;
  Recorder r(0, window, SpectrumEnd::smallest), still(0, window, SpectrumEnd::smallest);
  double theta = 0.75;
  for (int i = 0; i < 5 * window; ++i, theta -= 1e-6) {
    r.record({theta, 0.9, 1.1}, stalled);
    still.record({0.75, 0.9, 1.1}, stalled);
    EXPECT_FALSE(r.best.stall()) << "iteration " << r.iteration - 1;
    EXPECT_EQ(bool(still.best.stall()), i >= window) << "iteration " << i;
  }
  theta += 1e-6;  // the last value recorded
  const int last_fall = r.iteration - 1;
  const double patience = std::max<double>(window, solver::lobpcg_detail::stagnation_patience * last_fall);
  while (!r.best.stall() && r.iteration < 1000)
    r.record({theta + (r.iteration % 2 ? 100 : -100) * eps * 4, 0.9, 1.1}, stalled);
  const auto s = r.best.stall();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->diverged);
  EXPECT_EQ(s->fallen_at, last_fall);
  EXPECT_GE(r.iteration - 1 - last_fall, patience);
  EXPECT_LT(r.iteration - 2 - last_fall, patience);
  EXPECT_TRUE(r.best.jumps().empty());
}

// At the largest end progress is a rise; a fall is not progress.
TEST(LobpcgProgress, AtTheLargestEndARiseIsProgress) {
  Recorder rising(0, 10, SpectrumEnd::largest), falling(0, 10, SpectrumEnd::largest);
  for (int i = 0; i < 30; ++i) {
    rising.record({3.9 + 1e-6 * i, 3.8, 3.7}, stalled);
    falling.record({3.9 - 1e-6 * i, 3.8, 3.7}, stalled);
  }
  EXPECT_FALSE(rising.best.stall());
  const auto s = falling.best.stall();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->fallen_at, 0);
}

// A fall far beyond the pair's smallest residual bound since its last jump
// is a jump; one within jump_ratio bounds is not.
TEST(LobpcgProgress, JumpsAreNamed) {
  Recorder r(0, 0, SpectrumEnd::smallest);
  r.record({0.7491, 0.87, 0.89}, {1e-2, 1e-2, 1e-2});
  r.record({0.7489, 0.87, 0.89}, {1e-3, 1e-2, 1e-2});  // the bound 1e-3 at 0.7489
  r.record({0.7489 - 0.5 * jump_ratio * 1e-3, 0.87, 0.89}, {2e-3, 1e-2, 1e-2});
  EXPECT_TRUE(r.best.jumps().empty());
  // Pair 0 from 0.7489 to 0.403; pair 1 from 0.87 (bound 1e-2) to pair 0's 0.7489: a shift, no jump of its own.
  r.record({0.403, 0.7489, 0.87}, {0.3, 2e-3, 1e-2});
  ASSERT_EQ(r.best.jumps().size(), 1u);
  const solver::LobpcgJump& j = r.best.jumps()[0];
  EXPECT_EQ(j.iteration, 3);
  EXPECT_EQ(j.pair, 0);
  EXPECT_DOUBLE_EQ(j.from, 0.7489);
  EXPECT_DOUBLE_EQ(j.to, 0.403);
  EXPECT_DOUBLE_EQ(j.bound, 1e-3);
  // The pair's reference is now the new value: its further fall within the new bound is no jump.
  r.record({0.388, 0.7489, 0.87}, {0.1, 2e-3, 1e-2});
  EXPECT_TRUE(r.best.jumps().empty());

  // Pairs 1 and 2 only moved into the places of pairs 0 and 1: one jump.
  Recorder largest(0, 0, SpectrumEnd::largest);
  largest.record({3.0, 2.9, 2.8}, {1e-4, 1e-4, 1e-4});
  largest.record({3.5, 3.0, 2.9}, {1.0, 1e-4, 1e-4});
  ASSERT_EQ(largest.best.jumps().size(), 1u);
  EXPECT_EQ(largest.best.jumps()[0].pair, 0);
  EXPECT_DOUBLE_EQ(largest.best.jumps()[0].to, 3.5);

  // From a random start the values move far beyond their bounds, but none had settled: no jump reported.
  Recorder start(0, 0, SpectrumEnd::largest);
  start.record({3.0e6, 2.3e6, 2.1e6}, {2.5e7, 1.1e7, 1.3e7});
  start.record({7.1e8, 4.3e8, 3.4e8}, {3e7, 2e7, 1e7});
  EXPECT_TRUE(start.best.jumps().empty());
  // Once settled (bound 1e5 against 7.7e8), a rise far beyond it is one.
  start.record({7.7e8, 4.7e8, 3.6e8}, {1e5, 2e7, 1e7});
  start.record({9.9e8, 7.7e8, 4.7e8}, {1e7, 1e5, 2e7});
  ASSERT_EQ(start.best.jumps().size(), 1u);
  EXPECT_EQ(start.best.jumps()[0].pair, 0);
}

// After a jump the residuals rise by orders of magnitude while the new
// eigenvalue's pair converges: measured from the minimum before the jump
// (an iterate that missed an eigenvalue) that would be divergence.
TEST(LobpcgProgress, DivergenceMeasuresFromTheIteratesAfterAJump) {
  Recorder r(0, 0, SpectrumEnd::smallest);
  r.record({0.7489, 0.87, 0.89}, {1e-8, 1e-8, 1e-8});
  for (int i = 0; i < 2 * divergence_window; ++i) r.record({0.40 - 1e-4 * i, 0.7489, 0.87}, {1e-1, 1e-4, 1e-4});
  EXPECT_FALSE(r.best.stall());
  // Without the jump, the same rise is divergence.
  Recorder same(0, 0, SpectrumEnd::smallest);
  same.record({0.7489, 0.87, 0.89}, {1e-8, 1e-8, 1e-8});
  for (int i = 0; i < divergence_window; ++i) same.record({0.7489, 0.87, 0.89}, {1e-1, 1e-4, 1e-4});
  const auto s = same.best.stall();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->diverged);
}

// Worse at the wanted end beyond the candidate's own residual bound (plus
// rounding), pair by pair, at either end.
TEST(LobpcgProgress, WorseRitzValuesAtEitherEnd) {
  const solver::lobpcg_detail::RitzComparison smallest{1, eps, 4.0, false}, largest{-1, eps, 4.0, false};
  const std::vector<double> bound{1e-3, 1e-3, 1e-3};
  EXPECT_TRUE(smallest.worse({0.75, 0.87, 0.89}, bound, {0.40, 0.75, 0.87}, k));
  EXPECT_FALSE(smallest.worse({0.7505, 0.87, 0.89}, bound, {0.75, 0.87, 0.89}, k));  // within the bound
  EXPECT_FALSE(smallest.worse({0.40, 0.75, 0.87}, bound, {0.75, 0.87, 0.89}, k));    // better
  EXPECT_TRUE(smallest.worse({0.40, 0.75, 0.88}, bound, {0.40, 0.75, 0.87}, k));     // one pair suffices
  EXPECT_TRUE(largest.worse({3.0, 2.9, 2.8}, bound, {3.5, 3.0, 2.9}, k));
  EXPECT_FALSE(largest.worse({3.5, 3.0, 2.9}, bound, {3.0, 2.9, 2.8}, k));
  EXPECT_FALSE(largest.worse({3.4995, 3.0, 2.9}, bound, {3.5, 3.0, 2.9}, k));
}

// An iterate of the Laplacian's eigenvectors `first`..`first + k - 1` plus
// noise, with their exact eigenvalues as Ritz values.
using Iterate = test::LaplacianIterate;

Iterate make_iterate(test::CsrTestOperator<double>& A, int first, double noise) {
  return test::laplacian_iterate(A, n, k, first, noise);
}

solver::LobpcgResult<double> result_of(const Iterate& it) { return test::unconverged_result(it); }

// The residuals fall to a minimum on eigenvectors 1-3 (eigenvalue 0 missed),
// then the run finds eigenvector 0 with much larger residuals. The minimum's
// Ritz value lambda_1 lies above the last one's lambda_0 by 3 lambda_0, far
// beyond its residual bound: it is not restored, however small its residuals.
// The same minimum is restored where the last iterate missed eigenvalue 0 too.
TEST(LobpcgProgress, NeverRestoresAnIterateWithWorseRitzValues) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  const Iterate missed_low = make_iterate(A, 1, 1e-9), missed_high = make_iterate(A, 1, 1e-6),
                found = make_iterate(A, 0, 1e-2), missed_last = make_iterate(A, 1, 1e-2);
  for (const Iterate* last : {&found, &missed_last}) {
    BestIterate<double> best(A.context(), A.local_rows(), k, 0, SpectrumEnd::smallest, eps);
    const Iterate* sequence[] = {&missed_low, &missed_high, last};
    for (int i = 0; i < 3; ++i)
      best.record(i > 0 ? sequence[i - 1]->X.cview() : sequence[0]->X.cview(), i > 0, i,
                  {sequence[i]->lambda, sequence[i]->r_norm, sequence[i]->x_norm, 4.0});
    solver::LobpcgResult<double> result = result_of(*last);
    dense::DenseBlock<double> workspace(A.context().space(), A.local_rows(), 4 * k);
    solver::LobpcgOptions o;
    o.k = k;
    o.tolerance = 1e-6;
    best.restore(A, nullptr, MPI_COMM_WORLD, o, 4.0, workspace.view(), result);
    if (last == &found) {
      EXPECT_FALSE(result.restored);
      EXPECT_EQ(result.eigenvalues[0], exact_value(0));
    } else {
      EXPECT_TRUE(result.restored);
      EXPECT_EQ(result.eigenvalues[0], exact_value(1));
    }
  }
}

// End to end: a start block orthogonal to the lowest eigenvector but for
// 1e-9 of it. LOBPCG first converges toward lambda_1..lambda_3, then the
// missing direction grows and the Ritz values jump down (at iteration 23-26
// of 157): the monitor and the result name the jumps, and the run converges
// to the lowest eigenvalues.
TEST(LobpcgProgress, AMissedEigenvalueFoundIsReported) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  solver::LobpcgOptions o;
  o.k = k;
  o.block_size = k;
  o.tolerance = 1e-10;
  o.max_iterations = 2000;
  std::vector<solver::LobpcgJump> monitored;
  o.monitor = [&](const solver::LobpcgProgress& p) {
    monitored.insert(monitored.end(), p.jumps.begin(), p.jumps.end());
  };
  // Eigenvector m (0-based) at this rank's row i.
  const auto v = [&](int m, std::int64_t i) {
    return std::sin((m + 1) * (double(A.first_row() + i) + 1) * std::numbers::pi / (n + 1));
  };
  dense::DenseBlock<double> start(Space::host, A.local_rows(), k);
  for (std::int64_t i = 0; i < A.local_rows(); ++i)
    for (int j = 0; j < k; ++j) {
      // Eigenvector j + 1, with some of eigenvectors 4 to 11 (none of eigenvector 0).
      double x = v(j + 1, i);
      for (int m = 4; m < 12; ++m) x += 1e-2 * std::cos(0.7 * m * (j + 1)) * v(m, i);
      start.view()(i, j) = x + (j == 0 ? 1e-9 * v(0, i) : 0.0);
    }
  const auto r = solver::lobpcg<double>(A, o, nullptr, start.cview());
  // The new direction pulls the block's values down from the top, as on s1rmq4m1: each pair leaves the
  // eigenvalue it had converged to (bounds near 1e-10), pair 0 from lambda_1.
  ASSERT_FALSE(r.jumps.empty());
  EXPECT_EQ(monitored.size(), r.jumps.size());
  bool pair0 = false;
  for (const solver::LobpcgJump& j : r.jumps) {
    EXPECT_LT(j.to, j.from - jump_ratio * j.bound);
    EXPECT_LT(j.bound, 1e-6);
    if (j.pair == 0) {
      pair0 = true;
      EXPECT_NEAR(j.from, exact_value(1), 1e-6);
    }
  }
  EXPECT_TRUE(pair0);
  for (int j = 0; j < k; ++j) EXPECT_NEAR(r.eigenvalues[j], exact_value(j), 1e-9) << "pair " << j;
}

// The floor verdict with B and a constraint, at both ends: A = +-diag(1e-9,
// 2, ..., 40), B = 2 I, the constraint e_39 (the far end's eigenvector). At
// relative 1e-6 the eigenvalue +-5e-10 asks for less than fp64 allows
// (eps 20 / 5e-10 ~ 9e-6): the guard stops the run, and the verdict is the
// floor's, with pair 0 and a floor between the tolerance and eps 40 / 1e-9.
TEST(LobpcgProgress, FloorVerdictWithBAndConstraintsAtBothEnds) {
  constexpr std::int64_t rows = 40;
  const solver::RowPartition partition = test::partition_with_empty_rank(rows, world_size());
  for (SpectrumEnd which : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
    const double sign = which == SpectrumEnd::smallest ? 1 : -1;
    std::vector<double> a{sign * 1e-9};
    for (int i = 2; i <= rows; ++i) a.push_back(sign * i);
    test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), test::diagonal_matrix(a), partition);
    test::CsrTestOperator<double> B(MPI_COMM_WORLD, test::SharedContext{A.context()},
                                    test::diagonal_matrix(std::vector<double>(rows, 2.0)), partition);
    dense::DenseBlock<double> Y(Space::host, A.local_rows(), 1);
    for (std::int64_t i = 0; i < A.local_rows(); ++i) Y.view()(i, 0) = A.first_row() + i == rows - 1 ? 1.0 : 0.0;
    solver::LobpcgOptions o;
    o.k = k;
    o.which = which;
    o.tolerance = 1e-6;
    o.stagnation_window = 100;
    const auto r = solver::lobpcg<double>(A, o, nullptr, std::nullopt, &B, Y.cview());
    const char* end = which == SpectrumEnd::smallest ? "smallest" : "largest";
    EXPECT_EQ(r.stop, solver::LobpcgStop::below_floor) << end;
    EXPECT_EQ(r.below_floor, std::vector<int>{0}) << end;
    EXPECT_GT(r.floor, 1e-6) << end;
    EXPECT_LE(r.floor, 1.0001 * std::numeric_limits<double>::epsilon() * 40 / 1e-9) << end;
    ASSERT_TRUE(r.stall) << end;
    EXPECT_LT(r.iterations, 300) << end;
    EXPECT_FALSE(r.converged[0]) << end;
    for (int j = 1; j < k; ++j) {
      EXPECT_TRUE(r.converged[j]) << end << " pair " << j;
      EXPECT_NEAR(r.eigenvalues[j], sign * (j + 1) / 2.0, 1e-9) << end << " pair " << j;
    }
  }
}

}  // namespace
}  // namespace blockeigs
