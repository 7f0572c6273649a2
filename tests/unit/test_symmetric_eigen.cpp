// The small dense symmetric eigensolver (solver/blocks/symmetric_eigen.hpp): spectra
// built in with a random orthogonal basis, closed forms, repeated and
// clustered eigenvalues, both ends of the spectrum, extreme scales, inputs
// that are already tridiagonal, and sizes 0 to 3. Tolerances are multiples of
// n eps ||M||, what a backward-stable method guarantees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/symmetric_eigen.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using solver::symmetric_eigen;
using solver::SymmetricEigen;

// A random orthogonal n x n matrix: a product of n Householder reflectors.
HostMatrix random_orthogonal(std::int64_t n, std::uint64_t seed) {
  HostMatrix Q = HostMatrix::identity(n);
  const HostMatrix V = test::random_matrix(n, n, seed);
  for (std::int64_t k = 0; k < n; ++k) {
    double vv = 0;
    for (std::int64_t i = 0; i < n; ++i) vv += V(i, k) * V(i, k);
    for (std::int64_t r = 0; r < n; ++r) {  // Q := Q (I - 2 v v^T / v^T v)
      double qv = 0;
      for (std::int64_t i = 0; i < n; ++i) qv += Q(r, i) * V(i, k);
      for (std::int64_t i = 0; i < n; ++i) Q(r, i) -= 2 * qv / vv * V(i, k);
    }
  }
  return Q;
}

// Q diag(values) Q^T.
HostMatrix with_spectrum(const std::vector<double>& values, std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(values.size());
  const HostMatrix Q = random_orthogonal(n, seed);
  HostMatrix M(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < n; ++k) M(i, j) += Q(i, k) * values[k] * Q(j, k);
  return M;
}

double norm_estimate(const HostMatrix& M) {  // max row sum: >= ||M||_2
  double m = 0;
  for (std::int64_t i = 0; i < M.rows(); ++i) {
    double s = 0;
    for (std::int64_t j = 0; j < M.cols(); ++j) s += std::abs(M(i, j));
    m = std::max(m, s);
  }
  return m;
}

// Residuals |M v - lambda v| and |V^T V - I| within c n eps ||M|| (and c n eps).
void expect_eigenpairs(const HostMatrix& M, const SymmetricEigen& e, std::int64_t first, double c = 20) {
  const std::int64_t n = M.rows(), count = e.vectors.cols();
  ASSERT_EQ(static_cast<std::int64_t>(e.values.size()), n);
  ASSERT_EQ(e.vectors.rows(), n);
  for (std::int64_t i = 1; i < n; ++i) EXPECT_LE(e.values[i - 1], e.values[i]);
  const double scale = std::max(norm_estimate(M), DBL_MIN);
  const double tol = c * double(std::max<std::int64_t>(n, 1)) * DBL_EPSILON;
  for (std::int64_t a = 0; a < count; ++a) {
    for (std::int64_t i = 0; i < n; ++i) {
      double mv = 0;
      for (std::int64_t j = 0; j < n; ++j) mv += M(i, j) * e.vectors(j, a);
      EXPECT_LE(std::abs(mv - e.values[first + a] * e.vectors(i, a)), tol * scale) << "pair " << first + a;
    }
    for (std::int64_t b = 0; b < count; ++b) {
      double vv = 0;
      for (std::int64_t i = 0; i < n; ++i) vv += e.vectors(i, a) * e.vectors(i, b);
      EXPECT_NEAR(vv, a == b ? 1.0 : 0.0, tol) << "columns " << a << ", " << b;
    }
  }
}

void expect_values(const SymmetricEigen& e, std::vector<double> expected, double scale, double c = 20) {
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(e.values.size(), expected.size());
  const double tol = c * double(expected.size()) * DBL_EPSILON * scale;
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(e.values[i], expected[i], tol) << "eigenvalue " << i;
}

TEST(SymmetricEigen, BuiltInSpectrumAtLobpcgSizes) {
  for (const std::int64_t n : {4, 17, 33, 60, 97}) {
    std::vector<double> values(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) values[i] = -3.0 + 7.0 * solver::hash_uniform(5, i, n) + 0.01 * double(i);
    const HostMatrix M = with_spectrum(values, std::uint64_t(n));
    const std::int64_t count = std::min<std::int64_t>(n, 20);
    const SymmetricEigen low = symmetric_eigen(M, 0, count);
    expect_values(low, values, 10.0);
    expect_eigenpairs(M, low, 0);
    const SymmetricEigen high = symmetric_eigen(M, n - count, count);
    expect_eigenpairs(M, high, n - count);
    const SymmetricEigen all = symmetric_eigen(M, 0, n);
    expect_eigenpairs(M, all, 0);
  }
}

