// LOBPCG's small dense problems (solver/lobpcg/lobpcg_detail.hpp): SVQB with
// column dropping, the well-conditioned transform, the search basis, padded
// P, Hetmaniuk-Lehoucq basis selection and the recompute interval, on Gram
// matrices of explicit small bases, where the right answers can be checked
// directly (the Rayleigh-Ritz step: test_rayleigh_ritz.cpp).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "tests/support/small_bases.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using solver::lobpcg_detail::Tolerances;
using namespace test::small_bases;

using test::random_matrix;

TEST(Svqb, OrthonormalisesAndDropsDependentColumns) {
  HostMatrix V = random_matrix(40, 6, 1);
  make_dependent(V, 4, 0, 1, 0.0);    // exactly dependent
  make_dependent(V, 5, 2, 3, 1e-14);  // dependent to rounding
  const HostMatrix T = solver::svqb_transform(tmul(V, V), tol);
  EXPECT_EQ(T.cols(), 4);
  const HostMatrix Q = mul(V, T);
  EXPECT_LE(max_abs_minus_identity(tmul(Q, Q)), 1e-10);
}

TEST(Svqb, KeepsIllConditionedButIndependentColumns) {
  HostMatrix V = random_matrix(40, 4, 2);
  make_dependent(V, 3, 0, 1, 1e-5);  // theta ~ 1e-10: above the drop threshold
  const HostMatrix T = solver::svqb_transform(tmul(V, V), tol);
  EXPECT_EQ(T.cols(), 4);
  // One pass leaves ~ eps * cond^2 = 1e-6 of non-orthogonality; a second pass fixes it.
  const HostMatrix Q1 = mul(V, T);
  const HostMatrix Q2 = mul(Q1, solver::svqb_transform(tmul(Q1, Q1), tol));
  EXPECT_LE(max_abs_minus_identity(tmul(Q2, Q2)), 1e-12);
}

TEST(Svqb, ZeroColumnsAndColumnsInsideSpanQAreDropped) {
  HostMatrix V = random_matrix(30, 3, 3);
  for (std::int64_t i = 0; i < 30; ++i) V(i, 1) = 0.0;
  EXPECT_EQ(solver::svqb_transform(tmul(V, V), tol).cols(), 2);
  // Column 2 kept only 1e-15 of its norm through a projection: numerically in span(Q).
  const HostMatrix G = tmul(V, V);
  std::vector<double> before{G(0, 0), 1.0, G(2, 2) * 1e30};
  EXPECT_EQ(solver::svqb_transform(G, tol, &before).cols(), 1);
}

// Bitwise equality of two transforms (the fallback must be SVQB's own result).
bool same_bits(const HostMatrix& A, const HostMatrix& B) {
  if (A.rows() != B.rows() || A.cols() != B.cols()) return false;
  for (std::int64_t e = 0; e < A.rows() * A.cols(); ++e)
    if (A.data()[e] != B.data()[e]) return false;
  return true;
}

TEST(WellConditionedTransform, CholeskyWhereTheGramIsWellConditioned) {
  // Columns of very different norms (as LOBPCG's residuals near convergence):
  // the unit-diagonal form is what must be well conditioned.
  HostMatrix V = random_matrix(40, 6, 4);
  for (std::int64_t i = 0; i < V.rows(); ++i)
    for (std::int64_t c = 0; c < V.cols(); ++c) V(i, c) *= std::pow(10.0, -3.0 * double(c));
  double ratio = 0;
  const HostMatrix T = solver::well_conditioned_transform(tmul(V, V), tol, nullptr, &ratio);
  ASSERT_EQ(T.cols(), 6);
  // The Cholesky path: T = D U^-1 is upper triangular, which SVQB's is not.
  for (std::int64_t i = 0; i < T.rows(); ++i)
    for (std::int64_t j = 0; j < i; ++j) EXPECT_EQ(T(i, j), 0.0) << i << "," << j;
  EXPECT_GE(ratio, tol.cholesky_rcond_min);
  EXPECT_LE(max_abs_minus_identity(tmul(mul(V, T), mul(V, T))), 1e-13);
  // Its span is V's: V T T^-1 = V, checked through T's triangular inverse by
  // projection, V - (V T)(V T)^T V = 0.
  const HostMatrix Q = mul(V, T);
  HostMatrix R = V;
  const HostMatrix QtV = tmul(Q, V), QQtV = mul(Q, QtV);
  for (std::int64_t e = 0; e < R.rows() * R.cols(); ++e) R.data()[e] -= QQtV.data()[e];
  for (std::int64_t c = 0; c < V.cols(); ++c) {
    double r = 0, v = 0;
    for (std::int64_t i = 0; i < V.rows(); ++i) r += R(i, c) * R(i, c), v += V(i, c) * V(i, c);
    EXPECT_LE(std::sqrt(r / v), 1e-13) << c;
  }
}

