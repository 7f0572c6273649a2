// LOBPCG's guard against losing ground (solver/lobpcg/lobpcg_best.hpp), at np 1-4
// with a rank that owns no rows: the best iterate is copied only when the
// residuals rise from a new minimum, divergence needs a sustained rise, and
// a run that ended worse returns the kept iterate, checked with an explicit
// A x. Iterates are made from the 1D Laplacian's exact eigenvectors plus
// noise, so that every residual is known. Then the default stopping test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
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
using solver::lobpcg_detail::divergence_growth;
using solver::lobpcg_detail::divergence_window;

constexpr std::int64_t n = 60;
constexpr int k = 3;

using Iterate = test::LaplacianIterate;

// The exact eigenvectors 0..k - 1 plus noise of the given size in every entry.
Iterate make_iterate(test::CsrTestOperator<double>& A, double noise) {
  return test::laplacian_iterate(A, n, k, 0, noise);
}

// The block's progress as BestIterate measures it: the geometric mean of the residuals of unit vectors.
double mean_residual(const Iterate& it) {
  double log_sum = 0;
  for (int j = 0; j < k; ++j) log_sum += std::log(it.r_norm[j] / it.x_norm[j]);
  return std::exp(log_sum / k);
}

// Records `it` as the iterate after `previous` (null: the first).
void record(BestIterate<double>& best, const Iterate* previous, const Iterate& it, int iteration) {
  const dense::ConstDenseView<double> prev = previous ? previous->X.cview() : it.X.cview();
  best.record(prev, previous != nullptr, iteration, {it.lambda, it.r_norm, it.x_norm});
}

solver::LobpcgResult<double> result_of(const Iterate& it) { return test::unconverged_result(it); }

solver::LobpcgOptions options(double tolerance) {
  solver::LobpcgOptions o;
  o.k = k;
  o.tolerance = tolerance;
  return o;
}

TEST(BestIterate, ReturnsTheMinimumWhenTheRunEndsWorse) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  // Residuals fall to a minimum at iteration 2, then rise for good.
  const std::vector<double> noise{1e-2, 1e-4, 1e-9, 1e-6, 1e-3, 1e-2};
  std::vector<Iterate> its;
  for (double e : noise) its.push_back(make_iterate(A, e));
  BestIterate<double> best(A.context(), A.local_rows(), k, 0);
  for (std::size_t i = 0; i < its.size(); ++i) record(best, i > 0 ? &its[i - 1] : nullptr, its[i], int(i));
  EXPECT_FALSE(best.stall());  // a rise of 1e7, but not yet for a window

  solver::LobpcgResult<double> result = result_of(its.back());
  dense::DenseBlock<double> workspace(A.context().space(), A.local_rows(), 4 * k);
  best.restore(A, nullptr, MPI_COMM_WORLD, options(1e-6), 4.0, workspace.view(), result);
  ASSERT_TRUE(result.restored);
  const Iterate& kept = its[2];
  for (int j = 0; j < k; ++j) {
    EXPECT_EQ(result.eigenvalues[j], kept.lambda[j]);
    // An explicit A x of the unit copy: the kept iterate's residual, to rounding.
    EXPECT_NEAR(result.residual_norms[j], kept.r_norm[j] / kept.x_norm[j], 1e-13) << "pair " << j;
    EXPECT_TRUE(result.converged[j]) << "pair " << j << ": " << result.relative_residuals[j];
    for (std::int64_t i = 0; i < A.local_rows(); ++i)
      EXPECT_NEAR(result.eigenvectors.cview()(i, j), kept.X.cview()(i, j) / kept.x_norm[j], 1e-15);
  }
}

TEST(BestIterate, KeepsNothingWhileResidualsFall) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  std::vector<Iterate> its;
  for (double e : {1e-1, 1e-3, 1e-5, 1e-7}) its.push_back(make_iterate(A, e));
  BestIterate<double> best(A.context(), A.local_rows(), k, 0);
  for (std::size_t i = 0; i < its.size(); ++i) record(best, i > 0 ? &its[i - 1] : nullptr, its[i], int(i));
  solver::LobpcgResult<double> result = result_of(its.back());
  const std::vector<double> before = result.residual_norms;
  dense::DenseBlock<double> workspace(A.context().space(), A.local_rows(), 4 * k);
  best.restore(A, nullptr, MPI_COMM_WORLD, options(1e-12), 4.0, workspace.view(), result);
  EXPECT_FALSE(result.restored);
  EXPECT_EQ(result.residual_norms, before);
}

TEST(BestIterate, DivergenceNeedsASustainedRise) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  const Iterate low = make_iterate(A, 1e-10), high = make_iterate(A, 1e-2);
  ASSERT_GT(mean_residual(high), divergence_growth * mean_residual(low));
  // A jump that falls back inside the window (a missed eigenvalue moving in) is not divergence.
  BestIterate<double> best(A.context(), A.local_rows(), k, 0);
  int iteration = 0;
  record(best, nullptr, low, iteration++);
  const Iterate* previous = &low;
  for (int i = 0; i < divergence_window - 1; ++i, previous = &high) record(best, previous, high, iteration++);
  EXPECT_FALSE(best.stall());
  record(best, previous, low, iteration++);
  previous = &low;
  for (int i = 0; i < divergence_window - 1; ++i, previous = &high) record(best, previous, high, iteration++);
  EXPECT_FALSE(best.stall());
  // One more iteration up there: the whole window above 1000 x the minimum.
  record(best, previous, high, iteration++);
  const auto d = best.stall();
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->diverged);
  EXPECT_DOUBLE_EQ(d->smallest, mean_residual(low));
  EXPECT_EQ(d->smallest_iteration, 0);
  EXPECT_DOUBLE_EQ(d->last, mean_residual(high));
}

