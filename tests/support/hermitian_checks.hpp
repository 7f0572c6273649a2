// Checks of the small Hermitian solvers (eigenpairs and the Cholesky
// inverse), shared by the host tests and the device ones: random Hermitian
// matrices with a spread spectrum, residuals and orthonormality within
// multiples of n eps ||M||.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::test {

// B^H B / n + shift I for a random B with entries in the unit square: Hermitian, positive definite for shift > 0.
inline solver::ComplexHostMatrix random_hermitian(std::int64_t n, std::uint64_t seed, double shift) {
  solver::ComplexHostMatrix B(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) B(i, j) = solver::random_entry<std::complex<double>>(seed, i, j);
  solver::ComplexHostMatrix M = solver::transpose_times(B, B);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) M(i, j) /= double(n);
    M(i, i) = M(i, i).real() + shift;
  }
  return M;
}

// M V(:, c) = values[first + c] V(:, c), V^H V = I, values ascending.
inline void expect_hermitian_eigenpairs(const solver::ComplexHostMatrix& M, const solver::HermitianEigen& e,
                                        std::int64_t first) {
  const std::int64_t n = M.rows(), count = e.vectors.cols();
  ASSERT_EQ(static_cast<std::int64_t>(e.values.size()), n);
  ASSERT_TRUE(std::is_sorted(e.values.begin(), e.values.end()));
  double norm = 0;
  for (const auto& v : M.values()) norm = std::max(norm, std::abs(v));
  const double tol = 64 * double(n) * std::numeric_limits<double>::epsilon() * (norm * double(n) + 1);
  const solver::ComplexHostMatrix MV = solver::multiply(M, e.vectors);
  const solver::ComplexHostMatrix VV = solver::transpose_times(e.vectors, e.vectors);
  for (std::int64_t c = 0; c < count; ++c) {
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::abs(MV(i, c) - e.values[first + c] * e.vectors(i, c)), tol) << "pair " << first + c;
    for (std::int64_t d = 0; d < count; ++d)
      ASSERT_LE(std::abs(VV(c, d) - (c == d ? 1.0 : 0.0)), tol) << "V^H V (" << c << ", " << d << ")";
  }
}

// inverse = U^-1 for G = U^H U: U^-H G U^-1 = I, the strictly lower part zero.
inline void expect_cholesky_inverse(const solver::ComplexHostMatrix& G, const solver::ComplexHostMatrix& inverse) {
  const std::int64_t n = G.rows();
  const solver::ComplexHostMatrix GU = solver::multiply(G, inverse);
  const solver::ComplexHostMatrix I = solver::transpose_times(inverse, GU);
  const double tol = 1e3 * double(n) * std::numeric_limits<double>::epsilon();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      ASSERT_LE(std::abs(I(i, j) - (i == j ? 1.0 : 0.0)), tol) << "U^-H G U^-1 (" << i << ", " << j << ")";
      if (j < i) ASSERT_EQ(inverse(i, j), std::complex<double>(0)) << "lower part (" << i << ", " << j << ")";
    }
}

}  // namespace blockeigs::test