// LOBPCG's projected problems for a 3D Laplacian: wanted eigenvalues in
// clusters of exact multiplicity (1, 3, 3, 3, 1, 6, ...) ~1e-3 apart, the
// rest spread to 12.
TEST(SymmetricEigen, RepeatedAndClusteredEigenvalues) {
  const double unit = 5.93e-4;
  const int cluster[] = {3, 6, 6, 6, 9, 9, 9, 11, 11, 11, 12, 14, 14, 14, 14, 14, 14, 17, 17, 17};
  std::vector<double> values;
  for (int c : cluster) values.push_back(c * unit);
  for (int i = 0; i < 40; ++i) values.push_back(0.05 + 12.0 * i / 39.0);
  values.push_back(14 * unit * (1 + 1e-12));  // a near-double to the 6-fold cluster
  const HostMatrix M = with_spectrum(values, 3);
  const SymmetricEigen e = symmetric_eigen(M, 0, 21);
  expect_values(e, values, 12.0);
  expect_eigenpairs(M, e, 0);
}

TEST(SymmetricEigen, IdentityAndZeroMatrices) {
  const HostMatrix I = HostMatrix::identity(25);
  const SymmetricEigen e = symmetric_eigen(I, 0, 25);
  expect_values(e, std::vector<double>(25, 1.0), 1.0);
  expect_eigenpairs(I, e, 0);
  const HostMatrix Z(13, 13);
  const SymmetricEigen z = symmetric_eigen(Z, 3, 5);
  expect_values(z, std::vector<double>(13, 0.0), 1.0);
  expect_eigenpairs(Z, z, 3);
}

// Already tridiagonal (no reflection needed): the 1D Laplacian, 2 - 2 cos(k pi / (n + 1)).
TEST(SymmetricEigen, TridiagonalInputHasTheClosedFormSpectrum) {
  const std::int64_t n = 50;
  HostMatrix L(n, n);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < n; ++i) {
    L(i, i) = 2;
    if (i + 1 < n) L(i, i + 1) = L(i + 1, i) = -1;
    expected.push_back(2 - 2 * std::cos(double(i + 1) * std::numbers::pi / double(n + 1)));
  }
  const SymmetricEigen e = symmetric_eigen(L, 0, 10);
  expect_values(e, expected, 4.0);
  expect_eigenpairs(L, e, 0);
}

TEST(SymmetricEigen, DiagonalInputKeepsItsEntries) {
  const std::vector<double> values{4, -1, 2.5, -1, 0, 7};
  HostMatrix D(6, 6);
  for (std::int64_t i = 0; i < 6; ++i) D(i, i) = values[i];
  const SymmetricEigen e = symmetric_eigen(D, 0, 6);
  expect_values(e, values, 7.0, 1);
  expect_eigenpairs(D, e, 0, 1);
}

TEST(SymmetricEigen, ExtremeScales) {
  for (const double scale : {1e-200, 1e-30, 1e30, 1e200}) {
    std::vector<double> values;
    for (int i = 0; i < 30; ++i) values.push_back(scale * (1 + i % 7) * (i % 2 ? -1 : 1));
    const HostMatrix M = with_spectrum(values, 9);
    const SymmetricEigen e = symmetric_eigen(M, 0, 30);
    expect_values(e, values, 7 * scale);
    expect_eigenpairs(M, e, 0);
  }
}

// A block at a tiny scale beside one at scale ~1 (block diagonal, so that T
// splits exactly): in the tiny block QL's squared bulge leaves the range
// its fast steps need, and the textbook steps take over. Its pairs must be
// accurate at its own scale, not just at ||M||'s. 2^-280 stays in the fast
// steps' range, 2^-320 and 1e-200 do not.
TEST(SymmetricEigen, TinyBlockBesideALargeOne) {
  for (const double tiny : {0x1p-280, 0x1p-320, 1e-200}) {
    const std::int64_t na = 11, nb = 9, n = na + nb;
    std::vector<double> large, small;
    for (std::int64_t i = 0; i < na; ++i) large.push_back((1 + 0.2 * double(i)) * (i % 2 ? -1 : 1));
    for (std::int64_t i = 0; i < nb; ++i) small.push_back(tiny * (1 + 0.25 * double(i)) * (i % 3 ? 1 : -1));
    const HostMatrix A = with_spectrum(large, 1), B = with_spectrum(small, 2);
    HostMatrix M(n, n);
    for (std::int64_t i = 0; i < na; ++i)
      for (std::int64_t j = 0; j < na; ++j) M(i, j) = A(i, j);
    for (std::int64_t i = 0; i < nb; ++i)
      for (std::int64_t j = 0; j < nb; ++j) M(na + i, na + j) = B(i, j);
    const SymmetricEigen e = symmetric_eigen(M, 0, n);
    std::vector<double> all = large;
    all.insert(all.end(), small.begin(), small.end());
    expect_values(e, all, 3.0);
    expect_eigenpairs(M, e, 0);
    // The tiny block's pairs at its own scale.
    const double tol = 20 * double(n) * DBL_EPSILON;
    std::vector<double> found;
    for (std::int64_t c = 0; c < n; ++c) {
      if (std::abs(e.values[c]) > 1e-3) continue;
      found.push_back(e.values[c]);
      for (std::int64_t i = 0; i < n; ++i) {
        double mv = 0;
        for (std::int64_t j = 0; j < n; ++j) mv += M(i, j) * e.vectors(j, c);
        EXPECT_LE(std::abs(mv - e.values[c] * e.vectors(i, c)), tol * 3 * tiny) << "scale " << tiny << ", pair " << c;
      }
    }
    std::sort(small.begin(), small.end());
    ASSERT_EQ(found.size(), small.size()) << "scale " << tiny;
    for (std::size_t i = 0; i < small.size(); ++i)
      EXPECT_NEAR(found[i], small[i], tol * 3 * tiny) << "scale " << tiny << ", eigenvalue " << i;
  }
}