TEST(BestIterate, StagnationAfterAWindowWithoutAFall) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  // Falls of 10% or more keep it going; a window of smaller ones does not.
  std::vector<Iterate> falling, flat;
  for (int i = 0; i < 5; ++i) falling.push_back(make_iterate(A, 1e-3 * std::pow(0.8, i)));
  for (int i = 0; i < 3; ++i) flat.push_back(make_iterate(A, 1e-3 * std::pow(0.8, 4) * (1 - 0.02 * i)));
  BestIterate<double> best(A.context(), A.local_rows(), k, 6);
  int iteration = 0;
  const Iterate* previous = nullptr;
  for (const Iterate& it : falling) {
    record(best, previous, it, iteration++);
    previous = &it;
    EXPECT_FALSE(best.stall()) << "iteration " << iteration - 1;
  }
  // The last fall was at iteration 4; the window of 6 ends at iteration 10.
  for (int i = 0; i < 5; ++i) {
    const Iterate& it = flat[i % flat.size()];
    record(best, previous, it, iteration++);
    previous = &it;
    EXPECT_FALSE(best.stall()) << "iteration " << iteration - 1;
  }
  record(best, previous, flat[0], iteration++);
  const auto s = best.stall();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->diverged);
  EXPECT_EQ(s->fallen_at, 4);
}

// The stop waits, beyond the window, for half the iterations before the last
// fall (stagnation_patience): slow runs progress in bursts between plateaus
// that grow with the run.
TEST(BestIterate, StagnationWaitsLongerLaterInTheRun) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  const Iterate first = make_iterate(A, 1e-3), fallen = make_iterate(A, 0.5e-3), flat = make_iterate(A, 0.5e-3 * 0.98);
  BestIterate<double> best(A.context(), A.local_rows(), k, 6);
  record(best, nullptr, first, 0);
  record(best, &first, fallen, 40);  // the last fall, at iteration 40: patience max(6, 20)
  const Iterate* previous = &fallen;
  for (int iteration = 41; iteration < 60; ++iteration) {
    record(best, previous, flat, iteration);
    previous = &flat;
    EXPECT_FALSE(best.stall()) << "iteration " << iteration;
  }
  record(best, previous, flat, 60);
  const auto s = best.stall();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->diverged);
  EXPECT_EQ(s->fallen_at, 40);
}

// End to end: diag(1e-9, 2, ..., 40) at relative 1e-6 asks pair 0 for less than fp64's floor
// (eps 40 / 1e-9 ~ 9e-6): LOBPCG warns early, stops when it stagnates, not at max_iterations, and says
// that the floor stopped it (below_floor, with that floor).
TEST(LobpcgGuard, StopsAStagnatingRun) {
  std::vector<double> d{1e-9};
  for (int i = 2; i <= 40; ++i) d.push_back(i);
  const CsrRows whole = test::diagonal_matrix(d);
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), whole,
                                  test::partition_with_empty_rank(40, size));
  solver::LobpcgOptions o = options(1e-6);
  o.max_iterations = 1000;
  o.stagnation_window = 100;
  // The floor warning comes once, early, on every rank alike: pair 0, with a
  // lower bound of its floor between the tolerance and the true floor.
  std::vector<solver::LobpcgProgress> warned;
  o.monitor = [&](const solver::LobpcgProgress& p) {
    if (!p.below_floor.empty()) warned.push_back(p);
  };
  const auto r = solver::lobpcg<double>(A, o);
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].below_floor, std::vector<int>{0});
  EXPECT_LT(warned[0].iteration, 30);
  EXPECT_GT(warned[0].floor, 1e-6);
  EXPECT_LE(warned[0].floor, 1.0001 * std::numeric_limits<double>::epsilon() * 40 / 1e-9);
  EXPECT_LE(warned[0].norm_estimate, 40.0);
  EXPECT_EQ(r.stop, solver::LobpcgStop::below_floor);
  EXPECT_EQ(r.below_floor, std::vector<int>{0});
  EXPECT_GT(r.floor, 1e-6);
  EXPECT_LE(r.floor, 1.0001 * std::numeric_limits<double>::epsilon() * 40 / 1e-9);
  ASSERT_TRUE(r.stall);
  EXPECT_FALSE(r.stall->diverged);
  EXPECT_LT(r.iterations, 300);
  EXPECT_GE(r.iterations - r.stall->fallen_at, 100);
  EXPECT_FALSE(r.converged[0]);
  for (int j = 1; j < k; ++j) EXPECT_TRUE(r.converged[j]) << "pair " << j;
}

// The default test bounds the eigenvalues' relative error, as SLEPc's does.
TEST(LobpcgDefaults, RelativeTest) { EXPECT_EQ(solver::LobpcgOptions{}.test, solver::StoppingTest::relative); }

// Which tests each returned pair meets, whichever was chosen: a pair of a
// small eigenvalue passes the backward test long before the relative one.
TEST(LobpcgDefaults, ResultSaysWhichTestsEachPairPasses) {
  const test::Laplacian1d L(n);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), L.whole, L.partition);
  solver::LobpcgOptions o = options(1e-3);
  o.test = solver::StoppingTest::backward;
  const auto r = solver::lobpcg<double>(A, o);
  ASSERT_TRUE(r.all_converged());
  ASSERT_EQ(r.passes_backward.size(), std::size_t(k));
  for (int j = 0; j < k; ++j) {
    EXPECT_TRUE(r.passes_backward[j]);
    EXPECT_EQ(r.passes_relative[j], r.residual_norms[j] <= 1e-3 * std::abs(r.eigenvalues[j])) << "pair " << j;
  }
  EXPECT_EQ(r.stop, solver::LobpcgStop::converged);
}

}  // namespace
}  // namespace blockeigs
