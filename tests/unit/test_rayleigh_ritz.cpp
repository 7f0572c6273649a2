// LOBPCG's Rayleigh-Ritz step (solver/lobpcg/lobpcg_detail.hpp) at each
// restart level, on Gram matrices of explicit small bases: which columns it
// keeps, the accuracy of its pairs against the Gram matrix's condition,
// extreme scales, and its errors. The same levels, the largest end and basis
// selection on complex bases (Hermitian Gram matrices), against the
// generalised eigenproblem's definition.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "tests/support/small_bases.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using solver::lobpcg_detail::Tolerances;
using namespace test::small_bases;

using test::random_matrix;

// GB-orthonormal Ritz vectors whose residuals are orthogonal to the basis
// columns used (rows outside [skip_begin, skip_end): a dropped P is not).
void expect_ritz_pairs(const Basis& b, const solver::lobpcg_detail::RitzPairs& r, std::int64_t skip_begin = 0,
                       std::int64_t skip_end = 0) {
  const HostMatrix& C = r.vectors;
  EXPECT_LE(max_abs_minus_identity(tmul(C, mul(b.GB, C))), 1e-10);
  const HostMatrix AC = mul(b.GA, C), BC = mul(b.GB, C);
  for (std::int64_t j = 0; j < C.cols(); ++j)
    for (std::int64_t i = 0; i < C.rows(); ++i) {
      if (i >= skip_begin && i < skip_end) continue;
      EXPECT_NEAR(AC(i, j), r.values[j] * BC(i, j), 1e-10 * (1 + std::abs(r.values[j])));
    }
  for (std::size_t j = 1; j < r.values.size(); ++j) EXPECT_LE(r.values[j - 1], r.values[j]);
}

TEST(RayleighRitz, WholeBasisWhenWellConditioned) {
  const Basis b = basis(random_matrix(30, 9, 4));  // X: 0-2, P: 3-5, W: 6-8
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  EXPECT_EQ(r.level, 0);
  EXPECT_EQ(r.values.size(), 9u);
  expect_ritz_pairs(b, r);
}

TEST(RayleighRitz, LargestEndComesLargestFirst) {
  const Basis b = basis(random_matrix(30, 9, 4));
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 4, tol, solver::SpectrumEnd::largest);
  ASSERT_EQ(r.values.size(), 9u);
  ASSERT_EQ(r.vectors.cols(), 4);
  // Column c is the pair of values[8 - c]: GA c = theta GB c, GB-orthonormal.
  const HostMatrix AC = mul(b.GA, r.vectors), BC = mul(b.GB, r.vectors);
  for (std::int64_t c = 0; c < 4; ++c)
    for (std::int64_t i = 0; i < 9; ++i)
      EXPECT_NEAR(AC(i, c), r.values[8 - c] * BC(i, c), 1e-10 * (1 + std::abs(r.values[8 - c])));
  EXPECT_LE(max_abs_minus_identity(tmul(r.vectors, BC)), 1e-10);
}

TEST(RayleighRitz, DropsPWhenTheGramMatrixIsIllConditioned) {
  HostMatrix S = random_matrix(30, 9, 5);
  make_dependent(S, 4, 0, 7, 1e-12);  // a P column nearly in span[X W]
  const Basis b = basis(S);
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.values.size(), 6u);
  expect_ritz_pairs(b, r, 3, 6);
  for (std::int64_t i = 3; i < 6; ++i)
    for (std::int64_t j = 0; j < r.vectors.cols(); ++j) EXPECT_EQ(r.vectors(i, j), 0.0);  // no P
}

TEST(RayleighRitz, TruncatesWhenXAndWAreDependentToo) {
  HostMatrix S = random_matrix(30, 9, 6);
  make_dependent(S, 4, 0, 7, 0.0);    // P dependent
  make_dependent(S, 8, 1, 2, 1e-15);  // and a W column inside span X
  const Basis b = basis(S);
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  EXPECT_EQ(r.level, 2);
  EXPECT_EQ(r.values.size(), 5u);
  expect_ritz_pairs(b, r, 3, 6);
  // Ritz values of a subspace interlace with A's: the smallest is >= lambda_min(A).
  EXPECT_GE(r.values[0], 1.0 - 0.6);
}

