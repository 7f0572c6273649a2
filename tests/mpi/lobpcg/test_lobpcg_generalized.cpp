// LOBPCG on A x = lambda B x and with constraints, at np 1-4 (one rank owns
// no rows in some cases): linear finite-element stiffness and mass pencils
// on the unit interval, square and cube (Dirichlet), whose eigenvalues are
// known in closed form, both ends; graph Laplacians of a path and a cycle
// with the constant vector as constraint; constraints that deflate known
// pairs of a pencil; input errors. The matrices are built here from dense
// Kronecker products, independently of the generators, and every pair is
// re-checked with plain loops over the whole matrices.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::LobpcgOptions;
using solver::SpectrumEnd;
using test::Dense;
using test::dense;
using test::dense_symmetric_eigenvalues;
using test::fem_p1;
using test::is_input_error;
using test::Pencil;
using test::to_csr;
using test::tridiagonal;

// The whole block X (local rows x k) on every rank, row-major.
std::vector<double> gather(MPI_Comm comm, const solver::RowPartition& partition, dense::ConstDenseView<double> X) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t k = X.cols;
  std::vector<double> mine(static_cast<std::size_t>(X.rows * k));
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) mine[i * k + j] = X(i, j);
  std::vector<int> counts(partition.ranks()), displs(partition.ranks());
  for (int r = 0; r < partition.ranks(); ++r) {
    counts[r] = static_cast<int>(partition.rows(r) * k);
    displs[r] = static_cast<int>(partition.begin(r) * k);
  }
  std::vector<double> whole(static_cast<std::size_t>(partition.global_rows() * k));
  BLOCKEIGS_MPI_CHECK(MPI_Allgatherv(mine.data(), counts[rank], MPI_DOUBLE, whole.data(), counts.data(), displs.data(),
                                     MPI_DOUBLE, comm));
  return whole;
}

// M x for column j of the whole block x (N x k).
std::vector<double> times(const CsrRows& M, const std::vector<double>& x, std::int64_t k, std::int64_t j) {
  std::vector<double> y(static_cast<std::size_t>(M.global_rows), 0.0);
  for (std::int64_t i = 0; i < M.global_rows; ++i)
    for (std::int64_t p = M.row_offsets[i]; p < M.row_offsets[i + 1]; ++p)
      y[i] += M.values[p] * x[M.col_indices[p] * k + j];
  return y;
}

struct Checked {
  std::vector<double> relative;  // ||A x - lambda B x|| / (|lambda| ||B x||), plain loops
  double b_orthonormality = 0;   // max |X^T B X - I|
  double against_y = 0;          // max |Y^T B X| over the constraint columns given
};

Checked check(const CsrRows& A, const CsrRows* B, const std::vector<double>& x, std::int64_t k,
              const std::vector<double>& lambda, const std::vector<double>& y = {}, std::int64_t m = 0) {
  const std::int64_t N = A.global_rows;
  Checked c;
  std::vector<std::vector<double>> bx;
  for (std::int64_t j = 0; j < k; ++j) {
    const std::vector<double> ax = times(A, x, k, j);
    std::vector<double> b(static_cast<std::size_t>(N));
    if (B)
      b = times(*B, x, k, j);
    else
      for (std::int64_t i = 0; i < N; ++i) b[i] = x[i * k + j];
    double r = 0, nb = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      r += (ax[i] - lambda[j] * b[i]) * (ax[i] - lambda[j] * b[i]);
      nb += b[i] * b[i];
    }
    c.relative.push_back(std::sqrt(r) / (std::abs(lambda[j]) * std::sqrt(nb)));
    bx.push_back(std::move(b));
  }
  for (std::int64_t j = 0; j < k; ++j) {
    for (std::int64_t l = 0; l < k; ++l) {
      double g = 0;
      for (std::int64_t i = 0; i < N; ++i) g += x[i * k + l] * bx[j][i];
      c.b_orthonormality = std::max(c.b_orthonormality, std::abs(g - (j == l ? 1.0 : 0.0)));
    }
    for (std::int64_t l = 0; l < m; ++l) {
      double g = 0;
      for (std::int64_t i = 0; i < N; ++i) g += y[i * m + l] * bx[j][i];
      c.against_y = std::max(c.against_y, std::abs(g));
    }
  }
  return c;
}

solver::RowPartition partition_for(std::int64_t rows, bool empty_rank) {
  return empty_rank ? test::partition_with_empty_rank(rows, test::mpi_size(MPI_COMM_WORLD))
                    : solver::RowPartition::uniform(rows, test::mpi_size(MPI_COMM_WORLD));
}

