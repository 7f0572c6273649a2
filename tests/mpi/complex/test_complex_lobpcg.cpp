// LOBPCG on complex Hermitian problems at np 1-4 (a rank without rows from
// np 2): the twisted (Bloch) Laplacian's pairs at both ends against its
// closed form, with Jacobi and Chebyshev preconditioners; a Hermitian-definite
// pencil (B = I + L' with other phases) against LAPACK's zhegv on the dense
// matrices; constraints that keep found pairs out, alone and with B; each
// answer re-checked by plain loops over the whole matrices (residuals,
// B-orthonormality, orthogonality to the constraints). And what complex
// values refuse.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/generators/twisted_laplacian.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "tests/support/complex_block_checks.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "tests/support/expect_error.hpp"

namespace blockeigs {
namespace {

using C = std::complex<double>;

// Phases chosen so that no two of the pairs checked are degenerate.
const io::TwistedLaplacian kGrid{7, 6, 5, {0.7, -1.1, 2.3}};
const io::TwistedLaplacian kMassGrid{7, 6, 5, {-0.4, 0.9, 1.7}};
constexpr std::int64_t kRows = 7 * 6 * 5;

// B = I + L' / 4 for the twisted Laplacian L' of other phases: Hermitian, with eigenvalues in [1, 4].
ComplexCsrRows mass_rows() {
  ComplexCsrRows b = io::twisted_laplacian_rows(kMassGrid, 0, kRows);
  for (std::int64_t i = 0; i < kRows; ++i)
    for (std::int64_t p = b.row_offsets[i]; p < b.row_offsets[i + 1]; ++p)
      b.values[p] = 0.25 * b.values[p] + (b.col_indices[p] == i ? 1.0 : 0.0);
  return b;
}

struct Problem {
  ComplexCsrRows a = io::twisted_laplacian_rows(kGrid, 0, kRows);
  ComplexCsrRows b = mass_rows();
  solver::RowPartition partition = test::partition_with_empty_rank(kRows, test::mpi_size());
  dense::Context context = dense::Context::host();

