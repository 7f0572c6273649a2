// Chebyshev-filtered subspace iteration on complex Hermitian operators at np
// 1-4 (a rank without rows from np 2): the twisted (Bloch) Laplacian's
// smallest and largest pairs against its closed form, in complex double and
// complex single, each pair re-checked by plain loops over the whole matrix
// (residual and orthonormality in the Hermitian inner product).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "io/generators/twisted_laplacian.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "tests/support/complex_block_checks.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/distributed_fixtures.hpp"

namespace blockeigs {
namespace {

using C = std::complex<double>;
using solver::LobpcgOptions;
using solver::LobpcgResult;

const io::TwistedLaplacian kGrid{10, 9, 8, {0.7, -1.1, 2.3}};

template <class T>
void expect_bloch_pairs(SpectrumEnd which, int k, double tolerance, StoppingTest test,
                        SearchPrecision precision = SearchPrecision::automatic) {
  const std::int64_t n = kGrid.nx * kGrid.ny * kGrid.nz;
  const ComplexCsrRows whole = io::twisted_laplacian_rows(kGrid, 0, n);
  const solver::RowPartition partition = test::partition_with_empty_rank(n, test::mpi_size());
  const int rank = test::mpi_rank();
  const dense::Context context = dense::Context::host();  // outlives the operator
  solver::DistributedOperator<T> A(MPI_COMM_WORLD, context,
                                   slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = tolerance;
  o.test = test;
  o.max_iterations = 200;
  o.search_precision = precision;
  const LobpcgResult<T> r = solver::chebyshev_filter_eigs<T>(A, o);
  ASSERT_TRUE(r.all_converged()) << "after " << r.iterations << " iterations";
  EXPECT_EQ(r.stats.single_filter_products > 0, precision == SearchPrecision::fp32);

  std::vector<double> exact = io::twisted_laplacian_eigenvalues(kGrid);
  if (which == SpectrumEnd::largest) std::reverse(exact.begin(), exact.end());
  const double norm = 12;  // |A| <= 6 + 6 for the 7-point stencil
  const std::vector<C> X = test::gathered_rows<T>(r.eigenvectors.cview());
  for (int j = 0; j < k; ++j) {
    const double scale = test == StoppingTest::backward ? norm + std::abs(exact[j]) : std::abs(exact[j]);
    EXPECT_LE(std::abs(r.eigenvalues[j] - exact[j]), tolerance * scale + 1e-13)
        << "pair " << j << ": " << r.eigenvalues[j] << " vs " << exact[j];
    double residual = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      C y = -r.eigenvalues[j] * X[i * k + j];
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        y += whole.values[p] * X[whole.col_indices[p] * k + j];
      residual += std::norm(y);
    }
    EXPECT_LE(std::sqrt(residual), 2 * tolerance * scale) << "pair " << j;
    EXPECT_NEAR(std::sqrt(residual), r.residual_norms[j], 1e3 * std::numeric_limits<real_t<T>>::epsilon() * norm);
    for (int l = 0; l <= j; ++l) {
      C dot = 0;
      for (std::int64_t i = 0; i < n; ++i) dot += std::conj(X[i * k + l]) * X[i * k + j];
      EXPECT_LE(std::abs(dot - (l == j ? 1.0 : 0.0)),
                1e2 * std::sqrt(double(n)) * std::numeric_limits<real_t<T>>::epsilon())
          << "x_" << l << "^H x_" << j;
    }
  }
}

TEST(ChfsiComplex, BlochLaplacianSmallest) {
  expect_bloch_pairs<C>(SpectrumEnd::smallest, 12, 1e-10, StoppingTest::relative);
}

TEST(ChfsiComplex, BlochLaplacianLargestBackward) {
  expect_bloch_pairs<C>(SpectrumEnd::largest, 6, 1e-9, StoppingTest::backward);
}

// The mixed filter: rough columns in complex fp32 with A's complex fp32 copy, the rest in complex fp64.
TEST(ChfsiComplex, BlochLaplacianMixedFilter) {
  expect_bloch_pairs<C>(SpectrumEnd::smallest, 12, 1e-10, StoppingTest::relative, SearchPrecision::fp32);
}

TEST(ChfsiComplex, BlochLaplacianComplexSingle) {
  expect_bloch_pairs<std::complex<float>>(SpectrumEnd::smallest, 8, 1e-4, StoppingTest::backward);
}

}  // namespace
}  // namespace blockeigs