LobpcgOptions options_for(int k, SpectrumEnd which, double tol = 1e-9) {
  LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = tol;
  o.max_iterations = 3000;
  return o;
}

struct Solved {
  solver::LobpcgResult<double> result;
  Checked checked;
};

// y(global row, column) fills the constraint block (m columns), if any.
template <class YFn = std::nullptr_t>
Solved solve(const CsrRows& A_rows, const CsrRows* B_rows, const LobpcgOptions& o, bool empty_rank = false,
             bool jacobi = false, std::int64_t m = 0, YFn y_fn = nullptr) {
  const solver::RowPartition partition = partition_for(A_rows.global_rows, empty_rank);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), A_rows, partition);
  std::optional<test::CsrTestOperator<double>> B;
  if (B_rows) B.emplace(MPI_COMM_WORLD, test::SharedContext{A.context()}, *B_rows, partition);
  std::optional<solver::JacobiPreconditioner<double>> precond;
  if (jacobi) precond.emplace(A);
  dense::DenseBlock<double> Y(Space::host, A.local_rows(), m);
  std::vector<double> y_whole(static_cast<std::size_t>(A_rows.global_rows * m));
  if constexpr (!std::is_same_v<YFn, std::nullptr_t>)
    for (std::int64_t i = 0; i < A_rows.global_rows; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        y_whole[i * m + j] = y_fn(i, j);
        if (i >= A.first_row() && i < A.first_row() + A.local_rows()) Y.view()(i - A.first_row(), j) = y_fn(i, j);
      }
  std::optional<dense::ConstDenseView<double>> y_view;
  if (m > 0) y_view = Y.cview();
  Solved run{solver::lobpcg<double>(A, o, precond ? &*precond : nullptr, std::nullopt, B ? &*B : nullptr, y_view), {}};
  const std::vector<double> x = gather(MPI_COMM_WORLD, partition, run.result.eigenvectors.cview());
  run.checked = check(A_rows, B_rows, x, o.k, run.result.eigenvalues, y_whole, m);
  return run;
}

// Converged; eigenvalues within rel_tol of `exact` (the wanted ones, in the
// solver's order); residuals as the test demands, by plain loops and as
// reported; X^T B X = I.
void expect_solved(const Solved& r, const LobpcgOptions& o, const std::vector<double>& exact, double rel_tol) {
  const auto& res = r.result;
  ASSERT_EQ(res.eigenvalues.size(), std::size_t(o.k));
  EXPECT_TRUE(res.all_converged()) << "after " << res.iterations << " iterations";
  for (int j = 0; j < o.k; ++j) {
    EXPECT_LE(std::abs(res.eigenvalues[j] - exact[j]), rel_tol * std::abs(exact[j]))
        << "pair " << j << ": " << res.eigenvalues[j] << " vs exact " << exact[j];
    EXPECT_LE(r.checked.relative[j], o.tolerance * (1 + 1e-6)) << "pair " << j;
    // The same residual two ways: they differ by rounding, ~eps ||A|| ||x|| / |lambda|.
    EXPECT_NEAR(r.checked.relative[j], res.relative_residuals[j], 1e-4 * o.tolerance) << "pair " << j;
    EXPECT_TRUE(res.passes_relative[j]) << "pair " << j;
  }
  EXPECT_LE(r.checked.b_orthonormality, 1e-10);
}

std::vector<double> wanted(const std::vector<double>& ascending, int k, SpectrumEnd which, int skip = 0) {
  std::vector<double> w;
  for (int j = 0; j < k; ++j)
    w.push_back(which == SpectrumEnd::smallest ? ascending[skip + j] : ascending[ascending.size() - 1 - skip - j]);
  return w;
}

// ---- pencils against closed forms --------------------------------------------

TEST(LobpcgGeneralized, FemP1_1dSmallestK1OnAnEmptyRank) {
  const Pencil p = fem_p1(1, 300);
  const LobpcgOptions o = options_for(1, SpectrumEnd::smallest);
  const Solved r = solve(p.A, &p.B, o, true);
  expect_solved(r, o, wanted(p.exact, 1, o.which), 1e-8);
  EXPECT_TRUE(r.result.generalized);
}

TEST(LobpcgGeneralized, FemP1_1dLargestK6) {
  const Pencil p = fem_p1(1, 300);
  const LobpcgOptions o = options_for(6, SpectrumEnd::largest);
  const Solved r = solve(p.A, &p.B, o);
  expect_solved(r, o, wanted(p.exact, 6, o.which), 1e-8);
}