// A caller's eigensolver (LOBPCG's device one for large blocks) solves the
// standard problems of every level: here symmetric_eigen with every vector's
// sign flipped, as another solver may return them. The pairs stay correct.
TEST(RayleighRitz, SolvesItsEigenproblemsWhereAsked) {
  int calls = 0;
  const solver::SymmetricEigenSolver flipped = [&](const HostMatrix& M, std::int64_t first, std::int64_t count) {
    ++calls;
    solver::SymmetricEigen e = solver::symmetric_eigen(M, first, count);
    for (double& v : e.vectors.values()) v = -v;
    return e;
  };
  HostMatrix dependent_p = random_matrix(30, 9, 5), dependent_w = random_matrix(30, 9, 6);
  make_dependent(dependent_p, 4, 0, 7, 1e-12);
  make_dependent(dependent_w, 4, 0, 7, 0.0);
  make_dependent(dependent_w, 8, 1, 2, 1e-15);
  int level = 0;
  for (const HostMatrix& S : {random_matrix(30, 9, 4), dependent_p, dependent_w}) {
    SCOPED_TRACE(testing::Message() << "level " << level);
    const Basis b = basis(S);
    calls = 0;
    const auto r =
        solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol, solver::SpectrumEnd::smallest, &flipped);
    EXPECT_EQ(r.level, level);
    EXPECT_GE(calls, 1);
    expect_ritz_pairs(b, r, level > 0 ? 3 : 0, level > 0 ? 6 : 0);
    ++level;
  }
}

// The generalised pairs at working accuracy, for a basis whose Gram matrix
// has condition ~kappa: residuals against ||GA|| + |theta| ||GB||, and
// C^T GB C = I, within c ns eps (times kappa where the Cholesky factor's
// own error is amplified); rows [skip_begin, skip_end) of a dropped P are
// not checked.
void expect_accurate_pairs(const Basis& b, const solver::lobpcg_detail::RitzPairs& r, double kappa,
                           std::int64_t skip_begin = 0, std::int64_t skip_end = 0) {
  const std::int64_t ns = b.GA.rows();
  const double unit = 50 * double(ns) * DBL_EPSILON;
  const HostMatrix& C = r.vectors;
  EXPECT_LE(max_abs_minus_identity(tmul(C, mul(b.GB, C))), unit * kappa);
  const HostMatrix AC = mul(b.GA, C), BC = mul(b.GB, C);
  const double norm_a = max_abs(b.GA) * double(ns), norm_b = max_abs(b.GB) * double(ns);
  for (std::int64_t j = 0; j < C.cols(); ++j) {
    double c_norm = 0;
    for (std::int64_t i = 0; i < ns; ++i) c_norm = std::max(c_norm, std::abs(C(i, j)));
    for (std::int64_t i = 0; i < ns; ++i) {
      if (i >= skip_begin && i < skip_end) continue;
      EXPECT_LE(std::abs(AC(i, j) - r.values[j] * BC(i, j)),
                unit * kappa * (norm_a + std::abs(r.values[j]) * norm_b) * c_norm)
          << "pair " << j << ", row " << i;
    }
  }
}

// LOBPCG's shape (X, P and W of 20 columns each: the triangular solves' and
// the vectors' column blocks of 24, 20 and 12): the Cholesky path against
// the definition.
TEST(RayleighRitz, AccuratePairsAtLobpcgSizes) {
  for (const std::int64_t nb : {1, 2, 3, 7, 20}) {
    const Basis b = basis(random_matrix(4 * nb + 5, 3 * nb, 20 + std::uint64_t(nb)));
    const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, nb, 2 * nb, nb, tol);
    EXPECT_EQ(r.level, 0) << "nb " << nb;
    ASSERT_EQ(r.vectors.cols(), nb);
    expect_accurate_pairs(b, r, 1.0);
  }
}

