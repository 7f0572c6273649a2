// LOBPCG and block CG with the Chebyshev preconditioner at np 1-4 (one rank
// without rows at np >= 2), through the real distributed operator:
// Laplacians against their closed-form eigenvalues (both ends, with and
// without Jacobi scaling, and shifted to be indefinite), known solutions for
// block CG, and iteration counts that must fall by a clear factor on
// problems where they are large; the polynomial in fp64 and in fp32 (the
// default for these fp64 problems), which must reach the same tolerances in
// about as many iterations. Every eigenpair is re-checked against the whole
// matrix (csr_test_operator.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

using solver::ChebyshevOptions;
using solver::ChebyshevPreconditioner;

struct Problem {
  dense::Context context = dense::Context::host();
  CsrRows whole;
  std::vector<double> exact;  // ascending
  solver::RowPartition partition;
  std::unique_ptr<solver::DistributedOperator<double>> A;

  Problem(io::GeneratorSpec spec, double shift = 0) {
    whole = io::generate_rows(spec, 0, io::generated_rows(spec));
    exact = io::laplacian_eigenvalues(spec);
    for (std::int64_t i = 0; i < whole.global_rows; ++i)
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        if (whole.col_indices[p] == i) whole.values[p] += shift;
    for (double& e : exact) e += shift;
    partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
    const int rank = test::mpi_rank();
    A = std::make_unique<solver::DistributedOperator<double>>(
        MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t m() const { return A->local_rows(); }
};

constexpr ChebyshevPrecision precisions[] = {ChebyshevPrecision::fp64, ChebyshevPrecision::fp32};

ChebyshevOptions chebyshev(int degree, bool jacobi, SpectrumEnd end = SpectrumEnd::smallest,
                           ChebyshevPrecision precision = ChebyshevPrecision::automatic) {
  ChebyshevOptions o;
  o.degree = degree;
  o.jacobi = jacobi;
  o.end = end;
  o.precision = precision;
  return o;
}

// LOBPCG with `options.k` pairs at `which` end; the eigenvalues against the
// closed form and the pairs against the matrix. Returns the iterations.
int solve_eigs(Problem& p, solver::LobpcgOptions options, const ChebyshevOptions* precond) {
  std::unique_ptr<ChebyshevPreconditioner<double>> M;
  if (precond) M = std::make_unique<ChebyshevPreconditioner<double>>(*p.A, *precond);
  const auto r = solver::lobpcg<double>(*p.A, options, M.get());
  EXPECT_TRUE(r.all_converged());
  const auto check =
      test::check_eigenpairs(MPI_COMM_WORLD, p.context, p.whole, p.partition, r.eigenvalues, r.eigenvectors.cview());
  for (int j = 0; j < options.k; ++j) {
    const double want = options.which == SpectrumEnd::smallest ? p.exact[j] : p.exact[p.exact.size() - 1 - j];
    EXPECT_NEAR(r.eigenvalues[j], want, 1e-9 * std::max(1.0, std::abs(want))) << "pair " << j;
    EXPECT_LE(check.residuals[j], 2 * options.tolerance * std::abs(want)) << "pair " << j;
  }
  EXPECT_LE(check.orthonormality, 1e-10);
  return r.iterations;
}

solver::LobpcgOptions eigs_options(int k, SpectrumEnd which, double tolerance) {
  solver::LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = tolerance;
  o.max_iterations = 3000;
  return o;
}

TEST(ChebyshevLobpcg, SmallestAndLargestOfA3dLaplacian) {
  Problem p({io::GeneratorKind::laplacian_3d, 10, 9, 8, 7});
  for (ChebyshevPrecision precision : precisions)
    for (bool jacobi : {false, true})
      for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
        SCOPED_TRACE(std::string(to_string(precision)) + (jacobi ? ", jacobi" : ""));
        const ChebyshevOptions c = chebyshev(8, jacobi, end, precision);
        solve_eigs(p, eigs_options(6, end, 1e-9), &c);
      }
}

// L - 3 I on a 2D grid: eigenvalues in (-3, 5), the smallest negative.
TEST(ChebyshevLobpcg, IndefiniteMatrixBothEnds) {
  Problem p({io::GeneratorKind::laplacian_2d, 24, 20, 1, 5}, -3.0);
  for (ChebyshevPrecision precision : precisions)
    for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
      const ChebyshevOptions c = chebyshev(6, false, end, precision);
      solve_eigs(p, eigs_options(4, end, 1e-8), &c);
    }
}