TEST(LobpcgGeneralized, FemP1_2dSmallestK6WithRepeatedEigenvalues) {
  const Pencil p = fem_p1(2, 20);
  const LobpcgOptions o = options_for(6, SpectrumEnd::smallest);
  const Solved r = solve(p.A, &p.B, o);
  expect_solved(r, o, wanted(p.exact, 6, o.which), 1e-8);
}

TEST(LobpcgGeneralized, FemP1_3dSmallestK20Jacobi) {
  const Pencil p = fem_p1(3, 8);
  const LobpcgOptions o = options_for(20, SpectrumEnd::smallest);
  const Solved r = solve(p.A, &p.B, o, true, true);
  expect_solved(r, o, wanted(p.exact, 20, o.which), 1e-8);
}

TEST(LobpcgGeneralized, FemP1_3dLargestK6) {
  const Pencil p = fem_p1(3, 8);
  const LobpcgOptions o = options_for(6, SpectrumEnd::largest);
  const Solved r = solve(p.A, &p.B, o);
  expect_solved(r, o, wanted(p.exact, 6, o.which), 1e-8);
}

TEST(LobpcgGeneralized, BackwardTestScalesByBothNorms) {
  const Pencil p = fem_p1(2, 20);
  LobpcgOptions o = options_for(4, SpectrumEnd::smallest, 1e-10);
  o.test = solver::StoppingTest::backward;
  const Solved r = solve(p.A, &p.B, o);
  ASSERT_TRUE(r.result.all_converged());
  EXPECT_GT(r.result.norm_estimate, 0);  // ||A|| / ||B||, estimated
  for (int j = 0; j < o.k; ++j) EXPECT_TRUE(r.result.passes_backward[j]);
}

// ---- constraints ---------------------------------------------------------------

// The path's Laplacian (free ends) has eigenvalues 2 - 2 cos(j pi / n),
// j = 0..n-1; the cycle's 2 - 2 cos(2 pi j / n), each nonzero one twice. The
// constant vector spans the null space of both.
CsrRows graph_laplacian(std::int64_t n, bool cycle) {
  Dense L = tridiagonal(n, 2, -1);
  if (cycle) {
    L[0][n - 1] = L[n - 1][0] = -1;
  } else {
    L[0][0] = L[n - 1][n - 1] = 1;
  }
  return to_csr(L);
}

TEST(LobpcgConstraints, PathLaplacianWithoutTheConstantVector) {
  const std::int64_t n = 200;
  const LobpcgOptions o = options_for(5, SpectrumEnd::smallest);
  const Solved r =
      solve(graph_laplacian(n, false), nullptr, o, true, false, 1, [](std::int64_t, std::int64_t) { return 1.0; });
  std::vector<double> exact;
  for (int j = 1; j <= o.k; ++j) exact.push_back(2 - 2 * std::cos(j * std::numbers::pi / n));
  expect_solved(r, o, exact, 1e-8);
  EXPECT_LE(r.checked.against_y, 1e-10 * std::sqrt(double(n)));
  EXPECT_EQ(r.result.constraints, 1);
}

TEST(LobpcgConstraints, CycleLaplacianWithoutTheConstantVector) {
  const std::int64_t n = 150;
  const LobpcgOptions o = options_for(4, SpectrumEnd::smallest);
  const Solved r =
      solve(graph_laplacian(n, true), nullptr, o, false, false, 1, [](std::int64_t, std::int64_t) { return 1.0; });
  std::vector<double> exact;
  for (int j = 1; j <= 2; ++j)
    for (int twice = 0; twice < 2; ++twice) exact.push_back(2 - 2 * std::cos(2 * std::numbers::pi * j / n));
  expect_solved(r, o, exact, 1e-8);
  EXPECT_LE(r.checked.against_y, 1e-10 * std::sqrt(double(n)));
}