// Whether P is dropped follows the Gram matrix's condition: one P column of
// an orthonormal basis scaled so that GB ~ diag(1, ..., 1 / kappa, ...),
// whose condition the estimate finds exactly. Below 1 / rcond_min =
// 1 / sqrt(eps) ~ 6.7e7 the whole basis is used, above it not; 3e7 and 1.5e8
// are close enough to tell an estimate off by 3x.
TEST(RayleighRitz, LevelFollowsTheGramMatrixsCondition) {
  HostMatrix S0 = random_matrix(40, 9, 31);
  const HostMatrix Q = mul(S0, solver::svqb_transform(tmul(S0, S0), tol));
  for (const double kappa : {1e2, 3e7, 1.5e8, 1e12}) {
    HostMatrix S = Q;
    for (std::int64_t i = 0; i < S.rows(); ++i) S(i, 4) *= 1 / std::sqrt(kappa);  // a P column
    const Basis b = basis(S);
    const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
    EXPECT_EQ(r.level, kappa * tol.rcond_min < 1 ? 0 : 1) << "kappa " << kappa;
    if (r.level == 0)
      expect_accurate_pairs(b, r, kappa);
    else
      expect_accurate_pairs(b, r, 1.0, 3, 6);
  }
}

// An orthonormal basis of LOBPCG's shape (X, P and W of 20 columns) whose
// Gram matrix is perturbed by E, symmetric, entries +-`size`.
Basis orthonormal_basis_with_gram_error(double size) {
  HostMatrix S0 = random_matrix(100, 60, 41);
  const HostMatrix Q = mul(S0, solver::svqb_transform(tmul(S0, S0), tol));
  Basis b = basis(Q);
  for (std::int64_t i = 0; i < 60; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const double e = (solver::hash_uniform(43, i, j) < 0.5 ? -size : size);
      b.GB(i, j) = (i == j ? 1.0 : 0.0) + e;
      b.GB(j, i) = b.GB(i, j);
    }
  return b;
}

TEST(RayleighRitz, IdentityGramBoundsEveryEntry) {
  const double t = tol.identity_gram / 5;  // the bound on an entry at 5 x 5
  EXPECT_GT(t, 0);
  HostMatrix G = HostMatrix::identity(5);
  EXPECT_TRUE(solver::lobpcg_detail::is_identity_gram(G, tol));
  G(1, 3) = G(3, 1) = 0.9 * t;
  G(2, 2) = 1 - 0.9 * t;
  EXPECT_TRUE(solver::lobpcg_detail::is_identity_gram(G, tol));
  G(4, 4) = 1 + 1.1 * t;
  EXPECT_FALSE(solver::lobpcg_detail::is_identity_gram(G, tol));
  G = HostMatrix::identity(5);
  G(0, 1) = NAN;
  EXPECT_FALSE(solver::lobpcg_detail::is_identity_gram(G, tol));
  EXPECT_FALSE(solver::lobpcg_detail::is_identity_gram(HostMatrix(3, 4), tol));
}

// Either side of the bound the pairs are the generalised ones at working
// accuracy: to first order in GB - I within it (where the neglected terms
// are below rounding), by the factorisation past it. Far past it (1e-4),
// first order would be ~1e-6 off: what the bound keeps out.
TEST(RayleighRitz, GramNearIdentityGivesAccuratePairs) {
  const double bound = tol.identity_gram / 60;  // on an entry at 60 x 60
  for (const double size : {0.0, 0.01 * bound, 0.9 * bound, 2 * bound, 1e-8, 1e-4}) {
    const Basis b = orthonormal_basis_with_gram_error(size);
    const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 20, 40, 20, tol);
    EXPECT_EQ(r.level, 0) << "size " << size;
    ASSERT_EQ(r.vectors.cols(), 20) << "size " << size;
    SCOPED_TRACE(testing::Message() << "size " << size);
    expect_accurate_pairs(b, r, 1.0);
  }
}

TEST(RayleighRitz, OneTwoAndThreeColumns) {
  for (const std::int64_t ns : {1, 2, 3}) {
    const Basis b = basis(random_matrix(6, ns, 40 + std::uint64_t(ns)));
    const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 1, ns > 1 ? 2 : 1, 1, tol);
    EXPECT_EQ(r.level, 0);
    ASSERT_EQ(r.values.size(), std::size_t(ns));
    expect_accurate_pairs(b, r, 1.0);
  }
}

