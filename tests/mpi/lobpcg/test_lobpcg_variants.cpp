// LOBPCG's variants that must solve the same problem, at np 1-4: the
// Rayleigh-Ritz matrices carried or measured, A X implied or stored,
// residuals in fp32, a padded P, the automatic recompute interval, soft
// locking, and fp32 blocks throughout. Every eigenpair is re-checked with
// plain loops over the whole matrix (csr_test_operator.hpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/base/collective.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lobpcg_problems.hpp"

namespace blockeigs {
namespace {

using solver::LobpcgOptions;
using solver::LobpcgResult;
using solver::SpectrumEnd;
using solver::StoppingTest;
using test::is_input_error;
using namespace test::lobpcg_problems;

// Two solves of one problem that differ only in how the Rayleigh-Ritz matrices
// or A X and A P are obtained: about as many iterations, and the same
// eigenvalues to far below the tolerance.
void expect_same_pairs(const Problem& p, const Solved& a, const Solved& b, int k) {
  EXPECT_NEAR(a.result.iterations, b.result.iterations, 0.1 * b.result.iterations);
  for (int j = 0; j < k; ++j) EXPECT_NEAR(a.result.eigenvalues[j], b.result.eigenvalues[j], 1e-12 * p.exact[j]) << j;
}

// The 20 smallest pairs of the 12^3 Laplacian, solved with the default
// options and again with another recompute_interval; both checked against
// the closed form to `accuracy`.
struct TwoSolves {
  Problem p;
  Solved first, second;
};
TwoSolves solve_twice(double tolerance, int second_interval, double accuracy) {
  TwoSolves s{laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12), {}, {}};
  LobpcgOptions o = options_for(20, SpectrumEnd::smallest, tolerance);
  s.first = run(s.p, o);
  o.tuning.recompute_interval = second_interval;
  s.second = run(s.p, o);
  expect_solved(s.p, s.first, o, accuracy);
  expect_solved(s.p, s.second, o, accuracy);
  return s;
}

// Rayleigh-Ritz from carried [X P] blocks and W's derived Gram rows, against
// the same solve with A X and A P recomputed every iteration (which drops the
// carried blocks, so every step measures both Gram matrices in full): the
// same eigenvalues, to far below the tolerance, in about as many iterations.
TEST(Lobpcg, CarriedRayleighRitzMatchesMeasured) {
  const TwoSolves s = solve_twice(1e-8, 1, 1e-10);
  const Solved &carried = s.first, &measured = s.second;
  EXPECT_EQ(measured.result.stats.carried_steps, 1);  // the first, which follows the start's own step
  // Every step but the start's and those after a refresh (at most every 20th).
  EXPECT_GE(carried.result.stats.carried_steps, carried.result.iterations * 9 / 10 - 1);
  EXPECT_LE(carried.result.stats.carried_steps, carried.result.iterations);
  // W in coefficient form (no pass forming it) wherever the fused
  // orthogonalisation ran: here every step.
  EXPECT_EQ(carried.result.stats.implicit_search_steps, carried.result.iterations);
  expect_same_pairs(s.p, carried, measured, 20);
}

// A X implied by X Lambda and the last residuals (the device's default
// without a preconditioner, forced here) against A X stored: the same pairs
// in about as many iterations. The 20 pairs lock at different steps, so soft
// locking reorders the residuals that the implied A X still needs; a wrong
// order or a lost residual would show in the true residuals expect_solved
// recomputes. With a preconditioner, which writes W over the residuals, A X
// stays stored (and A Z is not multiplied ahead: Z is not the residuals).
TEST(Lobpcg, ImpliedAXMatchesStored) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  LobpcgOptions o = options_for(20, SpectrumEnd::smallest, 1e-8);
  o.tuning.imply_ax = solver::ImplyAX::always;
  const Solved implied = run(p, o);
  o.tuning.imply_ax = solver::ImplyAX::never;
  const Solved stored = run(p, o);
  expect_solved(p, implied, o, 1e-10);
  expect_solved(p, stored, o, 1e-10);
  expect_same_pairs(p, implied, stored, 20);
  EXPECT_EQ(stored.result.stats.implied_ax_steps, 0);
  // Every step but the first and those after a refresh (at most every 20th).
  EXPECT_GE(implied.result.stats.implied_ax_steps, implied.result.iterations * 9 / 10 - 1);
  EXPECT_EQ(implied.result.stats.ax_recomputes, 0);  // nothing else read the implied A X
  // A Z multiplied ahead of the convergence test on most steps, in both
  // forms (not after a refresh, or where a locked pair came back): when a
  // pair locks, A Z's columns move with Z's. How many steps that is moves by a
  // step or two with the rounding of the Gram matrices (BLAS's thread count).
  for (const Solved* r : {&implied, &stored}) {
    EXPECT_GE(r->result.stats.z_products_ahead, r->result.iterations * 2 / 3);
    EXPECT_LE(r->result.stats.z_products_ahead, r->result.iterations);
  }
  o.tuning.imply_ax = solver::ImplyAX::always;
  const Solved preconditioned = run(p, o, Precond::jacobi);
  expect_solved(p, preconditioned, o, 1e-10);
  EXPECT_EQ(preconditioned.result.stats.implied_ax_steps, 0);
  EXPECT_EQ(preconditioned.result.stats.z_products_ahead, 0);
}

