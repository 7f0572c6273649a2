// Chebyshev-filtered subspace iteration (solver/chfsi) at np 1-4, one rank
// without rows in some cases: many eigenpairs of Laplacians against their
// closed forms with every multiplicity, both ends, the largest with the
// backward test, a SuiteSparse matrix against a dense reference, the start
// block, the monitor and history, the iteration limit, and input errors.
// Every pair is re-checked by plain loops over the whole matrix.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "io/matrix_market.hpp"
#include "solver/chfsi/chebyshev_filter.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/eigen_method.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/dense_reference.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lobpcg_problems.hpp"

namespace blockeigs {
namespace {

using namespace test::lobpcg_problems;
using solver::FilterTuning;

struct Filtered {
  LobpcgResult<double> result;
  test::EigenpairCheck check;
};

Filtered run_filter(const Problem& p, const LobpcgOptions& o, Split split = Split::balanced,
                    const FilterTuning& tuning = {}) {
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, split);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), p.whole, partition);
  Filtered out{solver::chebyshev_filter_eigs<double>(A, o, tuning), {}};
  out.check = test::check_eigenpairs(MPI_COMM_WORLD, A.context(), p.whole, partition, out.result.eigenvalues,
                                     out.result.eigenvectors.cview());
  return out;
}

// Converged; each eigenvalue within the relative test's bound of the exact one
// in order (so every multiplicity is there, nothing missed or repeated);
// residuals as reported and within the test; orthonormal eigenvectors.
void expect_filtered(const Problem& p, const Filtered& r, const LobpcgOptions& o) {
  const auto& res = r.result;
  ASSERT_EQ(res.eigenvalues.size(), std::size_t(o.k));
  EXPECT_TRUE(res.all_converged()) << "after " << res.iterations << " iterations";
  EXPECT_EQ(res.stop, solver::LobpcgStop::converged);
  const std::vector<double> w = wanted(p, o.k, o.which);
  const double norm_a = norm_inf(p.whole);
  for (int j = 0; j < o.k; ++j) {
    const double scale = o.test == StoppingTest::backward ? norm_a + std::abs(w[j]) : std::abs(w[j]);
    EXPECT_LE(std::abs(res.eigenvalues[j] - w[j]), o.tolerance * scale)
        << "pair " << j << ": " << res.eigenvalues[j] << " vs exact " << w[j];
    EXPECT_NEAR(r.check.residuals[j], res.residual_norms[j], 1e-11 * norm_a) << "pair " << j;
    EXPECT_LE(r.check.residuals[j], o.tolerance * scale * (1 + 1e-6)) << "pair " << j;
  }
  EXPECT_LE(r.check.orthonormality, 1e-10);
}

// The closed form's distinct values with their multiplicities, as found.
std::map<long long, int> multiplicities(const std::vector<double>& values) {
  std::map<long long, int> out;
  for (const double v : values) ++out[std::llround(v * 1e9)];
  return out;
}

// 150 pairs: a block above lapack_eigen_min_rows, so the projected problems take LAPACK's solver.
TEST(Chfsi, Laplacian3d150SmallestWithMultiplicities) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 16, 16, 16);
  LobpcgOptions o = options_for(150, SpectrumEnd::smallest, 1e-8);
  const Filtered r = run_filter(p, o);
  expect_filtered(p, r, o);
  EXPECT_GE(r.result.block_size, solver::lapack_eigen_min_rows);
  const std::vector<double> exact(p.exact.begin(), p.exact.begin() + 150);
  // The 150th value may sit inside a cluster the 151st completes: compare the full clusters below it.
  auto found = multiplicities(r.result.eigenvalues), want = multiplicities(exact);
  found.erase(std::prev(found.end()));
  want.erase(std::prev(want.end()));
  EXPECT_EQ(found, want);
}

TEST(Chfsi, Laplacian2dLargestBackwardTestOnAnEmptyRank) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_2d, 40, 30);
  const LobpcgOptions o = options_for(30, SpectrumEnd::largest, 1e-7, StoppingTest::backward);
  const Filtered r = run_filter(p, o, Split::empty_rank);
  expect_filtered(p, r, o);
  for (std::size_t j = 1; j < r.result.eigenvalues.size(); ++j)
    EXPECT_GE(r.result.eigenvalues[j - 1], r.result.eigenvalues[j]);  // largest first
}

