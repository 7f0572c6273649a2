// Block CG and the rank-revealing orthonormalisation on complex blocks at np
// 1-4 (a rank without rows from np 2): the twisted (Bloch) Laplacian, Hermitian
// positive definite, with several right-hand sides (one of them zero) in
// complex double and complex single, unpreconditioned, with Jacobi and with a
// Chebyshev polynomial, each solution re-checked by plain loops over the whole
// matrix; an indefinite Hermitian matrix refused; and
// condition_basis / orthonormalize_against on complex blocks with a dependent
// column, the result checked in the Hermitian inner product.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/generators/twisted_laplacian.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "tests/support/complex_block_checks.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/distributed_fixtures.hpp"

namespace blockeigs {
namespace {

using C = std::complex<double>;

const io::TwistedLaplacian kGrid{9, 8, 7, {0.7, -1.1, 2.3}};  // smallest eigenvalue ~0.02: positive definite

// The operator on this rank's rows of `whole` (shifted by `shift` on the diagonal), on the host.
struct Problem {
  std::int64_t n = kGrid.nx * kGrid.ny * kGrid.nz;
  ComplexCsrRows whole = io::twisted_laplacian_rows(kGrid, 0, n);
  solver::RowPartition partition = test::partition_with_empty_rank(n, test::mpi_size());
  dense::Context context = dense::Context::host();

