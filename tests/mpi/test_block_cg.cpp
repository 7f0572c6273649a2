// Block CG at np 1-4 with the real distributed operator (CPU backend):
// known solutions on Laplacians and random SPD matrices, duplicate and zero
// columns, columns that converge at very different rates, one column, a
// matrix that is not positive definite, mismatched blocks, and Jacobi on a
// badly scaled matrix. Solutions are checked against the known X and by an
// independent residual.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"

namespace blockeigs {
namespace {

using solver::BlockCgOptions;
using solver::DistributedOperator;
using solver::RowPartition;

struct Problem {
  dense::Context context = dense::Context::host();
  CsrRows whole;
  RowPartition partition;
  std::unique_ptr<DistributedOperator<double>> A;

  explicit Problem(CsrRows matrix) : whole(std::move(matrix)) {
    partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
    const int rank = test::mpi_rank();
    A = std::make_unique<DistributedOperator<double>>(
        MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t m() const { return A->local_rows(); }
  dense::DenseBlock<double> block(std::int64_t cols) const { return dense::DenseBlock<double>(Space::host, m(), cols); }
};

CsrRows generated(io::GeneratorSpec spec) { return io::generate_rows(spec, 0, io::generated_rows(spec)); }

CsrRows diagonal(const std::vector<double>& d) {
  CsrRows m;
  m.global_rows = m.global_cols = static_cast<std::int64_t>(d.size());
  m.row_offsets.assign(1, 0);
  for (std::size_t i = 0; i < d.size(); ++i) {
    m.col_indices.push_back(static_cast<std::int64_t>(i));
    m.values.push_back(d[i]);
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

// Solves A X = A X_known and checks the error and the true residual.
void check_known_solution(Problem& s, std::int64_t cols, double rtol, double max_error) {
  auto X_known = s.block(cols), B = s.block(cols), X = s.block(cols);
  solver::fill_random(s.context, X_known.view(), 5, s.A->first_row());
  s.A->apply(1.0, X_known.cview(), 0.0, B.view());
  std::fill(X.data(), X.data() + s.m() * cols, 0.0);
  BlockCgOptions options;
  options.rtol = rtol;
  const auto result = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  EXPECT_TRUE(result.all_converged());
  solver::axpby(s.context, -1.0, X_known.cview(), 1.0, X.view());
  const auto error = solver::column_norms(s.context, MPI_COMM_WORLD, X.cview());
  const auto scale = solver::column_norms(s.context, MPI_COMM_WORLD, X_known.cview());
  for (std::int64_t j = 0; j < cols; ++j) {
    EXPECT_LE(error[j] / scale[j], max_error) << "column " << j;
    // The recurrence may drift from the truth by rounding only.
    EXPECT_LE(result.true_residual_norms[j], 10 * rtol * result.rhs_norms[j]) << "column " << j;
  }
}

// The longest stretch of iterations in which no active column's relative
// residual fell below 90% of the level it last fell to: what
// BlockCgOptions::stagnation_window must exceed for a converging run.
int longest_stretch_without_progress(const solver::BlockCgResult& r) {
  std::vector<double> level(r.rhs_norms.size(), 0.0);
  int fallen_at = 0, longest = 0;
  for (std::size_t it = 0; it < r.history.size(); ++it) {
    const int iteration = static_cast<int>(it) + 1;
    for (std::size_t j = 0; j < level.size(); ++j) {
      const double rel = r.history[it][j];
      if (rel == 0) continue;  // done
      if (level[j] == 0 || rel < 0.9 * level[j]) {
        if (level[j] != 0) fallen_at = iteration;
        level[j] = rel;
      }
    }
    longest = std::max(longest, iteration - fallen_at);
  }
  return longest;
}

TEST(BlockCg, LaplacianKnownSolutions) {
  Problem s(generated({io::GeneratorKind::laplacian_2d, 40, 40, 1, 5}));
  // cond ~ 660: error <= cond * relative residual.
  check_known_solution(s, 8, 1e-10, 1e-7);
}

TEST(BlockCg, RandomSpdKnownSolutions) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::random_spd;
  spec.n = 500;
  spec.nnz_per_row = 7;
  spec.seed = 2;
  Problem s(generated(spec));
  check_known_solution(s, 5, 1e-10, 1e-8);
}

TEST(BlockCg, OneColumn) {
  Problem s(generated({io::GeneratorKind::laplacian_1d, 150, 1, 1, 3}));
  check_known_solution(s, 1, 1e-9, 1e-4);
}

TEST(BlockCg, DuplicateAndZeroColumns) {
  Problem s(generated({io::GeneratorKind::laplacian_2d, 20, 15, 1, 5}));
  auto b = s.block(1), B = s.block(4), X = s.block(4);
  solver::fill_random(s.context, b.view(), 9, s.A->first_row());
  for (std::int64_t i = 0; i < s.m(); ++i) {
    const double v = b.data()[i];
    B.data()[i * 4 + 0] = v;
    B.data()[i * 4 + 1] = 0.0;  // zero column
    B.data()[i * 4 + 2] = v;    // duplicate
    B.data()[i * 4 + 3] = 2 * v;
  }
  std::fill(X.data(), X.data() + s.m() * 4, 1.0);  // a start that is wrong for every column
  BlockCgOptions options;
  options.rtol = 1e-10;
  int first_width = 0;
  options.monitor = [&](const solver::BlockCgProgress& p) {
    if (p.iteration == 1) first_width = p.search_width;
  };
  const auto result = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  ASSERT_TRUE(result.all_converged());
  // The start residuals b - A1, -A1, b - A1, 2b - A1 span two directions: the dependent
  // ones are dropped from the first search block instead of breaking it. (Later blocks
  // may regain a direction: rounding noise grows relative to the shrinking residuals.)
  EXPECT_EQ(first_width, 2);
  for (std::int64_t i = 0; i < s.m(); ++i) {
    const double* x = X.data() + i * 4;
    EXPECT_NEAR(x[2], x[0], 1e-8);
    EXPECT_NEAR(x[3], 2 * x[0], 1e-8);
    EXPECT_NEAR(x[1], 0.0, 1e-8);
  }
}

TEST(BlockCg, ZeroColumnStopsAtOnce) {
  Problem s(generated({io::GeneratorKind::laplacian_1d, 60, 1, 1, 3}));
  auto B = s.block(2), X = s.block(2);
  solver::fill_random(s.context, B.view(), 4, s.A->first_row());
  for (std::int64_t i = 0; i < s.m(); ++i) B.data()[i * 2 + 1] = 0.0;
  std::fill(X.data(), X.data() + s.m() * 2, 0.0);
  const auto result = solver::block_cg<double>(*s.A, B.cview(), X.view(), {});
  EXPECT_TRUE(result.converged[1]);
  EXPECT_EQ(result.iterations[1], 0);
  for (std::int64_t i = 0; i < s.m(); ++i) EXPECT_EQ(X.data()[i * 2 + 1], 0.0);
  EXPECT_TRUE(result.converged[0]);
  EXPECT_GT(result.iterations[0], 5);
}

TEST(BlockCg, ColumnsConvergeAtTheirOwnRates) {
  // Column 0 is an eigenvector (converges in one step), column 1 random.
  const std::int64_t n = 200;
  Problem s(generated({io::GeneratorKind::laplacian_1d, n, 1, 1, 3}));
  auto B = s.block(2), X = s.block(2);
  solver::fill_random(s.context, B.view(), 8, s.A->first_row());
  for (std::int64_t i = 0; i < s.m(); ++i)
    B.data()[i * 2] = std::sin(std::numbers::pi * double(s.A->first_row() + i + 1) / double(n + 1));
  std::fill(X.data(), X.data() + s.m() * 2, 0.0);
  BlockCgOptions options;
  options.rtol = 1e-9;
  const auto result = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  ASSERT_TRUE(result.all_converged());
  EXPECT_LE(result.iterations[0], 2);
  EXPECT_GE(result.iterations[1], 20);
  ASSERT_FALSE(result.history.empty());
  EXPECT_EQ(result.history.back()[0], 0.0);  // done columns are not tracked further
}

TEST(BlockCg, NotPositiveDefiniteIsReported) {
  std::vector<double> d(40);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = i % 2 ? -1.0 - double(i) : 1.0 + double(i);
  Problem s(diagonal(d));
  auto B = s.block(3), X = s.block(3);
  solver::fill_random(s.context, B.view(), 1, s.A->first_row());
  std::fill(X.data(), X.data() + s.m() * 3, 0.0);
  try {
    solver::block_cg<double>(*s.A, B.cview(), X.view(), {});
    ADD_FAILURE() << "no error";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("not positive definite"), std::string::npos) << e.what();
  }
}

TEST(BlockCg, MismatchedBlocksAreRejected) {
  Problem s(generated({io::GeneratorKind::laplacian_1d, 30, 1, 1, 3}));
  dense::DenseBlock<double> B(Space::host, s.m() + 1, 2), X(Space::host, s.m() + 1, 2), X3 = s.block(3),
                                                                                        B2 = s.block(2);
  EXPECT_THROW(solver::block_cg<double>(*s.A, B.cview(), X.view(), {}), InputError);
  EXPECT_THROW(solver::block_cg<double>(*s.A, B2.cview(), X3.view(), {}), InputError);
}

// D A D, A the 24 x 24 2D Laplacian, with D spanning four orders of magnitude.
CsrRows badly_scaled_laplacian() {
  CsrRows m = generated({io::GeneratorKind::laplacian_2d, 24, 24, 1, 5});
  auto scale = [](std::int64_t i) { return std::pow(10.0, 2.0 * std::sin(0.37 * double(i))); };
  for (std::int64_t i = 0; i < m.local_rows(); ++i)
    for (std::int64_t k = m.row_offsets[i]; k < m.row_offsets[i + 1]; ++k)
      m.values[k] *= scale(i) * scale(m.col_indices[k]);
  return m;
}

TEST(BlockCg, JacobiHelpsOnABadlyScaledMatrix) {
  // Jacobi undoes D.
  Problem s(badly_scaled_laplacian());
  auto B = s.block(4), X = s.block(4);
  solver::fill_random(s.context, B.view(), 3, s.A->first_row());
  BlockCgOptions options;
  options.rtol = 1e-8;
  std::fill(X.data(), X.data() + s.m() * 4, 0.0);
  const auto plain = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  solver::JacobiPreconditioner<double> jacobi(*s.A);
  std::fill(X.data(), X.data() + s.m() * 4, 0.0);
  const auto preconditioned = solver::block_cg<double>(*s.A, B.cview(), X.view(), options, &jacobi);
  EXPECT_TRUE(preconditioned.all_converged());
  EXPECT_LT(preconditioned.total_iterations * 2, plain.total_iterations + 1)
      << preconditioned.total_iterations << " vs " << plain.total_iterations;
  for (std::int64_t j = 0; j < 4; ++j)
    EXPECT_LE(preconditioned.true_residual_norms[j], 10 * options.rtol * preconditioned.rhs_norms[j]);
}

// ---- stagnation and the floor ------------------------------------------------

// An rtol below eps: the recurrence residuals fall on, the true ones stop at
// eps ||A|| ||x|| / ||b||. The run stops once every column's recurrence
// residual is below eps, unconverged, and reports the floor, which the true
// residuals meet.
TEST(BlockCg, StopsAtTheFloorForAToleranceBelowIt) {
  Problem s(generated({io::GeneratorKind::laplacian_2d, 30, 30, 1, 5}));
  auto B = s.block(3), X = s.block(3);
  solver::fill_random(s.context, B.view(), 4, s.A->first_row());
  std::fill(X.data(), X.data() + s.m() * 3, 0.0);
  BlockCgOptions options;
  options.rtol = 1e-17;
  const auto r = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  EXPECT_EQ(r.stop, solver::BlockCgStop::stagnated);
  ASSERT_TRUE(r.stall.has_value());
  EXPECT_TRUE(r.stall->below_floor);
  EXPECT_LT(r.total_iterations, 200);  // converging to 1e-10 takes ~70; max_iterations is 10000
  EXPECT_EQ(r.stall->columns, (std::vector<int>{0, 1, 2}));
  EXPECT_GT(r.stall->norm_estimate, 7.0);  // ||A|| < 8: the power method's bound from below
  EXPECT_LE(r.stall->norm_estimate, 8.0);
  for (int j = 0; j < 3; ++j) {
    EXPECT_FALSE(r.converged[j]);
    EXPECT_LT(r.stall->lowest[j], 2.3e-16);
    const double true_relative = r.true_residual_norms[j] / r.rhs_norms[j];
    EXPECT_GT(true_relative, 0.1 * r.stall->floor[j]) << "column " << j;
    EXPECT_LT(true_relative, 10 * r.stall->floor[j]) << "column " << j;
  }
}

// The badly scaled matrix without a preconditioner: residuals that wander for
// thousands of iterations. A window of 200 stops it, naming every column, above
// the floor; Jacobi's converging run never comes near the default window.
TEST(BlockCg, StagnationWindowStopsAStuckRun) {
  Problem s(badly_scaled_laplacian());
  auto B = s.block(4), X = s.block(4);
  solver::fill_random(s.context, B.view(), 3, s.A->first_row());
  std::fill(X.data(), X.data() + s.m() * 4, 0.0);
  BlockCgOptions options;
  options.stagnation_window = 200;
  const auto r = solver::block_cg<double>(*s.A, B.cview(), X.view(), options);
  EXPECT_EQ(r.stop, solver::BlockCgStop::stagnated);
  ASSERT_TRUE(r.stall.has_value());
  EXPECT_FALSE(r.stall->below_floor);
  EXPECT_EQ(r.total_iterations - r.stall->fallen_at, 200);
  EXPECT_EQ(r.stall->columns.size() + std::count(r.converged.begin(), r.converged.end(), true), 4u);
  for (std::size_t c = 0; c < r.stall->columns.size(); ++c) EXPECT_GT(r.stall->lowest[c], r.stall->floor[c]);

  solver::JacobiPreconditioner<double> jacobi(*s.A);
  std::fill(X.data(), X.data() + s.m() * 4, 0.0);
  const auto preconditioned = solver::block_cg<double>(*s.A, B.cview(), X.view(), BlockCgOptions{}, &jacobi);
  EXPECT_EQ(preconditioned.stop, solver::BlockCgStop::converged);
  EXPECT_LT(longest_stretch_without_progress(preconditioned), BlockCgOptions{}.stagnation_window / 10);
}

// The watch is host bookkeeping only: a converging run gives the same bits
// with it as without it.
TEST(BlockCg, WatchLeavesConvergingRunsBitwiseUnchanged) {
  Problem s(generated({io::GeneratorKind::laplacian_2d, 20, 15, 1, 5}));
  auto B = s.block(4), X = s.block(4), Y = s.block(4);
  solver::fill_random(s.context, B.view(), 8, s.A->first_row());
  std::fill(X.data(), X.data() + s.m() * 4, 0.0);
  std::fill(Y.data(), Y.data() + s.m() * 4, 0.0);
  BlockCgOptions watched, unwatched;
  watched.rtol = unwatched.rtol = 1e-12;
  unwatched.stagnation_window = 0;
  const auto a = solver::block_cg<double>(*s.A, B.cview(), X.view(), watched);
  const auto b = solver::block_cg<double>(*s.A, B.cview(), Y.view(), unwatched);
  EXPECT_EQ(a.stop, solver::BlockCgStop::converged);
  EXPECT_FALSE(a.stall.has_value());
  EXPECT_EQ(a.total_iterations, b.total_iterations);
  EXPECT_EQ(a.residual_norms, b.residual_norms);
  EXPECT_EQ(a.true_residual_norms, b.true_residual_norms);
  EXPECT_EQ(0, std::memcmp(X.data(), Y.data(), sizeof(double) * s.m() * 4));
  EXPECT_LT(longest_stretch_without_progress(a), 10);
}

TEST(BlockCg, NegativeStagnationWindowIsRefused) {
  Problem s(generated({io::GeneratorKind::laplacian_1d, 30, 1, 1, 3}));
  auto B = s.block(1), X = s.block(1);
  BlockCgOptions options;
  options.stagnation_window = -1;
  EXPECT_THROW(solver::block_cg<double>(*s.A, B.cview(), X.view(), options), InputError);
}

}  // namespace
}  // namespace blockeigs