TEST(WellConditionedTransform, SvqbWhereAColumnIsDroppedOrTheGramIsIllConditioned) {
  auto expect_svqb = [](const HostMatrix& G, const std::vector<double>* before) {
    double ratio = -1, svqb_ratio = -2;
    const HostMatrix T = solver::well_conditioned_transform(G, tol, before, &ratio);
    const HostMatrix S = solver::svqb_transform(G, tol, before, &svqb_ratio);
    EXPECT_TRUE(same_bits(T, S));
    EXPECT_EQ(ratio, svqb_ratio);
  };
  HostMatrix V = random_matrix(40, 6, 1);
  make_dependent(V, 4, 0, 1, 0.0);  // exactly dependent: Cholesky fails or the estimate is ~eps
  expect_svqb(tmul(V, V), nullptr);
  HostMatrix W = random_matrix(40, 4, 2);
  make_dependent(W, 3, 0, 1, 1e-5);  // theta ~ 1e-10: independent, but below cholesky_rcond_min
  expect_svqb(tmul(W, W), nullptr);
  HostMatrix Z = random_matrix(30, 3, 3);
  const HostMatrix G = tmul(Z, Z);
  std::vector<double> before{G(0, 0), G(1, 1), G(2, 2) * 1e30};  // column 2 inside span(Q)
  expect_svqb(G, &before);
  for (std::int64_t i = 0; i < Z.rows(); ++i) Z(i, 1) = 0.0;  // a zero column
  expect_svqb(tmul(Z, Z), nullptr);
  // Exactly representable, well-conditioned but indefinite: no Cholesky factor.
  HostMatrix N(2, 2);
  N(0, 0) = N(1, 1) = 1.0;
  N(0, 1) = N(1, 0) = 2.0;
  expect_svqb(N, nullptr);
}

// A search block in coefficient form (W = Q from_q + Z from_z): the
// structured transforms against the dense T^T G T and T C, with T = [I
// from_q; 0 from_z] formed in full; raw > kept, as after dropping.
TEST(SearchBasis, TransformsMatchTheDenseProducts) {
  const std::int64_t q = 5, raw = 4, kept = 3, m = 6;
  const HostMatrix V = random_matrix(2 * (q + raw), q + raw, 11);
  const HostMatrix G = tmul(V, V), from_q = random_matrix(q, kept, 12), from_z = random_matrix(raw, kept, 13),
                   C = random_matrix(q + kept, m, 14);
  HostMatrix T(q + raw, q + kept);
  for (std::int64_t i = 0; i < q; ++i) T(i, i) = 1;
  for (std::int64_t j = 0; j < kept; ++j) {
    for (std::int64_t i = 0; i < q; ++i) T(i, q + j) = from_q(i, j);
    for (std::int64_t i = 0; i < raw; ++i) T(q + i, q + j) = from_z(i, j);
  }
  const HostMatrix dense_g = tmul(T, mul(G, T)), dense_c = mul(T, C);
  const HostMatrix g = solver::lobpcg_detail::in_search_basis(G, from_q, from_z);
  const HostMatrix c = solver::lobpcg_detail::to_raw_coefficients(C, from_q, from_z);
  ASSERT_EQ(g.rows(), q + kept);
  ASSERT_EQ(g.cols(), q + kept);
  ASSERT_EQ(c.rows(), q + raw);
  ASSERT_EQ(c.cols(), m);
  for (std::int64_t i = 0; i < q + kept; ++i)
    for (std::int64_t j = 0; j < q + kept; ++j) {
      EXPECT_NEAR(g(i, j), dense_g(i, j), 1e-13) << i << "," << j;
      EXPECT_EQ(g(i, j), g(j, i));
    }
  for (std::int64_t i = 0; i < q + raw; ++i)
    for (std::int64_t j = 0; j < m; ++j) EXPECT_NEAR(c(i, j), dense_c(i, j), 1e-13) << i << "," << j;
}

