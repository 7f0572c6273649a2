// The small dense Hermitian kernels on the host: LAPACK's zheevd behind
// symmetric_eigen's contract (every value, the vectors of a range), the
// Cholesky inverse of a Hermitian positive definite matrix (and its refusal
// of one that is not), the complex small products, and the solvers the
// projected problems take on a host context.
#include <gtest/gtest.h>

#include <complex>

#include "dense/context.hpp"
#include "tests/support/complex_block_checks.hpp"

namespace blockeigs {
namespace {

using C = std::complex<double>;

TEST(HermitianDense, EigenpairsOfRandomMatrices) {
  for (const std::int64_t n : {1, 2, 7, 60, 250}) {
    SCOPED_TRACE(n);
    const solver::ComplexHostMatrix M = test::random_hermitian(n, 40 + n, -0.3);
    test::expect_hermitian_eigenpairs(M, solver::lapack_hermitian_eigen(M, 0, n), 0);
    const std::int64_t first = n / 3, count = n - first - n / 4;
    const solver::HermitianEigen part = solver::lapack_hermitian_eigen(M, first, count);
    test::expect_hermitian_eigenpairs(M, part, first);
    const auto host = solver::projected_eigen_solver<C>(dense::Context::host(), n);
    EXPECT_EQ(host(M, first, count).values, part.values);
  }
}

// Only the lower triangle is read; the diagonal's imaginary parts are not.
TEST(HermitianDense, EigenReadsTheLowerTriangle) {
  const solver::ComplexHostMatrix M = test::random_hermitian(9, 5, 0.0);
  solver::ComplexHostMatrix lower = M;
  for (std::int64_t i = 0; i < 9; ++i) {
    lower(i, i) += C(0, 3.0);
    for (std::int64_t j = i + 1; j < 9; ++j) lower(i, j) = C(99, -7);
  }
  EXPECT_EQ(solver::lapack_hermitian_eigen(lower, 0, 9).values, solver::lapack_hermitian_eigen(M, 0, 9).values);
  lower(4, 2) = C(NAN, 0);
  EXPECT_THROW(solver::lapack_hermitian_eigen(lower, 0, 9), Error);
}

TEST(HermitianDense, CholeskyInverse) {
  for (const std::int64_t n : {1, 5, 40, 300}) {
    SCOPED_TRACE(n);
    const solver::ComplexHostMatrix G = test::random_hermitian(n, 60 + n, 0.1);
    solver::ComplexHostMatrix inverse;
    ASSERT_TRUE(solver::lapack_cholesky_inverse(G, inverse));
    test::expect_cholesky_inverse(G, inverse);
    const auto host = solver::cholesky_inverse_solver<C>(dense::Context::host(), n);
    solver::ComplexHostMatrix again;
    ASSERT_TRUE(host(G, again));
    EXPECT_EQ(again.values(), inverse.values());
  }
  solver::ComplexHostMatrix indefinite = test::random_hermitian(6, 3, -10.0);
  solver::ComplexHostMatrix inverse;
  EXPECT_FALSE(solver::lapack_cholesky_inverse(indefinite, inverse));
}

TEST(HermitianDense, SmallProductsConjugate) {
  solver::ComplexHostMatrix A(2, 3), B(2, 2);
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) A(i, j) = C(double(i + 1), double(j) - 1);
    for (std::int64_t j = 0; j < 2; ++j) B(i, j) = C(double(j), double(i * j) + 0.5);
  }
  const solver::ComplexHostMatrix AhB = solver::transpose_times(A, B);
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t b = 0; b < 2; ++b)
      EXPECT_EQ(AhB(a, b), std::conj(A(0, a)) * B(0, b) + std::conj(A(1, a)) * B(1, b));
}

}  // namespace
}  // namespace blockeigs