TEST(Chfsi, FewPairsAndOwnDegrees) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_1d, 300);
  const LobpcgOptions o = options_for(3, SpectrumEnd::smallest, 1e-8);
  FilterTuning tuning;
  tuning.first_degree = 6;
  tuning.max_degree = 24;
  const Filtered r = run_filter(p, o, Split::balanced, tuning);
  expect_filtered(p, r, o);
  EXPECT_EQ(r.result.block_size, 3 + 16);
}

// nos3 (960 rows, an FEM matrix): its 100 smallest against LAPACK's dense eigenvalues.
TEST(Chfsi, SuiteSparseAgainstADenseReference) {
  const std::optional<Problem> reference = test::with_dense_eigenvalues("nos3.mtx.gz");
  if (!reference) GTEST_SKIP() << "nos3.mtx.gz is not in " << BLOCKEIGS_DATA_DIR;
  const Problem& p = *reference;
  const LobpcgOptions o = options_for(100, SpectrumEnd::smallest, 1e-8);
  const Filtered r = run_filter(p, o);
  expect_filtered(p, r, o);
}

// Through the distributed operator, whose diagonal shift makes each filter step one product: the same pairs.
TEST(Chfsi, ShiftedProductsThroughTheDistributedOperator) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 11, 10);
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        slice_rows(p.whole, partition.begin(rank), partition.end(rank)), partition);
  const std::int64_t m = A.local_rows();
  dense::DenseBlock<double> x(Space::host, m, 2), before(Space::host, m, 2), after(Space::host, m, 2);
  for (std::int64_t i = 0; i < m; ++i) x.view()(i, 0) = x.view()(i, 1) = std::sin(double(A.first_row() + i));
  A.apply(1.0, x.cview(), 0.0, before.view());
  const LobpcgOptions o = options_for(40, SpectrumEnd::smallest, 1e-9);
  Filtered r{solver::chebyshev_filter_eigs<double>(A, o), {}};
  r.check = test::check_eigenpairs(MPI_COMM_WORLD, context, p.whole, partition, r.result.eigenvalues,
                                   r.result.eigenvectors.cview());
  expect_filtered(p, r, o);
  EXPECT_FALSE(r.result.stats.search_in_fp32);  // auto: fp64 on the host
  EXPECT_EQ(r.result.stats.single_filter_products, 0);
  // The shift is gone afterwards: A's products bit for bit.
  A.apply(1.0, x.cview(), 0.0, after.view());
  for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(after.view()(i, 0), before.view()(i, 0)) << "row " << i;
}

// The mixed filter (search_precision fp32): the columns far from convergence filtered with A's fp32 copy, the
// rest in fp64; the same pairs to the test, some products in fp32 and not all.
TEST(Chfsi, MixedFilterThroughTheDistributedOperator) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 16, 15, 14);
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        slice_rows(p.whole, partition.begin(rank), partition.end(rank)), partition);
  LobpcgOptions o = options_for(60, SpectrumEnd::smallest, 1e-9);
  o.search_precision = solver::SearchPrecision::fp32;
  Filtered r{solver::chebyshev_filter_eigs<double>(A, o), {}};
  r.check = test::check_eigenpairs(MPI_COMM_WORLD, context, p.whole, partition, r.result.eigenvalues,
                                   r.result.eigenvectors.cview());
  expect_filtered(p, r, o);
  EXPECT_TRUE(r.result.stats.search_in_fp32);
  EXPECT_GT(r.result.stats.single_filter_products, 0);
  EXPECT_LT(r.result.stats.single_filter_products, r.result.stats.filter_products);
}