// Gram matrices far from 1 in scale (their ratio is what the pairs depend
// on): exact powers of two, so the scaled problems have the same pairs.
TEST(RayleighRitz, ExtremeScales) {
  const Basis b = basis(random_matrix(30, 9, 50));
  const auto reference = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  for (const int exponent : {-300, -100, 100, 300}) {
    Basis scaled = b;
    for (double& v : scaled.GA.values()) v = std::ldexp(v, exponent);
    for (double& v : scaled.GB.values()) v = std::ldexp(v, -exponent / 2);
    const auto r = solver::lobpcg_detail::rayleigh_ritz(scaled.GA, scaled.GB, 3, 6, 3, tol);
    EXPECT_EQ(r.level, 0) << "2^" << exponent;
    ASSERT_EQ(r.values.size(), reference.values.size());
    for (std::size_t j = 0; j < r.values.size(); ++j)
      EXPECT_NEAR(std::ldexp(r.values[j], -exponent - exponent / 2), reference.values[j],
                  50 * 9 * DBL_EPSILON * std::abs(reference.values.back()))
          << "2^" << exponent << ", value " << j;
    expect_accurate_pairs(scaled, r, 1.0);
  }
}

TEST(RayleighRitz, TooFewDirectionsIsAnError) {
  HostMatrix S = random_matrix(30, 4, 7);
  make_dependent(S, 1, 0, 2, 0.0);
  make_dependent(S, 3, 0, 2, 0.0);
  const Basis b = basis(S);
  EXPECT_THROW(solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 4, 4, 3, tol), Error);
}

TEST(RayleighRitz, NonFiniteInputIsAnError) {
  Basis b = basis(random_matrix(30, 3, 8));
  b.GA(1, 1) = std::nan("");
  EXPECT_THROW(solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 3, 3, tol), Error);
  Basis c = basis(random_matrix(30, 3, 8));
  c.GB(2, 0) = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(solver::lobpcg_detail::rayleigh_ritz(c.GA, c.GB, 3, 3, 3, tol), Error);
}

// ---- Hermitian problems: complex bases S, GA = S^H H S and GB = S^H S ----------

using Complex = std::complex<double>;
using solver::ComplexHostMatrix;

ComplexHostMatrix complex_random(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  ComplexHostMatrix M(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) M(i, j) = solver::random_entry<Complex>(seed, i, j);
  return M;
}

// A Hermitian "operator": diag(1..rows) plus a complex coupling of neighbours.
ComplexHostMatrix hermitian_operator(std::int64_t rows) {
  ComplexHostMatrix H(rows, rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    H(i, i) = 1.0 + double(i);
    if (i + 1 < rows) H(i + 1, i) = std::conj(H(i, i + 1) = Complex(0.2, 0.25));
  }
  return H;
}

struct ComplexBasis {
  ComplexHostMatrix GA, GB;
};

ComplexBasis complex_basis(const ComplexHostMatrix& S) {
  return {solver::transpose_times(S, solver::multiply(hermitian_operator(S.rows()), S)), solver::transpose_times(S, S)};
}

// Column c of V made 2 V(:, a) - 0.5 V(:, b) plus `noise` times fresh values.
void make_dependent(ComplexHostMatrix& V, std::int64_t c, std::int64_t a, std::int64_t b, double noise) {
  for (std::int64_t i = 0; i < V.rows(); ++i)
    V(i, c) = 2.0 * V(i, a) - 0.5 * V(i, b) + noise * solver::random_entry<Complex>(78, i, c);
}