TEST(PaddedP, ZeroSpansDroppedAndInserted) {
  using solver::lobpcg_detail::round_up;
  using solver::lobpcg_detail::with_zero_rows;
  using solver::lobpcg_detail::without_span;
  const HostMatrix G = random_matrix(7, 7, 21);
  const HostMatrix dropped = without_span(G, 2, 3);  // rows and columns 0, 1, 5, 6
  const std::int64_t kept[] = {0, 1, 5, 6};
  ASSERT_EQ(dropped.rows(), 4);
  ASSERT_EQ(dropped.cols(), 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(dropped(i, j), G(kept[i], kept[j]));
  EXPECT_EQ(without_span(G, 7, 0).values(), G.values());
  const HostMatrix last = without_span(G, 5, 2);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(last(i, j), G(i, j));

  const HostMatrix C = random_matrix(5, 3, 22);
  const HostMatrix padded = with_zero_rows(C, 2, 2, 4);  // rows 2, 3 and column 3 zero
  ASSERT_EQ(padded.rows(), 7);
  ASSERT_EQ(padded.cols(), 4);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 4; ++j) {
      const bool zero = i == 2 || i == 3 || j == 3;
      EXPECT_EQ(padded(i, j), zero ? 0.0 : C(i < 2 ? i : i - 2, j)) << i << "," << j;
    }
  const HostMatrix at_end = with_zero_rows(C, 5, 1, 3);
  ASSERT_EQ(at_end.rows(), 6);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(at_end(5, j), 0.0);
  EXPECT_EQ(with_zero_rows(C, 0, 0, 3).values(), C.values());

  EXPECT_EQ(round_up(0, 4), 0);
  EXPECT_EQ(round_up(39, 4), 40);
  EXPECT_EQ(round_up(40, 4), 40);
  EXPECT_EQ(round_up(45, 1), 45);
}

TEST(BasisSelection, PIsOrthonormalOrthogonalToXAndSpansTheUpdate) {
  // An orthonormal basis S = [X P W] (via SVQB), its Ritz vectors, and P
  // selected for active columns 0 and 2 of the first three.
  HostMatrix S0 = random_matrix(30, 9, 9);
  const HostMatrix S = mul(S0, solver::svqb_transform(tmul(S0, S0), tol));
  ASSERT_EQ(S.cols(), 9);
  const Basis b = basis(S);
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  const HostMatrix Cx = r.vectors.block(0, 9, 0, 3);
  const std::vector<std::int64_t> active{0, 2};
  const HostMatrix Cp = solver::lobpcg_detail::basis_selection(Cx, b.GB, 3, active, tol);
  ASSERT_EQ(Cp.cols(), 2);
  EXPECT_LE(max_abs(tmul(Cx, mul(b.GB, Cp))), 1e-12);                 // P orthogonal to X_new
  EXPECT_LE(max_abs_minus_identity(tmul(Cp, mul(b.GB, Cp))), 1e-12);  // P orthonormal
  // span[Cx Cp] contains the non-X parts [0; C2] of the active Ritz vectors:
  // the residual of projecting them onto it vanishes.
  HostMatrix Q(9, 5);
  for (std::int64_t i = 0; i < 9; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) Q(i, j) = Cx(i, j);
    for (std::int64_t j = 0; j < 2; ++j) Q(i, 3 + j) = Cp(i, j);
  }
  for (std::int64_t c : active) {
    HostMatrix z(9, 1);
    for (std::int64_t i = 3; i < 9; ++i) z(i, 0) = Cx(i, c);
    const HostMatrix coeff = tmul(Q, mul(b.GB, z));
    const HostMatrix proj = mul(Q, coeff);
    for (std::int64_t i = 0; i < 9; ++i) EXPECT_NEAR(proj(i, 0), z(i, 0), 1e-12);
  }
  // No active columns: no P.
  EXPECT_EQ(solver::lobpcg_detail::basis_selection(Cx, b.GB, 3, {}, tol).cols(), 0);
}

// ---- when A X and A P are recomputed -----------------------------------------