// The residual block in fp32 beside fp64 blocks (search_precision), through
// the conversions the host takes: the same pairs as in fp64, to the same
// accuracy, in about as many iterations, with A X implied (the device's
// form, where Z's rounding also enters A X) and stored; soft locking moves
// the fp32 residuals as it moves the fp64 ones. On the host `auto` keeps
// fp64.
TEST(Lobpcg, ResidualsInFp32MatchFp64) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  LobpcgOptions o = options_for(20, SpectrumEnd::smallest, 1e-8);
  o.tuning.imply_ax = solver::ImplyAX::always;
  const Solved automatic = run(p, o);
  EXPECT_FALSE(automatic.result.stats.search_in_fp32);
  o.search_precision = solver::SearchPrecision::fp64;
  const Solved fp64 = run(p, o);
  EXPECT_EQ(fp64.result.eigenvalues, automatic.result.eigenvalues);
  o.search_precision = solver::SearchPrecision::fp32;
  for (solver::ImplyAX form : {solver::ImplyAX::always, solver::ImplyAX::never}) {
    o.tuning.imply_ax = form;
    const Solved fp32 = run(p, o);
    EXPECT_TRUE(fp32.result.stats.search_in_fp32);
    expect_solved(p, fp32, o, 1e-10);
    expect_same_pairs(p, fp32, fp64, 20);
    EXPECT_LE(fp32.result.iterations, fp64.result.iterations + std::max(5, fp64.result.iterations / 10))
        << "fp64 took " << fp64.result.iterations;
    EXPECT_GE(fp32.result.stats.implicit_search_steps, fp32.result.iterations * 3 / 4);
  }
}

// A harder spectrum for fp32 residuals: the 2D Laplacian's smallest pairs
// at kappa_eff = ||A|| / lambda_1 ~ 1e3 and a tight relative tolerance,
// where the implied A X's drift from Z's rounding is largest against the
// residuals the test asks for; and a clustered diagonal, largest end.
TEST(Lobpcg, ResidualsInFp32OnHarderSpectra) {
  const Problem laplace = laplacian(io::GeneratorKind::laplacian_2d, 40, 30);
  LobpcgOptions o = options_for(8, SpectrumEnd::smallest, 1e-9);
  o.tuning.imply_ax = solver::ImplyAX::always;
  o.search_precision = solver::SearchPrecision::fp64;
  const Solved fp64 = run(laplace, o);
  o.search_precision = solver::SearchPrecision::fp32;
  const Solved fp32 = run(laplace, o);
  expect_solved(laplace, fp32, o, 1e-10);
  expect_same_pairs(laplace, fp32, fp64, 8);
  EXPECT_LE(fp32.result.iterations, fp64.result.iterations + std::max(5, fp64.result.iterations / 10))
      << "fp64 took " << fp64.result.iterations;

  std::vector<double> d;
  for (int i = 0; i < 300; ++i) d.push_back(1.0 + 0.01 * i);
  for (int i = 0; i < 6; ++i) d.push_back(10.0 + 1e-7 * i);  // a tight cluster at the top
  const Problem clustered = diagonal(d);
  LobpcgOptions c = options_for(6, SpectrumEnd::largest, 1e-8);
  c.search_precision = solver::SearchPrecision::fp32;
  const Solved top = run(clustered, c);
  EXPECT_TRUE(top.result.stats.search_in_fp32);
  expect_solved(clustered, top, c, 1e-12);
}