// C^H GB C = I and GA c_j = theta GB c_j on the rows kept (outside [skip_begin, skip_end)); `values_of(c)` is
// column c's value.
void expect_hermitian_pairs(const ComplexBasis& b, const solver::lobpcg_detail::RitzPairsOf<Complex>& r,
                            bool largest = false, std::int64_t skip_begin = 0, std::int64_t skip_end = 0) {
  const ComplexHostMatrix& C = r.vectors;
  const ComplexHostMatrix AC = solver::multiply(b.GA, C), BC = solver::multiply(b.GB, C);
  EXPECT_LE(solver::max_abs_minus_identity(solver::transpose_times(C, BC)), 1e-10);
  const auto m = static_cast<std::int64_t>(r.values.size());
  for (std::int64_t j = 0; j < C.cols(); ++j) {
    const double theta = r.values[largest ? m - 1 - j : j];
    for (std::int64_t i = 0; i < C.rows(); ++i)
      if (i < skip_begin || i >= skip_end)
        EXPECT_LE(std::abs(AC(i, j) - theta * BC(i, j)), 1e-10 * (1 + std::abs(theta))) << i << ", " << j;
  }
  for (std::int64_t j = 1; j < m; ++j) EXPECT_LE(r.values[j - 1], r.values[j]);
}

TEST(RayleighRitzHermitian, EveryLevelAndBothEnds) {
  const ComplexHostMatrix S = complex_random(30, 9, 4);  // X: 0-2, P: 3-5, W: 6-8
  const ComplexBasis b = complex_basis(S);
  const auto whole = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  EXPECT_EQ(whole.level, 0);
  expect_hermitian_pairs(b, whole);
  const auto top = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 4, tol, solver::SpectrumEnd::largest);
  ASSERT_EQ(top.vectors.cols(), 4);
  expect_hermitian_pairs(b, top, true);

  ComplexHostMatrix P_dependent = S;
  make_dependent(P_dependent, 4, 0, 7, 1e-12);
  const ComplexBasis b1 = complex_basis(P_dependent);
  const auto dropped = solver::lobpcg_detail::rayleigh_ritz(b1.GA, b1.GB, 3, 6, 3, tol);
  EXPECT_EQ(dropped.level, 1);
  EXPECT_EQ(dropped.values.size(), 6u);
  expect_hermitian_pairs(b1, dropped, false, 3, 6);

  make_dependent(P_dependent, 8, 1, 2, 1e-15);  // and a W column inside span X
  const ComplexBasis b2 = complex_basis(P_dependent);
  const auto truncated = solver::lobpcg_detail::rayleigh_ritz(b2.GA, b2.GB, 3, 6, 3, tol);
  EXPECT_EQ(truncated.level, 2);
  EXPECT_EQ(truncated.values.size(), 5u);
  expect_hermitian_pairs(b2, truncated, false, 3, 6);
}

// GB within rounding of I takes the first-order path; its pairs are the Cholesky path's.
TEST(RayleighRitzHermitian, GramNearIdentity) {
  ComplexHostMatrix S = complex_random(30, 7, 5);
  const ComplexHostMatrix T = solver::svqb_transform(solver::transpose_times(S, S), tol);
  S = solver::multiply(S, T);  // orthonormal columns
  const ComplexBasis b = complex_basis(S);
  ASSERT_TRUE(solver::lobpcg_detail::is_identity_gram(b.GB, tol));
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 2, 4, 3, tol);
  EXPECT_EQ(r.level, 0);
  expect_hermitian_pairs(b, r);
}

// P from the active Ritz vectors: GB-orthonormal and GB-orthogonal to the new X.
TEST(RayleighRitzHermitian, BasisSelection) {
  const ComplexBasis b = complex_basis(complex_random(30, 9, 6));
  const auto r = solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 6, 3, tol);
  const std::vector<std::int64_t> active{0, 2};
  const ComplexHostMatrix P = solver::lobpcg_detail::basis_selection(r.vectors, b.GB, 3, active, tol);
  ASSERT_EQ(P.cols(), 2);
  const ComplexHostMatrix BP = solver::multiply(b.GB, P);
  EXPECT_LE(solver::max_abs_minus_identity(solver::transpose_times(P, BP)), 1e-10);
  EXPECT_LE(solver::max_abs(solver::transpose_times(r.vectors, BP)), 1e-10);
}

TEST(RayleighRitzHermitian, NonFiniteInputIsAnError) {
  ComplexBasis b = complex_basis(complex_random(30, 3, 8));
  b.GA(1, 0) = Complex(0, std::nan(""));
  EXPECT_THROW(solver::lobpcg_detail::rayleigh_ritz(b.GA, b.GB, 3, 3, 3, tol), Error);
}

}  // namespace
}  // namespace blockeigs