// With the residuals in fp32: a recompute is due once u32 times the summed
// largest residuals since the last one reaches 5% of the smallest active
// residual; converged pairs' residuals do not count, and with none active
// nothing is due.
TEST(RecomputeInterval, Fp32ResidualsDriftFollowsTheSmallestActiveResidual) {
  using solver::lobpcg_detail::search_drift_due;
  const double u = std::ldexp(1.0, -24);
  const std::vector<double> r{1e-6, 1e-3, 1e-12};
  const std::vector<bool> conv{false, false, true};                               // the 1e-12 has converged
  const double due_at = solver::lobpcg_detail::search_drift_fraction * 1e-6 / u;  // ~0.84
  EXPECT_FALSE(search_drift_due(u, 0.99 * due_at, r, conv));
  EXPECT_TRUE(search_drift_due(u, 1.01 * due_at, r, conv));
  EXPECT_TRUE(search_drift_due(u, 1e-4, r, {false, false, false}));  // the 1e-12 active: due almost at once
  EXPECT_FALSE(search_drift_due(u, 1e6, r, {true, true, true}));
}

TEST(RecomputeInterval, FollowsTheSmallestDemandedResidual) {
  using solver::StoppingTest;
  using solver::lobpcg_detail::automatic_recompute_interval;
  using solver::lobpcg_detail::max_recompute_interval;
  using solver::lobpcg_detail::min_recompute_interval;
  const double eps = std::numeric_limits<double>::epsilon();
  const std::vector<double> unit(3, 1.0);
  // The 128^3 LOBPCG comparison: relative 1e-5 on eigenvalues near 1.8e-3 of an operator
  // of norm 12: drift 10 eps * 12 per step may run for ~6700 steps, capped.
  const std::vector<double> laplacian{1.78e-3, 3.6e-3, 5.3e-3};
  EXPECT_EQ(automatic_recompute_interval(eps, 12, 1e-5, StoppingTest::relative, laplacian, unit, 3),
            max_recompute_interval);
  // Tight tolerances fall back to the old fixed interval.
  EXPECT_EQ(automatic_recompute_interval(eps, 12, 1e-12, StoppingTest::backward, laplacian, unit, 3),
            min_recompute_interval);
  // In between, the interval is the step count at which 10 eps ||A|| per step
  // reaches 1% of the smallest demanded residual: here pair 0's, guard 2 not
  // counted (k = 2), 0.01 * 1e-9 * 1e-3 / (10 eps * 1e-3) = 4503.
  const std::vector<double> values{1e-3, 0.5, 1e-20};
  EXPECT_EQ(automatic_recompute_interval(eps, 1e-3, 1e-9, StoppingTest::relative, values, unit, 2),
            max_recompute_interval);
  const int mid = automatic_recompute_interval(eps, 1.0, 1e-11, StoppingTest::relative, {1.0}, {1.0}, 1);
  EXPECT_EQ(mid, static_cast<int>(std::floor(0.01 * 1e-11 / (10 * eps))));  // 45
  // A zero eigenvalue under the relative test demands r = 0: refresh as often as allowed.
  EXPECT_EQ(automatic_recompute_interval(eps, 12, 1e-5, StoppingTest::relative, {0.0}, {1.0}, 1),
            min_recompute_interval);
  // Nothing known about ||A|| yet (norm estimate 0): the safe end.
  EXPECT_EQ(automatic_recompute_interval(eps, 0, 1e-5, StoppingTest::backward, {0.0}, {1.0}, 1),
            min_recompute_interval);
  // With B the columns are B-orthonormal and x_norm is ||B x||: drift and
  // demand scale alike, so ||B x|| = 1e-3 gives the interval of ||x|| = 1
  // (the fem_p1 pencil on 128^3 has ||B x|| ~ 7e-4, and was refreshed every
  // 20 steps when only the demand scaled).
  const std::vector<double> small_bx(3, 1e-3);
  EXPECT_EQ(automatic_recompute_interval(eps, 1.0, 1e-11, StoppingTest::relative, {1.0}, {1e-3}, 1), mid);
  EXPECT_EQ(automatic_recompute_interval(eps, 12, 1e-5, StoppingTest::relative, laplacian, small_bx, 3),
            max_recompute_interval);
  // Single precision drifts 2^29 times faster.
  EXPECT_EQ(automatic_recompute_interval(std::numeric_limits<float>::epsilon(), 12, 1e-5, StoppingTest::relative,
                                         laplacian, unit, 3),
            min_recompute_interval);
}

}  // namespace
}  // namespace blockeigs
