// Iterates of LOBPCG made by hand for the guard's tests
// (solver/lobpcg/lobpcg_best.hpp): the 1D Laplacian of n rows, its rows split
// with an empty rank, and blocks of its exact eigenvectors plus noise, so
// that every Ritz value and residual is known.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs::test {

struct Laplacian1d {
  CsrRows whole;
  solver::RowPartition partition;
  explicit Laplacian1d(std::int64_t n) {
    io::GeneratorSpec spec;
    spec.kind = io::GeneratorKind::laplacian_1d;
    spec.nx = n;
    spec.stencil = 3;
    whole = io::generate_rows(spec, 0, n);
    int size = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    partition = partition_with_empty_rank(n, size);
  }
};

// lambda_j = 2 - 2 cos((j + 1) pi / (n + 1)), vector sin((j + 1)(i + 1) pi / (n + 1)).
inline double laplacian_1d_eigenvalue(std::int64_t n, int j) {
  return 2 - 2 * std::cos((j + 1) * std::numbers::pi / double(n + 1));
}

// k columns: the eigenvectors first..first + k - 1 (norm sqrt((n + 1) / 2),
// not unit, as LOBPCG's X need not be) plus noise of the given size in every
// entry, their exact eigenvalues as Ritz values, and the residuals measured.
struct LaplacianIterate {
  dense::DenseBlock<double> X;
  std::vector<double> lambda, r_norm, x_norm;
};

inline LaplacianIterate laplacian_iterate(CsrTestOperator<double>& A, std::int64_t n, int k, int first, double noise) {
  LaplacianIterate it{dense::DenseBlock<double>(Space::host, A.local_rows(), k), {}, {}, {}};
  for (std::int64_t i = 0; i < A.local_rows(); ++i)
    for (int j = 0; j < k; ++j) {
      const double row = double(A.first_row() + i);
      it.X.view()(i, j) = std::sin((first + j + 1) * (row + 1) * std::numbers::pi / double(n + 1)) +
                          noise * std::sin(0.37 * (row + 1) * (j + 2) + 1.1);
    }
  for (int j = 0; j < k; ++j) it.lambda.push_back(laplacian_1d_eigenvalue(n, first + j));
  dense::DenseBlock<double> AX(Space::host, A.local_rows(), k), R(Space::host, A.local_rows(), k);
  A.apply(1.0, it.X.cview(), 0.0, AX.view());
  const solver::ResidualNorms norms =
      solver::eigen_residuals(A.context(), A.comm(), it.X.cview(), AX.cview(), it.lambda, R.view());
  it.r_norm = norms.residual;
  it.x_norm = norms.x;
  return it;
}

// The result LOBPCG would take from the iterate: unit vectors, not converged.
inline solver::LobpcgResult<double> unconverged_result(const LaplacianIterate& it) {
  const int k = static_cast<int>(it.lambda.size());
  solver::LobpcgResult<double> r;
  r.eigenvectors = dense::DenseBlock<double>(Space::host, it.X.rows(), k);
  for (std::int64_t i = 0; i < it.X.rows(); ++i)
    for (int j = 0; j < k; ++j) r.eigenvectors.view()(i, j) = it.X.cview()(i, j) / it.x_norm[j];
  for (int j = 0; j < k; ++j) {
    r.eigenvalues.push_back(it.lambda[j]);
    r.residual_norms.push_back(it.r_norm[j] / it.x_norm[j]);
    r.relative_residuals.push_back(r.residual_norms.back() / it.lambda[j]);
    r.converged.push_back(false);
    r.b_norms.push_back(1.0);
  }
  return r;
}

}  // namespace blockeigs::test