// The 1D pencil's eigenvectors are sin(j pi x_i); constraining two of them
// away (scaled arbitrarily and mixed) leaves the others.
TEST(LobpcgConstraints, PencilDeflatesKnownPairs) {
  const std::int64_t n = 300;
  const Pencil p = fem_p1(1, n);
  const LobpcgOptions o = options_for(4, SpectrumEnd::smallest);
  const double h = 1.0 / double(n + 1);
  const Solved r = solve(p.A, &p.B, o, true, false, 2, [h](std::int64_t i, std::int64_t j) {
    const double x = double(i + 1) * h;
    const double s1 = std::sin(std::numbers::pi * x), s2 = std::sin(2 * std::numbers::pi * x);
    return j == 0 ? 3 * s1 + s2 : s1 - 0.5 * s2;
  });
  expect_solved(r, o, wanted(p.exact, 4, o.which, 2), 1e-8);
  EXPECT_LE(r.checked.against_y, 1e-9);
}

// The eigenvalues of A restricted to the orthogonal complement of Y's columns
// (n x m, row-major): the nonzero ones of P A P, P = I - Q Q^T, ascending (A
// positive definite).
std::vector<double> restricted_eigenvalues(const CsrRows& A, std::vector<double> y, std::int64_t m) {
  const std::int64_t n = A.global_rows;
  for (std::int64_t j = 0; j < m; ++j) {  // Q from Y by modified Gram-Schmidt, twice
    for (int pass = 0; pass < 2; ++pass)
      for (std::int64_t l = 0; l < j; ++l) {
        double d = 0;
        for (std::int64_t i = 0; i < n; ++i) d += y[i * m + l] * y[i * m + j];
        for (std::int64_t i = 0; i < n; ++i) y[i * m + j] -= d * y[i * m + l];
      }
    double norm = 0;
    for (std::int64_t i = 0; i < n; ++i) norm += y[i * m + j] * y[i * m + j];
    for (std::int64_t i = 0; i < n; ++i) y[i * m + j] /= std::sqrt(norm);
  }
  std::vector<double> P(static_cast<std::size_t>(n * n), 0.0), a = dense(A), pap(P.size(), 0.0), ap(P.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k) {
      double q = 0;
      for (std::int64_t l = 0; l < m; ++l) q += y[i * m + l] * y[k * m + l];
      P[i * n + k] = (i == k ? 1.0 : 0.0) - q;
    }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t l = 0; l < n; ++l)
      for (std::int64_t k = 0; k < n; ++k) ap[i * n + k] += a[i * n + l] * P[l * n + k];
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t l = 0; l < n; ++l)
      for (std::int64_t k = 0; k < n; ++k) pap[i * n + k] += P[i * n + l] * ap[l * n + k];
  std::vector<double> all = dense_symmetric_eigenvalues(pap, static_cast<int>(n)), nonzero;
  for (const double v : all)
    if (v > 1e-9) nonzero.push_back(v);
  return nonzero;
}

// Constraints that span no invariant subspace (random columns): the pairs are
// those of A on Y's orthogonal complement, X orthogonal to Y, and the
// residuals the test measures are A x - lambda x less their part in span Y
// (the multipliers'), which falls below the tolerance.
TEST(LobpcgConstraints, RandomColumnsGiveTheRestrictedProblemsPairs) {
  const std::int64_t n = 90, m = 3;
  const CsrRows A = to_csr(tridiagonal(n, 2, -1));
  const auto y = [](std::int64_t i, std::int64_t j) { return solver::hash_uniform(7, i, j); };
  const LobpcgOptions o = options_for(4, SpectrumEnd::smallest, 1e-9);
  for (const bool empty_rank : {false, true}) {
    const Solved r = solve(A, nullptr, o, empty_rank, false, m, y);
    std::vector<double> y_whole(static_cast<std::size_t>(n * m));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) y_whole[i * m + j] = y(i, j);
    const std::vector<double> exact = restricted_eigenvalues(A, y_whole, m);
    ASSERT_TRUE(r.result.all_converged()) << "after " << r.result.iterations << " iterations";
    for (int j = 0; j < o.k; ++j) EXPECT_NEAR(r.result.eigenvalues[j], exact[j], 1e-8 * exact[j]) << "pair " << j;
    EXPECT_LE(r.checked.against_y, 1e-10 * std::sqrt(double(n)));
    EXPECT_LE(r.checked.b_orthonormality, 1e-10);
  }
}

// ---- input errors ------------------------------------------------------------------

template <class Fn>
void expect_input_error(Fn fn, const char* needle) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(is_input_error(e)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(LobpcgGeneralized, RefusesBOfAnotherSize) {
  const Pencil p = fem_p1(1, 40), q = fem_p1(1, 41);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), p.A, partition_for(40, true));
  test::CsrTestOperator<double> B(MPI_COMM_WORLD, test::SharedContext{A.context()}, q.B, partition_for(41, true));
  expect_input_error([&] { solver::lobpcg<double>(A, options_for(2, SpectrumEnd::smallest), nullptr, {}, &B); },
                     "B has 41 rows");
}