// fp32 residuals where W must be formed (the explicit passes, from Z's fp64
// copy, rounded back) or refilled at random: bases as wide as tiny
// matrices, and a tolerance below the rounding floor, where the solver must
// stop rather than spin.
TEST(Lobpcg, ResidualsInFp32WhereTheBasisRunsOut) {
  int formed = 0;  // steps whose W was formed rather than kept as coefficients
  for (const int n : {8, 12}) {
    std::vector<double> d;
    for (int i = 0; i < n; ++i) d.push_back(1.0 + double((i * 5) % n));
    const Problem p = diagonal(d);
    for (const int k : {1, n / 2}) {
      for (const auto which : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
        SCOPED_TRACE(testing::Message() << "n " << n << ", k " << k);
        LobpcgOptions o = options_for(k, which, 1e-10, StoppingTest::backward);
        o.search_precision = solver::SearchPrecision::fp32;
        o.tuning.imply_ax = solver::ImplyAX::always;
        const Solved r = run(p, o, Precond::none, Split::empty_rank);
        EXPECT_TRUE(r.result.stats.search_in_fp32);
        expect_solved(p, r, o, 1e-12);
        formed += r.result.iterations - r.result.stats.implicit_search_steps;
        // A W formed but left unrounded in Z's block (the raw residuals
        // instead) would still converge, but through restarts: fp64 needs none.
        o.search_precision = solver::SearchPrecision::fp64;
        const Solved r64 = run(p, o, Precond::none, Split::empty_rank);
        EXPECT_EQ(r.result.stats.restarts, r64.result.stats.restarts);
        EXPECT_LE(r.result.iterations, r64.result.iterations + 3);
      }
    }
  }
  EXPECT_GT(formed, 0);
  const Problem p = diagonal({1.0, 2.0, 3.0, 5.0});
  LobpcgOptions o = options_for(3, SpectrumEnd::smallest, 1e-30, StoppingTest::backward);
  o.block_size = 4;
  o.search_precision = solver::SearchPrecision::fp32;
  const Solved r = run(p, o);
  EXPECT_FALSE(r.result.all_converged());
  EXPECT_LT(r.result.iterations, 5);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(r.result.eigenvalues[j], p.exact[j], 1e-14 * p.exact[j]);
}

// P padded with zero columns to multiples of 4 and 8 columns (the device's
// default at fp64 is 4), against no padding: the zero columns add exact
// zeros to every product and the small problems skip them, so the same pairs
// in about as many iterations. Soft locking leaves P and Z every width, and
// the block of 25 is a multiple of neither. Every operator apply but the
// start block's and the final A X's (nb columns) covers whole multiples of
// the alignment: A Z widened past the active residuals, and, with A X and
// A P recomputed every step, [X P] with its padding.
TEST(Lobpcg, PaddedPSolvesTheSameProblem) {
  // Rank 0 keeps the padding's books, the others follow the broadcast
  // coefficients: two ranks cover both; more only oversubscribe CI's cores.
  if (world_size() > 2) GTEST_SKIP() << "run at np 1 and 2";
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  LobpcgOptions o = options_for(20, SpectrumEnd::smallest, 1e-8);
  const Solved plain = run(p, o);
  expect_solved(p, plain, o, 1e-10);
  const std::int64_t nb = plain.result.block_size;
  ASSERT_EQ(nb, 25);
  for (int align : {4, 8}) {
    o.tuning.column_alignment = align;
    o.tuning.recompute_interval = 0;
    const Solved padded = run(p, o);
    expect_solved(p, padded, o, 1e-10);
    expect_same_pairs(p, padded, plain, 20);
    o.tuning.recompute_interval = 1;
    const Solved refreshed = run(p, o);
    expect_solved(p, refreshed, o, 1e-10);
    int xp_applies = 0;
    for (const Solved* r : {&padded, &refreshed})
      for (std::int64_t w : r->widths) {
        EXPECT_TRUE(w == nb || w % align == 0) << "an apply of " << w << " columns at alignment " << align;
        if (r == &refreshed && w > 2 * nb - 4) ++xp_applies;  // [X P] with P at least 21 of 25
      }
    EXPECT_GE(xp_applies, 10);
  }
}