  solver::DistributedOperator<C> op(const ComplexCsrRows& whole) const {
    const int rank = test::mpi_rank();
    return solver::DistributedOperator<C>(MPI_COMM_WORLD, context,
                                          slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t rows() const { return partition.rows(test::mpi_rank()); }
};

// y = M x for the whole matrix M and a whole block x (kRows x k, row-major).
std::vector<C> times(const ComplexCsrRows& M, const std::vector<C>& x, std::int64_t k) {
  std::vector<C> y(x.size());
  for (std::int64_t i = 0; i < kRows; ++i)
    for (std::int64_t p = M.row_offsets[i]; p < M.row_offsets[i + 1]; ++p)
      for (std::int64_t j = 0; j < k; ++j) y[i * k + j] += M.values[p] * x[M.col_indices[p] * k + j];
  return y;
}

// U^H V for whole blocks of ku and kv columns.
std::vector<C> adjoint_times(const std::vector<C>& u, std::int64_t ku, const std::vector<C>& v, std::int64_t kv) {
  std::vector<C> g(static_cast<std::size_t>(ku * kv));
  for (std::int64_t i = 0; i < kRows; ++i)
    for (std::int64_t a = 0; a < ku; ++a)
      for (std::int64_t c = 0; c < kv; ++c) g[a * kv + c] += std::conj(u[i * ku + a]) * v[i * kv + c];
  return g;
}

// The result's pairs against `exact` (to 1e-9 relative), their residuals A x - lambda B x recomputed over
// the whole matrices (to 1e-8 of |lambda| ||B x||), and X^H B X = I (B = I without a pencil).
void expect_pairs(const solver::LobpcgResult<C>& r, const Problem& p, const std::vector<double>& exact, bool pencil) {
  ASSERT_EQ(r.stop, solver::LobpcgStop::converged) << solver::to_string(r.stop) << " after " << r.iterations;
  const auto k = static_cast<std::int64_t>(exact.size());
  ASSERT_EQ(std::int64_t(r.eigenvalues.size()), k);
  for (std::int64_t j = 0; j < k; ++j) EXPECT_NEAR(r.eigenvalues[j], exact[j], 1e-9 * std::abs(exact[j])) << j;
  const std::vector<C> x = test::gathered_rows<C>(r.eigenvectors.cview());
  const std::vector<C> ax = times(p.a, x, k), bx = pencil ? times(p.b, x, k) : x;
  const std::vector<C> g = adjoint_times(x, k, bx, k);
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t c = 0; c < k; ++c) EXPECT_LT(std::abs(g[a * k + c] - (a == c ? 1.0 : 0.0)), 1e-10) << a << c;
  for (std::int64_t j = 0; j < k; ++j) {
    double residual = 0, b_norm = 0;
    for (std::int64_t i = 0; i < kRows; ++i) {
      residual += std::norm(ax[i * k + j] - r.eigenvalues[j] * bx[i * k + j]);
      b_norm += std::norm(bx[i * k + j]);
    }
    EXPECT_LE(std::sqrt(residual), 1e-8 * std::abs(r.eigenvalues[j]) * std::sqrt(b_norm)) << "pair " << j;
    // (With constraints the reported residual leaves out its rounding-sized part in span(B Y).)
    EXPECT_NEAR(r.residual_norms[j], std::sqrt(residual), 1e-10 * std::abs(r.eigenvalues[j])) << "pair " << j;
  }
}

// The pencil's eigenvalues, ascending, from LAPACK's zhegv on the dense matrices.
std::vector<double> dense_pencil_eigenvalues(const Problem& p) {
  std::vector<C> a(static_cast<std::size_t>(kRows * kRows)), b(a.size());
  for (std::int64_t i = 0; i < kRows; ++i) {
    for (std::int64_t q = p.a.row_offsets[i]; q < p.a.row_offsets[i + 1]; ++q)
      a[i * kRows + p.a.col_indices[q]] += p.a.values[q];
    for (std::int64_t q = p.b.row_offsets[i]; q < p.b.row_offsets[i + 1]; ++q)
      b[i * kRows + p.b.col_indices[q]] += p.b.values[q];
  }
  std::vector<double> w(static_cast<std::size_t>(kRows));
  const auto n = static_cast<lapack_int>(kRows);
  const lapack_int info =
      LAPACKE_zhegv(LAPACK_ROW_MAJOR, 1, 'N', 'L', n, reinterpret_cast<lapack_complex_double*>(a.data()), n,
                    reinterpret_cast<lapack_complex_double*>(b.data()), n, w.data());
  EXPECT_EQ(info, 0);
  return w;
}

solver::LobpcgOptions options(int k, SpectrumEnd which = SpectrumEnd::smallest) {
  solver::LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = 1e-10;
  o.max_iterations = 400;
  return o;
}

std::vector<double> slice(const std::vector<double>& v, std::size_t first, std::size_t count) {
  return {v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

TEST(LobpcgComplex, BlochLaplacianBothEnds) {
  const Problem p;
  solver::DistributedOperator<C> A = p.op(p.a);
  const std::vector<double> exact = io::twisted_laplacian_eigenvalues(kGrid);
  // The iterate offered between iterations holds (real, imaginary) pairs.
  solver::LobpcgOptions o = options(6);
  std::size_t offered = 0;
  o.between_iterations = [&](const solver::LobpcgIterate& it) {
    offered = it.block().size();
    return false;
  };
  const solver::LobpcgResult<C> small = solver::lobpcg<C>(A, o);
  expect_pairs(small, p, slice(exact, 0, 6), false);
  EXPECT_EQ(offered, std::size_t(2 * p.rows() * small.block_size));
  std::vector<double> top(exact.rbegin(), exact.rbegin() + 4);
  expect_pairs(solver::lobpcg<C>(A, options(4, SpectrumEnd::largest)), p, top, false);
}

// Jacobi (a constant diagonal: the iteration of the plain run) and a Chebyshev polynomial of the Hermitian
// operator (real coefficients), which takes fewer iterations.
TEST(LobpcgComplex, Preconditioned) {
  const Problem p;
  solver::DistributedOperator<C> A = p.op(p.a);
  const std::vector<double> exact = slice(io::twisted_laplacian_eigenvalues(kGrid), 0, 5);
  const solver::LobpcgResult<C> plain = solver::lobpcg<C>(A, options(5));
  expect_pairs(plain, p, exact, false);
  solver::JacobiPreconditioner<C> jacobi(A);
  expect_pairs(solver::lobpcg<C>(A, options(5), &jacobi), p, exact, false);
  solver::ChebyshevOptions c;
  c.degree = 8;
  solver::ChebyshevPreconditioner<C> chebyshev(A, c);
  const solver::LobpcgResult<C> polynomial = solver::lobpcg<C>(A, options(5), &chebyshev);
  expect_pairs(polynomial, p, exact, false);
  EXPECT_LT(polynomial.iterations, plain.iterations);
}

TEST(LobpcgComplex, HermitianPencilAgainstDenseReference) {
  const Problem p;
  solver::DistributedOperator<C> A = p.op(p.a), B = p.op(p.b);
  const std::vector<double> w = dense_pencil_eigenvalues(p);
  expect_pairs(solver::lobpcg<C>(A, options(5), nullptr, std::nullopt, &B), p, slice(w, 0, 5), true);
  std::vector<double> top(w.rbegin(), w.rbegin() + 3);
  expect_pairs(solver::lobpcg<C>(A, options(3, SpectrumEnd::largest), nullptr, std::nullopt, &B), p, top, true);
}

// The first three pairs found, then given as constraints: the next four come out, B-orthogonal to them.
TEST(LobpcgComplex, ConstraintsKeepFoundPairsOut) {
  const Problem p;
  solver::DistributedOperator<C> A = p.op(p.a), B = p.op(p.b);
  for (const bool pencil : {false, true}) {
    SCOPED_TRACE(pencil ? "A x = lambda B x" : "A x = lambda x");
    solver::DistributedOperator<C>* b = pencil ? &B : nullptr;
    const std::vector<double> all = pencil ? dense_pencil_eigenvalues(p) : io::twisted_laplacian_eigenvalues(kGrid);
    const solver::LobpcgResult<C> first = solver::lobpcg<C>(A, options(3), nullptr, std::nullopt, b);
    expect_pairs(first, p, slice(all, 0, 3), pencil);
    const solver::LobpcgResult<C> next =
        solver::lobpcg<C>(A, options(4), nullptr, std::nullopt, b, first.eigenvectors.cview());
    expect_pairs(next, p, slice(all, 3, 4), pencil);
    EXPECT_EQ(next.constraints, 3);
    const std::vector<C> y = test::gathered_rows<C>(first.eigenvectors.cview());
    const std::vector<C> x = test::gathered_rows<C>(next.eigenvectors.cview());
    const std::vector<C> g = adjoint_times(y, 3, pencil ? times(p.b, x, 4) : x, 4);
    for (const C& v : g) EXPECT_LT(std::abs(v), 1e-9);
  }
}

TEST(LobpcgComplex, Fp32ResidualsRefused) {
  const Problem p;
  solver::DistributedOperator<C> A = p.op(p.a);
  solver::LobpcgOptions o = options(3);
  o.search_precision = SearchPrecision::fp32;
  test::expect_mentions(test::input_error_message([&] { solver::lobpcg<C>(A, o); }),
                        {"search_precision fp32", "complex"});
}

}  // namespace
}  // namespace blockeigs