// Graded: tiny entries at the top of T, ~1 at the bottom, coupled just
// above the split test's threshold. QL's sweeps chase the bulge from the
// bottom up, so it becomes tiny half way: the textbook steps take over in
// the middle of a sweep.
TEST(SymmetricEigen, GradedTridiagonalHandsOverMidSweep) {
  const std::int64_t n = 14;
  HostMatrix T(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    const double scale = i < 6 ? 1e-200 : 1.0;
    T(i, i) = scale * (2.0 + std::sin(double(i)));
    if (i + 1 < n) T(i, i + 1) = T(i + 1, i) = i == 5 ? 1e-14 : scale * (0.5 + 0.1 * double(i % 3));
  }
  const SymmetricEigen e = symmetric_eigen(T, 0, n);
  expect_eigenpairs(T, e, 0);
  const SymmetricEigen low = symmetric_eigen(T, 2, 5);
  expect_eigenpairs(T, low, 2);
}

// The vectors are formed in blocks of columns (up to 24, then 20, 16, ..., 4
// and single ones): every count gives the same columns.
TEST(SymmetricEigen, VectorsDoNotDependOnHowManyAreAsked) {
  const std::int64_t n = 37;
  std::vector<double> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(std::sin(double(i)) + 0.05 * double(i));
  const HostMatrix M = with_spectrum(values, 17);
  const SymmetricEigen all = symmetric_eigen(M, 0, n);
  expect_eigenpairs(M, all, 0);
  for (std::int64_t first : {0, 5})
    for (std::int64_t count = 0; first + count <= n; ++count) {
      const SymmetricEigen some = symmetric_eigen(M, first, count);
      ASSERT_EQ(some.vectors.cols(), count);
      for (std::int64_t c = 0; c < count; ++c)
        for (std::int64_t i = 0; i < n; ++i)
          EXPECT_NEAR(some.vectors(i, c), all.vectors(i, first + c), double(n) * DBL_EPSILON)
              << "count " << count << ", first " << first << ", column " << c;
    }
}

TEST(SymmetricEigen, SmallSizes) {
  const SymmetricEigen empty = symmetric_eigen(HostMatrix(0, 0), 0, 0);
  EXPECT_TRUE(empty.values.empty());
  HostMatrix one(1, 1);
  one(0, 0) = -3.5;
  const SymmetricEigen e1 = symmetric_eigen(one, 0, 1);
  EXPECT_EQ(e1.values[0], -3.5);
  EXPECT_EQ(std::abs(e1.vectors(0, 0)), 1.0);
  HostMatrix two(2, 2);
  two(0, 0) = 2, two(1, 1) = 2, two(0, 1) = two(1, 0) = 1;  // eigenvalues 1 and 3
  const SymmetricEigen e2 = symmetric_eigen(two, 1, 1);
  expect_values(e2, {1, 3}, 3);
  expect_eigenpairs(two, e2, 1);
  const HostMatrix three = with_spectrum({1, -2, 1}, 4);
  const SymmetricEigen e3 = symmetric_eigen(three, 0, 3);
  expect_values(e3, {1, -2, 1}, 2);
  expect_eigenpairs(three, e3, 0);
}

TEST(SymmetricEigen, ReadsOnlyTheLowerTriangle) {
  const HostMatrix M = with_spectrum({1, 2, 3, 4, 5, 6, 7, 8}, 12);
  HostMatrix lower = M;
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t j = i + 1; j < 8; ++j) lower(i, j) = std::nan("");
  const SymmetricEigen e = symmetric_eigen(lower, 2, 4);
  expect_values(e, {1, 2, 3, 4, 5, 6, 7, 8}, 8);
  expect_eigenpairs(M, e, 2);
}

TEST(SymmetricEigen, SameBitsTwice) {
  const HostMatrix M = test::random_matrix(40, 40, 21);
  HostMatrix S(40, 40);
  for (std::int64_t i = 0; i < 40; ++i)
    for (std::int64_t j = 0; j < 40; ++j) S(i, j) = M(i, j) + M(j, i);
  const SymmetricEigen a = symmetric_eigen(S, 0, 20), b = symmetric_eigen(S, 0, 20);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.vectors.values(), b.vectors.values());
  expect_eigenpairs(S, a, 0);
}

TEST(SymmetricEigen, NonFiniteEntryIsAnError) {
  HostMatrix M = HostMatrix::identity(5);
  M(3, 1) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(symmetric_eigen(M, 0, 5), Error);
}

}  // namespace
}  // namespace blockeigs