// The automatic recompute interval against the fixed 20 of earlier versions:
// at a loose tolerance it refreshes A X and A P far less often for the same
// eigenvalues in about as many iterations; at a tight one it keeps the floor.
TEST(Lobpcg, AutomaticRecomputeIntervalFollowsTheTolerance) {
  const TwoSolves s = solve_twice(1e-6, 20, 1e-8);
  const Problem& p = s.p;
  const Solved &automatic = s.first, &fixed = s.second;
  EXPECT_EQ(fixed.result.stats.recomputes, fixed.result.iterations / 20);
  EXPECT_LE(automatic.result.stats.recomputes, automatic.result.iterations / 100);
  expect_same_pairs(p, automatic, fixed, 20);
  // Relative 1e-10 on eigenvalues near 0.17 of a norm-12 operator: 0.01 * 1e-10
  // * 0.17 / (10 eps * 12) ~ 6.5 < 20, so every 20th step refreshes.
  const LobpcgOptions tight = options_for(4, SpectrumEnd::smallest, 1e-10);
  const Solved strict = run(p, tight);
  expect_solved(p, strict, tight, 1e-12);
  EXPECT_EQ(strict.result.stats.recomputes, strict.result.iterations / 20);
}

// ---- soft locking -------------------------------------------------------------

TEST(Lobpcg, SoftLockingSavesOperatorWork) {
  // Well separated smallest eigenvalues converge one after another. A locked
  // column gets no new W: the operator's W applies narrow below the block
  // size, and the pairs converge at different iterations.
  std::vector<double> d;
  for (int i = 0; i < 200; ++i) d.push_back(i < 4 ? 0.01 * (i + 1) * (i + 1) : 1.0 + i);
  const Problem p = diagonal(d);
  const LobpcgOptions o = options_for(4, SpectrumEnd::smallest, 1e-9, StoppingTest::backward);
  const Solved r = run(p, o);
  expect_solved(p, r, o, 1e-8);
  const std::int64_t nb = r.result.block_size;
  // First the backward test's norm estimate: one-column products, left out below.
  const auto estimate = static_cast<std::size_t>(solver::lobpcg_detail::norm_estimate_steps);
  ASSERT_GT(r.widths.size(), estimate);
  for (std::size_t i = 0; i < estimate; ++i) EXPECT_EQ(r.widths[i], 1);
  std::int64_t narrow = 0, total = 0;
  for (std::size_t i = estimate; i < r.widths.size(); ++i) {
    const std::int64_t w = r.widths[i];
    EXPECT_LE(w, 2 * nb);  // never wider than [X P]
    narrow += w < nb ? 1 : 0;
    total += w;
  }
  EXPECT_GT(narrow, 0);
  // Without locking: nb per iteration, plus the start and the [X P] refreshes.
  const std::int64_t refreshes = r.result.stats.recomputes + 1;
  EXPECT_LT(total, nb * (r.result.iterations + 1) + 2 * nb * refreshes - nb);
  const auto& h = r.result.history;
  auto converged_at = [&](int j) {
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i].residual_norms[j] <= o.tolerance * (200 + h[i].eigenvalues[j])) return int(i);
    return -1;
  };
  EXPECT_LT(converged_at(0), r.result.iterations);
}

TEST(Lobpcg, FloatBlocks) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_2d, 12, 12);
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  test::CsrTestOperator<float> A(MPI_COMM_WORLD, dense::Context::host(), p.whole, partition);
  LobpcgOptions o = options_for(3, SpectrumEnd::smallest, 1e-4, StoppingTest::backward);
  const auto result = solver::lobpcg<float>(A, o);
  EXPECT_TRUE(result.all_converged());
  // Backward error 1e-4 * ||A|| (8) and a gap of ~0.1: eigenvalue error <~ 1e-5 absolute.
  for (int j = 0; j < o.k; ++j) EXPECT_NEAR(result.eigenvalues[j], p.exact[j], 2e-4 * p.exact[j] + 1e-5);
}

}  // namespace
}  // namespace blockeigs