// The fp32 copy's own diagonal shift: A_f + s I within fp32 of A_f x + s x, A_f's products bit for bit once
// the shift is 0 again, and a copy made while the parent stands for A + s I holds A's diagonal.
TEST(Chfsi, TheFp32CopyShiftsItsOwnDiagonal) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_2d, 9, 8);
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        slice_rows(p.whole, partition.begin(rank), partition.end(rank)), partition);
  const std::int64_t m = A.local_rows();
  dense::DenseBlock<float> x(Space::host, m, 3), plain(Space::host, m, 3), shifted(Space::host, m, 3),
      again(Space::host, m, 3);
  for (std::int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) x.view()(i, c) = static_cast<float>(std::cos(double(A.first_row() + i) + c));
  const auto product = [&](solver::LinearOperator<float>& op, dense::DenseBlock<float>& y) {
    op.apply(1.0f, x.cview(), 0.0f, y.view());
  };
  std::unique_ptr<solver::LinearOperator<float>> Af = A.rounded_to_single();
  auto* shiftable = dynamic_cast<solver::DiagonalShiftOperator<float>*>(Af.get());
  ASSERT_NE(shiftable, nullptr);
  product(*Af, plain);
  ASSERT_TRUE(shiftable->set_diagonal_shift(-2.5f));
  product(*Af, shifted);
  for (std::int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(shifted.view()(i, c), plain.view()(i, c) - 2.5f * x.view()(i, c), 1e-5) << "row " << i;
  ASSERT_TRUE(shiftable->set_diagonal_shift(0.0f));
  product(*Af, again);
  for (std::int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(again.view()(i, c), plain.view()(i, c)) << "row " << i;
  ASSERT_TRUE(A.set_diagonal_shift(7.0));
  std::unique_ptr<solver::LinearOperator<float>> made_shifted = A.rounded_to_single();
  ASSERT_TRUE(A.set_diagonal_shift(0.0));
  product(*made_shifted, again);
  for (std::int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(again.view()(i, c), plain.view()(i, c)) << "row " << i;
}

TEST(Chfsi, MonitorHistoryAndTheIterationLimit) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_2d, 30, 30);
  LobpcgOptions o = options_for(20, SpectrumEnd::smallest, 1e-10);
  o.max_iterations = 2;
  int reports = 0, last_converged = -1;
  bool saw_last = false;
  o.monitor = [&](const solver::LobpcgProgress& progress) {
    ++reports;
    EXPECT_GE(progress.converged, last_converged);
    last_converged = progress.converged;
    saw_last = saw_last || progress.last;
  };
  const Filtered r = run_filter(p, o);
  EXPECT_EQ(r.result.stop, solver::LobpcgStop::iteration_limit);
  EXPECT_EQ(r.result.iterations, 2);
  EXPECT_EQ(reports, 3);  // the start and two iterations
  EXPECT_TRUE(saw_last);
  EXPECT_EQ(r.result.history.size(), 3u);
  EXPECT_EQ(r.result.eigenvalues.size(), 20u);
}

TEST(Chfsi, FilterGrowsTheWantedEnd) {
  const solver::FilterInterval interval{0.0, 1.0, 3.0, 1};
  EXPECT_DOUBLE_EQ(solver::filter_growth_per_degree(interval, 2.0), 1.0);  // inside [a, b]
  EXPECT_GT(solver::filter_growth_per_degree(interval, 0.5), 1.5);
  EXPECT_GT(solver::filter_growth_per_degree(interval, 0.0), solver::filter_growth_per_degree(interval, 0.5));
}

TEST(Chfsi, InputErrorsOnEveryRank) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_1d, 50);
  test::expect_mentions(test::input_error_message([&] { run_filter(p, options_for(50)); }),
                        {"k = 50 but the matrix has 50 rows"});
  LobpcgOptions o = options_for(10);
  o.block_size = 5;
  test::expect_mentions(test::input_error_message([&] { run_filter(p, o); }), {"block size 5 is smaller than k = 10"});
  FilterTuning bad;
  bad.max_degree = -2;
  test::expect_mentions(test::input_error_message([&] { run_filter(p, options_for(4), Split::balanced, bad); }),
                        {"0 (automatic)"});
}

// The automatic rule: real values take LOBPCG below filter_min_pairs, complex ones the filter wherever it
// applies; B, constraints or a preconditioner take LOBPCG; the filter asked for where it does not apply is an
// input error naming what it does not take.
TEST(EigenMethod, AutomaticRule) {
  using solver::EigenMethod;
  const auto method = [](int k, bool b, bool y, bool m, bool complex, EigenMethod asked = EigenMethod::automatic) {
    return solver::choose_eigen_method(asked, k, b, y, m, complex).method;
  };
  EXPECT_EQ(method(16, false, false, false, false), EigenMethod::lobpcg);
  EXPECT_EQ(method(solver::filter_min_pairs, false, false, false, false), EigenMethod::chebyshev_filter);
  EXPECT_EQ(method(16, false, false, false, true), EigenMethod::chebyshev_filter);
  for (const bool complex : {false, true}) {
    EXPECT_EQ(method(200, true, false, false, complex), EigenMethod::lobpcg);
    EXPECT_EQ(method(200, false, true, false, complex), EigenMethod::lobpcg);
    EXPECT_EQ(method(200, false, false, true, complex), EigenMethod::lobpcg);
    EXPECT_EQ(method(200, false, false, false, complex, EigenMethod::lobpcg), EigenMethod::lobpcg);
    test::expect_mentions(
        test::input_error_message([&] { method(16, true, false, false, complex, EigenMethod::chebyshev_filter); }),
        {"chebyshev_filter", "matrix_b"});
  }
}

}  // namespace
}  // namespace blockeigs