// The 1D Laplacian of 600 points: condition 1.5e5, hundreds of iterations
// without a preconditioner; degree 8 cuts them by far more than 4x.
TEST(ChebyshevLobpcg, CutsIterationsOnAnIllConditionedProblem) {
  Problem p({io::GeneratorKind::laplacian_1d, 600, 1, 1, 3});
  const auto options = eigs_options(4, SpectrumEnd::smallest, 1e-7);
  const int plain = solve_eigs(p, options, nullptr);
  const ChebyshevOptions c = chebyshev(8, true);
  const int preconditioned = solve_eigs(p, options, &c);
  EXPECT_GE(plain, 4 * preconditioned) << plain << " vs " << preconditioned;
}

// Block CG on A X = A X_known; returns the iterations.
int solve_cg(Problem& p, std::int64_t cols, const ChebyshevOptions* precond) {
  std::unique_ptr<ChebyshevPreconditioner<double>> M;
  if (precond) M = std::make_unique<ChebyshevPreconditioner<double>>(*p.A, *precond);
  dense::DenseBlock<double> X_known(Space::host, p.m(), cols), B(Space::host, p.m(), cols), X(Space::host, p.m(), cols);
  solver::fill_random(p.context, X_known.view(), 5, p.A->first_row());
  p.A->apply(1.0, X_known.cview(), 0.0, B.view());
  std::fill(X.data(), X.data() + p.m() * cols, 0.0);
  solver::BlockCgOptions options;
  options.rtol = 1e-10;
  const auto r = solver::block_cg<double>(*p.A, B.cview(), X.view(), options, M.get());
  EXPECT_TRUE(r.all_converged());
  solver::axpby(p.context, -1.0, X_known.cview(), 1.0, X.view());
  const auto error = solver::column_norms(p.context, MPI_COMM_WORLD, X.cview());
  const auto scale = solver::column_norms(p.context, MPI_COMM_WORLD, X_known.cview());
  for (std::int64_t j = 0; j < cols; ++j) {
    EXPECT_LE(error[j] / scale[j], 1e-6) << "column " << j;
    EXPECT_LE(r.true_residual_norms[j], 10 * options.rtol * r.rhs_norms[j]) << "column " << j;
  }
  if (M) {  // whole applies of `degree` products each
    EXPECT_GT(M->work().products, 0);
    EXPECT_EQ(M->work().products % precond->degree, 0);
  }
  return r.total_iterations;
}

TEST(ChebyshevBlockCg, KnownSolutionsWithAndWithoutJacobi) {
  Problem p({io::GeneratorKind::laplacian_2d, 30, 25, 1, 5});
  for (ChebyshevPrecision precision : precisions)
    for (bool jacobi : {false, true}) {
      const ChebyshevOptions c = chebyshev(5, jacobi, SpectrumEnd::smallest, precision);
      solve_cg(p, 6, &c);
    }
}

// The 2D Laplacian on 80 x 80: about 250 iterations unpreconditioned to
// rtol 1e-10; degree 8 needs several times fewer.
TEST(ChebyshevBlockCg, CutsIterationsOnAnIllConditionedProblem) {
  Problem p({io::GeneratorKind::laplacian_2d, 80, 80, 1, 5});
  const int plain = solve_cg(p, 4, nullptr);
  const ChebyshevOptions c = chebyshev(8, true);
  const int preconditioned = solve_cg(p, 4, &c);
  EXPECT_GE(plain, 3 * preconditioned) << plain << " vs " << preconditioned;
}

// The fp32 polynomial reaches the same tolerances as the fp64 one in about
// as many iterations: LOBPCG (its residuals are fp64) and block CG (its beta
// A-conjugates against the last search block, which tolerates a preconditioner
// that is symmetric only to fp32 rounding), at rtol 1e-10, Jacobi-scaled.
TEST(ChebyshevPrecision, Fp32ConvergesLikeFp64) {
  Problem p({io::GeneratorKind::laplacian_2d, 60, 50, 1, 5});
  int eigs[2], cg[2];
  for (int i = 0; i < 2; ++i) {
    const ChebyshevOptions c = chebyshev(8, true, SpectrumEnd::smallest, precisions[i]);
    eigs[i] = solve_eigs(p, eigs_options(5, SpectrumEnd::smallest, 1e-9), &c);
    cg[i] = solve_cg(p, 5, &c);
  }
  EXPECT_LE(eigs[1], eigs[0] + 2) << "LOBPCG: fp64 " << eigs[0] << ", fp32 " << eigs[1];
  EXPECT_LE(cg[1], cg[0] + 2) << "block CG: fp64 " << cg[0] << ", fp32 " << cg[1];
}

}  // namespace
}  // namespace blockeigs