TEST(LobpcgGeneralized, RefusesBDistributedOtherwise) {
  if (test::mpi_size(MPI_COMM_WORLD) < 2) GTEST_SKIP() << "needs two ranks";
  const Pencil p = fem_p1(1, 40);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), p.A, partition_for(40, false));
  test::CsrTestOperator<double> B(MPI_COMM_WORLD, test::SharedContext{A.context()}, p.B, partition_for(40, true));
  expect_input_error([&] { solver::lobpcg<double>(A, options_for(2, SpectrumEnd::smallest), nullptr, {}, &B); },
                     "distributed like A");
}

TEST(LobpcgGeneralized, RefusesBOnAnotherContext) {
  const Pencil p = fem_p1(1, 40);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), p.A, partition_for(40, false));
  test::CsrTestOperator<double> B(MPI_COMM_WORLD, dense::Context::host(), p.B, partition_for(40, false));
  expect_input_error([&] { solver::lobpcg<double>(A, options_for(2, SpectrumEnd::smallest), nullptr, {}, &B); },
                     "share A's context");
}

// B = tridiag(0.9, 1, 0.9): a positive diagonal, which load_matrix_b's cheap
// check accepts, and eigenvalues 1 + 1.8 cos(j pi / 41) down to -0.8:
// indefinite. Refused once a block column shows x^T B x < 0, on every rank,
// with and without an empty rank and Jacobi. (Where the iteration never meets
// such a column, as it need not for the largest end here, it runs as usual:
// the check is what LOBPCG sees, not a factorisation of B.)
// B = tridiag(0.9, -1, 0.9) has eigenvalues in [-2.8, 0.8]: a random start
// block already has a column with x^T B x < 0 (a chance of about 1 in 400
// per column that it has not), so the refusal comes at once, at any rank count.
TEST(LobpcgGeneralized, RefusesAnIndefiniteB) {
  const CsrRows A = to_csr(tridiagonal(40, 2, -1)), B = to_csr(tridiagonal(40, -1, 0.9));
  for (const bool variant : {false, true})
    expect_input_error([&] { solve(A, &B, options_for(3, SpectrumEnd::smallest), variant, variant); },
                       "B is not positive definite");
}

// B = tridiag(0.9, 1, 0.9) (eigenvalues in [-0.8, 2.8]) is mostly positive:
// whether the iteration meets a column with x^T B x < 0 before it stalls
// depends on the rounding of its reductions (the asan build at 4 ranks
// stalled after 65 steps). Either way it must not claim convergence.
TEST(LobpcgGeneralized, MostlyPositiveIndefiniteBIsRefusedOrUnconverged) {
  const CsrRows A = to_csr(tridiagonal(40, 2, -1)), B = to_csr(tridiagonal(40, 1, 0.9));
  for (const bool variant : {false, true}) {
    try {
      const Solved r = solve(A, &B, options_for(3, SpectrumEnd::smallest), variant, variant);
      EXPECT_FALSE(r.result.all_converged()) << "variant " << variant << ": " << r.result.iterations << " steps";
      EXPECT_NE(r.result.stop, solver::LobpcgStop::converged);
    } catch (const solver::BNotPositiveDefinite& e) {
      EXPECT_TRUE(is_input_error(e)) << e.what();
    }
  }
}

TEST(LobpcgConstraints, RefusesRankDeficientConstraints) {
  const Pencil p = fem_p1(1, 40);
  expect_input_error(
      [&] {
        solve(p.A, &p.B, options_for(2, SpectrumEnd::smallest), true, false, 2,
              [](std::int64_t i, std::int64_t j) { return (j + 1) * double(i % 3); });
      },
      "span only 1");
  expect_input_error(
      [&] {
        solve(p.A, nullptr, options_for(2, SpectrumEnd::smallest), false, false, 1,
              [](std::int64_t, std::int64_t) { return 0.0; });
      },
      "span only 0");
}

TEST(LobpcgConstraints, RefusesTooManyColumns) {
  const Pencil p = fem_p1(1, 12);
  expect_input_error(
      [&] {
        solve(p.A, &p.B, options_for(2, SpectrumEnd::smallest), false, false, 9,
              [](std::int64_t i, std::int64_t j) { return i == j ? 1.0 : 0.0; });
      },
      "columns");
}

}  // namespace
}  // namespace blockeigs
