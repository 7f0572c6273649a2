// LOBPCG's small dense problems (solver/lobpcg/lobpcg_detail.hpp): SVQB with
// column dropping, the Rayleigh-Ritz step at each restart level, and
// Hetmaniuk-Lehoucq basis selection, on Gram matrices of explicit small
// bases, where the right answers can be checked directly.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using solver::lobpcg_detail::Tolerances;

const Tolerances tol = Tolerances::for_type<double>();

using test::random_matrix;

HostMatrix mul(const HostMatrix& A, const HostMatrix& B) {
  HostMatrix C(A.rows(), B.cols());
  for (std::int64_t i = 0; i < A.rows(); ++i)
    for (std::int64_t l = 0; l < A.cols(); ++l)
      for (std::int64_t j = 0; j < B.cols(); ++j) C(i, j) += A(i, l) * B(l, j);
  return C;
}

HostMatrix tmul(const HostMatrix& A, const HostMatrix& B) {  // A^T B
  HostMatrix C(A.cols(), B.cols());
  for (std::int64_t l = 0; l < A.rows(); ++l)
    for (std::int64_t i = 0; i < A.cols(); ++i)
      for (std::int64_t j = 0; j < B.cols(); ++j) C(i, j) += A(l, i) * B(l, j);
  return C;
}

// Column c of V replaced by a combination of others (plus `noise` times fresh values).
void make_dependent(HostMatrix& V, std::int64_t c, std::int64_t a, std::int64_t b, double noise) {
  for (std::int64_t i = 0; i < V.rows(); ++i)
    V(i, c) = 2 * V(i, a) - 0.5 * V(i, b) + noise * solver::hash_uniform(77, i, c);
}

// A symmetric "operator" on R^rows: diag(1..rows) plus a small symmetric coupling.
HostMatrix small_operator(std::int64_t rows) {
  HostMatrix A(rows, rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    A(i, i) = 1.0 + double(i);
    if (i + 1 < rows) A(i, i + 1) = A(i + 1, i) = 0.3;
  }
  return A;
}

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

// A basis S = [X P W] of R^rows and its Gram matrices.
struct Basis {
  HostMatrix S, GA, GB;
};

Basis basis(HostMatrix S) {
  const HostMatrix A = small_operator(S.rows());
  return {S, tmul(S, mul(A, S)), tmul(S, S)};
}

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
