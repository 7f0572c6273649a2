// Problems and a runner for the MPI LOBPCG tests: Laplacians and diagonal
// matrices with their exact spectra, LOBPCG run over a communicator (balanced
// rows or a rank without rows, optional Jacobi and start block) with every
// pair re-checked by plain loops over the whole matrix, and the checks of a
// solved problem.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs::test::lobpcg_problems {

using solver::LobpcgOptions;
using solver::LobpcgResult;
using solver::SpectrumEnd;
using solver::StoppingTest;

inline int world_size() {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

struct Problem {
  CsrRows whole;
  std::vector<double> exact;  // ascending; empty when unknown
};

inline Problem laplacian(io::GeneratorKind kind, std::int64_t nx, std::int64_t ny = 1, std::int64_t nz = 1) {
  io::GeneratorSpec spec;
  spec.kind = kind;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.stencil = kind == io::GeneratorKind::laplacian_1d ? 3 : kind == io::GeneratorKind::laplacian_2d ? 5 : 7;
  Problem p;
  p.whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  p.exact = io::laplacian_eigenvalues(spec);
  return p;
}

inline Problem diagonal(std::vector<double> d) {
  Problem p;
  p.whole = diagonal_matrix(d);
  std::sort(d.begin(), d.end());
  p.exact = d;
  return p;
}

enum class Split { balanced, empty_rank };

inline solver::RowPartition partition_of(const Problem& p, MPI_Comm comm, Split split) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return split == Split::balanced ? solver::RowPartition::balanced(p.whole.row_offsets, size)
                                  : partition_with_empty_rank(p.whole.global_rows, size);
}

struct Solved {
  LobpcgResult<double> result;
  EigenpairCheck check;
  std::vector<std::int64_t> widths;  // of every operator apply
};

enum class Precond { none, jacobi };

// Runs LOBPCG on the problem over `comm`, with an optional start block given
// as a function of (global row, column), and checks the pairs independently.
template <class StartFn = std::nullptr_t>
inline Solved run(const Problem& p, const LobpcgOptions& options, Precond precond = Precond::none,
                  Split split = Split::balanced, MPI_Comm comm = MPI_COMM_WORLD, StartFn start_fn = nullptr,
                  int start_cols = 0) {
  const solver::RowPartition partition = partition_of(p, comm, split);
  CsrTestOperator<double> A(comm, dense::Context::host(), p.whole, partition);
  std::unique_ptr<solver::JacobiPreconditioner<double>> jacobi;
  if (precond == Precond::jacobi) jacobi = std::make_unique<solver::JacobiPreconditioner<double>>(A);
  std::optional<dense::DenseBlock<double>> start;
  std::optional<dense::ConstDenseView<double>> start_view;
  if constexpr (!std::is_same_v<StartFn, std::nullptr_t>) {
    start.emplace(Space::host, A.local_rows(), start_cols);
    for (std::int64_t i = 0; i < A.local_rows(); ++i)
      for (int j = 0; j < start_cols; ++j) start->view()(i, j) = start_fn(A.first_row() + i, j);
    start_view = start->cview();
  }
  Solved out{solver::lobpcg<double>(A, options, jacobi.get(), start_view), {}, A.widths()};
  out.check =
      check_eigenpairs(comm, A.context(), p.whole, partition, out.result.eigenvalues, out.result.eigenvectors.cview());
  return out;
}

// Matrix infinity norm: an upper bound on ||A||_2 for symmetric A.
inline double norm_inf(const CsrRows& A) {
  double m = 0;
  for (std::int64_t i = 0; i < A.local_rows(); ++i) {
    double s = 0;
    for (std::int64_t p = A.row_offsets[i]; p < A.row_offsets[i + 1]; ++p) s += std::abs(A.values[p]);
    m = std::max(m, s);
  }
  return m;
}

// The k wanted exact eigenvalues in the solver's order.
inline std::vector<double> wanted(const Problem& p, int k, SpectrumEnd which) {
  std::vector<double> w;
  for (int j = 0; j < k; ++j)
    w.push_back(which == SpectrumEnd::smallest ? p.exact[j] : p.exact[p.exact.size() - 1 - j]);
  return w;
}

// Converged, eigenvalues within rel_tol of the exact ones, residuals as
// reported and as the test demands, orthonormal eigenvectors.
inline void expect_solved(const Problem& p, const Solved& r, const LobpcgOptions& o, double rel_tol) {
  const auto& res = r.result;
  ASSERT_EQ(res.eigenvalues.size(), std::size_t(o.k));
  EXPECT_TRUE(res.all_converged()) << "after " << res.iterations << " iterations";
  const double norm_a = norm_inf(p.whole);
  if (!p.exact.empty()) {
    const std::vector<double> w = wanted(p, o.k, o.which);
    for (int j = 0; j < o.k; ++j)
      EXPECT_LE(std::abs(res.eigenvalues[j] - w[j]), rel_tol * std::abs(w[j]))
          << "pair " << j << ": " << res.eigenvalues[j] << " vs exact " << w[j];
  }
  for (int j = 0; j < o.k; ++j) {
    const double lambda = std::abs(res.eigenvalues[j]);
    // The solver's residual is computed from an explicit A x: it matches the
    // plain-loop one to rounding (~ eps ||A|| per entry).
    EXPECT_NEAR(r.check.residuals[j], res.residual_norms[j], 1e-12 * norm_a) << "pair " << j;
    const double bound = o.test == StoppingTest::backward ? o.tolerance * (norm_a + lambda) : o.tolerance * lambda;
    EXPECT_LE(r.check.residuals[j], bound * (1 + 1e-6)) << "pair " << j;
    EXPECT_NEAR(res.relative_residuals[j], res.residual_norms[j] / lambda, 1e-12 * res.relative_residuals[j]);
  }
  EXPECT_LE(r.check.orthonormality, 1e-10);
  ASSERT_EQ(res.history.size(), std::size_t(res.iterations + 1));
  EXPECT_EQ(res.history.back().eigenvalues, res.eigenvalues);
}

inline LobpcgOptions options_for(int k, SpectrumEnd which = SpectrumEnd::smallest, double tol = 1e-6,
                                 StoppingTest test = StoppingTest::relative) {
  LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = tol;
  o.test = test;
  o.max_iterations = 3000;
  return o;
}

}  // namespace blockeigs::test::lobpcg_problems