  explicit Problem(double shift = 0) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        if (whole.col_indices[p] == i) whole.values[p] += shift;
  }
  template <class T>
  solver::DistributedOperator<T> op() const {
    const int rank = test::mpi_rank();
    return solver::DistributedOperator<T>(MPI_COMM_WORLD, context,
                                          slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t first() const { return partition.begin(test::mpi_rank()); }
  std::int64_t rows() const { return partition.rows(test::mpi_rank()); }
};

// Column j of the right-hand sides at global row i: a smooth complex wave, column 2 zero.
C rhs_entry(std::int64_t i, std::int64_t j) {
  if (j == 2) return 0;
  return std::polar(1.0 + 0.1 * double(j), 0.37 * double(i * (j + 1))) + C(0.01 * double(i % 7), 0);
}

// Solves and re-checks; returns the iterations. `preconditioner`: none, jacobi or chebyshev.
template <class T>
int expect_solved(double rtol, PreconditionerKind preconditioner = PreconditionerKind::none,
                  ChebyshevPrecision precision = ChebyshevPrecision::automatic) {
  const Problem p;
  solver::DistributedOperator<T> A = p.op<T>();
  std::unique_ptr<solver::Preconditioner<T>> M;
  if (preconditioner == PreconditionerKind::jacobi) M = std::make_unique<solver::JacobiPreconditioner<T>>(A);
  if (preconditioner == PreconditionerKind::chebyshev) {
    solver::ChebyshevOptions c;
    c.degree = 6;
    c.eigensolver = false;
    c.precision = precision;
    M = std::make_unique<solver::ChebyshevPreconditioner<T>>(A, c);
  }
  const std::int64_t s = 4, m = p.rows();
  dense::DenseBlock<T> B(Space::host, m, s), X(Space::host, m, s);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < s; ++j) {
      const C b = rhs_entry(p.first() + i, j);
      B.data()[i * s + j] = T(typename T::value_type(b.real()), typename T::value_type(b.imag()));
      X.data()[i * s + j] = T(0);
    }
  solver::BlockCgOptions o;
  o.rtol = rtol;
  o.max_iterations = 500;
  const solver::BlockCgResult r = solver::block_cg<T>(A, B.cview(), X.view(), o, M.get());
  EXPECT_TRUE(r.all_converged()) << "stop " << solver::to_string(r.stop) << " after " << r.total_iterations;
  const std::vector<C> x = test::gathered_rows<T>(X.cview());
  for (std::int64_t j = 0; j < s; ++j) {
    double residual = 0, norm_b = 0;
    for (std::int64_t i = 0; i < p.n; ++i) {
      C y = rhs_entry(i, j);
      norm_b += std::norm(y);
      for (std::int64_t q = p.whole.row_offsets[i]; q < p.whole.row_offsets[i + 1]; ++q)
        y -= p.whole.values[q] * x[p.whole.col_indices[q] * s + j];
      residual += std::norm(y);
    }
    const double eps = std::numeric_limits<real_t<T>>::epsilon();
    EXPECT_LE(std::sqrt(residual), 2 * rtol * std::sqrt(norm_b) + 1e3 * eps) << "column " << j;
    EXPECT_NEAR(r.true_residual_norms[j], std::sqrt(residual), 1e3 * eps * (1 + std::sqrt(norm_b))) << "column " << j;
    if (j == 2) {
      EXPECT_EQ(r.iterations[j], 0);  // b = 0: x = 0 at once
    }
  }
  return r.total_iterations;
}

TEST(BlockCgComplex, BlochLaplacianSeveralRightHandSides) { expect_solved<C>(1e-10); }

TEST(BlockCgComplex, BlochLaplacianComplexSingle) { expect_solved<std::complex<float>>(1e-4); }

// Jacobi (the Bloch Laplacian's diagonal is constant: the iteration is unchanged but for rounding) and a
// Chebyshev polynomial of the Hermitian operator (real coefficients), which needs fewer iterations.
TEST(BlockCgComplex, BlochLaplacianPreconditioned) {
  const int plain = expect_solved<C>(1e-10);
  EXPECT_NEAR(expect_solved<C>(1e-10, PreconditionerKind::jacobi), plain, 2);
  EXPECT_LT(expect_solved<C>(1e-10, PreconditionerKind::chebyshev), plain / 2);
  // The polynomial in complex fp32 over the operator's complex fp32 copy.
  EXPECT_LT(expect_solved<C>(1e-10, PreconditionerKind::chebyshev, ChebyshevPrecision::fp32), plain / 2);
  EXPECT_LT(expect_solved<std::complex<float>>(1e-4, PreconditionerKind::chebyshev), plain);
}

TEST(BlockCgComplex, IndefiniteHermitianMatrixRefused) {
  const Problem p(-1.0);  // A - I: eigenvalues from about -1 to 11
  solver::DistributedOperator<C> A = p.op<C>();
  const std::int64_t m = p.rows();
  dense::DenseBlock<C> B(Space::host, m, 2), X(Space::host, m, 2);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < 2; ++j) {
      B.data()[i * 2 + j] = rhs_entry(p.first() + i, j);
      X.data()[i * 2 + j] = 0;
    }
  solver::BlockCgOptions o;
  o.max_iterations = 300;
  std::string message;
  try {
    (void)solver::block_cg<C>(A, B.cview(), X.view(), o);
  } catch (const std::exception& e) {  // agreed on by every rank (fail_input_everywhere)
    message = e.what();
  }
  EXPECT_NE(message.find("not positive definite"), std::string::npos) << message;
}

// W's columns: waves, the third a complex multiple of the first plus the second (dependent), against Q = a unit
// column; orthonormalize_against keeps two and makes them orthonormal and orthogonal to Q in C^n.
TEST(OrthonormalizeComplex, DependentColumnDroppedAndHermitianOrthonormal) {
  const Problem p;
  const std::int64_t m = p.rows(), n = p.n;
  dense::DenseBlock<C> Q(Space::host, m, 1), W(Space::host, m, 3), scratch(Space::host, m, 3);
  const C factor(0.3, -1.7);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t g = p.first() + i;
    Q.data()[i] = std::polar(1.0 / std::sqrt(double(n)), 0.9 * double(g));
    W.data()[i * 3] = rhs_entry(g, 0);
    W.data()[i * 3 + 1] = rhs_entry(g, 1);
    W.data()[i * 3 + 2] = factor * rhs_entry(g, 0) + rhs_entry(g, 1);
  }
  const auto tol = solver::OrthonormalizeTolerances::for_type<C>();
  const std::int64_t kept =
      solver::orthonormalize_against<C>(p.context, MPI_COMM_WORLD, Q.cview(), W.view(), scratch.view(), tol);
  EXPECT_EQ(kept, 2);
  const std::vector<C> q = test::gathered_rows<C>(Q.cview()), w = test::gathered_rows<C>(W.cview());
  for (std::int64_t a = 0; a < kept; ++a) {
    C against_q = 0;
    for (std::int64_t i = 0; i < n; ++i) against_q += std::conj(q[i]) * w[i * 3 + a];
    EXPECT_LE(std::abs(against_q), 1e-12) << "q^H w_" << a;
    for (std::int64_t b = 0; b < kept; ++b) {
      C dot = 0;
      for (std::int64_t i = 0; i < n; ++i) dot += std::conj(w[i * 3 + a]) * w[i * 3 + b];
      EXPECT_LE(std::abs(dot - (a == b ? 1.0 : 0.0)), 1e-12) << "w_" << a << "^H w_" << b;
    }
  }
}

}  // namespace
}  // namespace blockeigs
