// Every eigenpair in a window [a, b] (solver/window) at np 1-4, one rank
// without rows in some cases: Laplacian windows against their closed forms
// with every multiplicity (one slice and several), a SuiteSparse matrix's
// interior window against a dense reference, an empty window inside the
// spectrum and one outside it, the density of states' count, the filter's
// shape, and input errors. Every pair is re-checked by plain loops over the
// whole matrix.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "io/matrix_market.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/window/slice_merge.hpp"
#include "solver/window/window.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/dense_reference.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lobpcg_problems.hpp"

namespace blockeigs {
namespace {

using namespace test::lobpcg_problems;
using solver::WindowOptions;

struct Windowed {
  solver::WindowResult<double> result;
  test::EigenpairCheck check;
};

LobpcgOptions window_options(double tol, StoppingTest test = StoppingTest::relative) {
  LobpcgOptions o;
  o.tolerance = tol;
  o.test = test;
  o.max_iterations = 100;
  return o;
}

// `groups`: slices may run side by side on groups of ranks (each a copy of A from this rank's rows).
Windowed run_window(const Problem& p, const LobpcgOptions& o, const WindowOptions& w, Split split = Split::balanced,
                    bool groups = false) {
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, split);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  const CsrRows rows = slice_rows(p.whole, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, rows, partition);
  const solver::GroupOperatorFactory<double> factory =
      groups ? solver::distributed_group_operator<double>(rows, context) : solver::GroupOperatorFactory<double>{};
  Windowed out{solver::window_eigs<double>(A, o, w, factory), {}};
  out.check = test::check_eigenpairs(MPI_COMM_WORLD, A.context(), p.whole, partition, out.result.pairs.eigenvalues,
                                     out.result.pairs.eigenvectors.cview());
  return out;
}

std::vector<double> exact_in(const Problem& p, double a, double b) {
  std::vector<double> out;
  for (const double v : p.exact)
    if (v >= a && v <= b) out.push_back(v);
  return out;
}

// Every exact eigenvalue in the window once, in order, within the test's bound (so each multiplicity is
// there, none missed or repeated); residuals as reported and within the test; orthonormal vectors.
void expect_window(const Problem& p, const Windowed& r, const LobpcgOptions& o, double a, double b,
                   double orthonormality = 1e-10) {
  const auto& res = r.result.pairs;
  const std::vector<double> want = exact_in(p, a, b);
  ASSERT_EQ(res.eigenvalues.size(), want.size());
  EXPECT_TRUE(res.all_converged());
  EXPECT_EQ(res.stop, solver::LobpcgStop::converged);
  const double norm_a = norm_inf(p.whole);
  for (std::size_t j = 0; j < want.size(); ++j) {
    const double scale = o.test == StoppingTest::backward ? norm_a + std::abs(want[j]) : std::abs(want[j]);
    EXPECT_LE(std::abs(res.eigenvalues[j] - want[j]), o.tolerance * scale)
        << "pair " << j << ": " << res.eigenvalues[j] << " vs exact " << want[j];
    EXPECT_NEAR(r.check.residuals[j], res.residual_norms[j], 1e-11 * norm_a) << "pair " << j;
    EXPECT_LE(r.check.residuals[j], o.tolerance * scale * (1 + 1e-6)) << "pair " << j;
  }
  if (!want.empty()) {
    EXPECT_LE(r.check.orthonormality, orthonormality);
  }
  int found = 0;
  for (const auto& s : r.result.report.slices) {
    found += s.found;
    EXPECT_TRUE(s.complete);
  }
  EXPECT_EQ(found, static_cast<int>(want.size()));
}

std::map<long long, int> multiplicities(const std::vector<double>& values) {
  std::map<long long, int> out;
  for (const double v : values) ++out[std::llround(v * 1e8)];
  return out;
}

// The 12^3 Laplacian's [1.0, 1.6]: 37 eigenvalues, most of them 3- and 6-fold (the 20^3 Laplacian's
// [1.0, 1.3] of issue 82 runs through the app: tests/apps).
TEST(Window, Laplacian3dInteriorWindowWithMultiplicities) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  const LobpcgOptions o = window_options(1e-9);
  WindowOptions w;
  w.lower = 1.0;
  w.upper = 1.6;
  const Windowed r = run_window(p, o, w);
  const std::size_t count = exact_in(p, 1.0, 1.6).size();
  ASSERT_EQ(count, 37u);
  expect_window(p, r, o, 1.0, 1.6);
  EXPECT_EQ(multiplicities(r.result.pairs.eigenvalues), multiplicities(exact_in(p, 1.0, 1.6)));
  // The density's count: within five standard errors and its smoothing of the true 37.
  const solver::CountEstimate& e = r.result.report.expected;
  EXPECT_GT(e.error, 0);
  EXPECT_LE(std::abs(e.count - 37), 5 * e.error + 4) << e.count << " +- " << e.error;
  EXPECT_EQ(r.result.report.slices.size(), 1u);
  EXPECT_LE(r.result.report.spectrum_lower, p.exact.front());
  EXPECT_GE(r.result.report.spectrum_upper, p.exact.back());
}

// Three slices of the same window, on a rank without rows: the pairs at the slices' shared ends once each.
TEST(Window, SlicesMeetWithoutLossOrRepeatOnAnEmptyRank) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  const LobpcgOptions o = window_options(1e-9);
  WindowOptions w;
  w.lower = 1.0;
  w.upper = 1.6;
  w.slices = 3;
  const Windowed r = run_window(p, o, w, Split::empty_rank);
  // Vectors of different slices are orthogonal as eigenvectors of different eigenvalues are, to about
  // their residuals over the gap between them (1e-9 relative here); within a slice, to rounding.
  expect_window(p, r, o, 1.0, 1.6, 1e-8);
  EXPECT_EQ(multiplicities(r.result.pairs.eigenvalues), multiplicities(exact_in(p, 1.0, 1.6)));
  ASSERT_EQ(r.result.report.slices.size(), 3u);
  for (std::size_t i = 1; i < 3; ++i) EXPECT_EQ(r.result.report.slices[i].lower, r.result.report.slices[i - 1].upper);
}

// The mixed filter (search_precision fp32): every column before the first Rayleigh-Ritz and those far from
// convergence through A's fp32 copy, the rest in fp64; the same pairs, once each across three slices.
TEST(Window, MixedFilterSlicesOnAnEmptyRank) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  LobpcgOptions o = window_options(1e-9);
  o.search_precision = SearchPrecision::fp32;
  WindowOptions w;
  w.lower = 1.0;
  w.upper = 1.6;
  w.slices = 3;
  const Windowed r = run_window(p, o, w, Split::empty_rank);
  expect_window(p, r, o, 1.0, 1.6, 1e-8);
  EXPECT_EQ(multiplicities(r.result.pairs.eigenvalues), multiplicities(exact_in(p, 1.0, 1.6)));
  const solver::LobpcgStats& stats = r.result.pairs.stats;
  EXPECT_TRUE(stats.search_in_fp32);
  EXPECT_GT(stats.single_filter_products, 0);
  EXPECT_LT(stats.single_filter_products, stats.filter_products);
  std::int64_t single = 0;
  for (const solver::SliceReport& slice : r.result.report.slices) single += slice.single_products;
  EXPECT_EQ(single, stats.single_filter_products);
}

// Slices side by side on groups of ranks (as many as the slices allow: groups of 1 and 2 ranks at np 3, one
// with an empty rank at np 4), their filters mixed: the pairs once each, the groups' shared ends merged.
TEST(Window, SlicesSideBySideOnGroupsOfRanks) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  LobpcgOptions o = window_options(1e-9);
  o.search_precision = SearchPrecision::fp32;
  WindowOptions w;
  w.lower = 1.0;
  w.upper = 1.6;
  w.slices = 2;
  // The memory check before the first slice: this rank's rows in its group, the largest block, the pairs.
  std::optional<solver::WindowMemory> memory;
  w.check_memory = [&](const solver::WindowMemory& m) { memory = m; };
  const Windowed r = run_window(p, o, w, Split::empty_rank, true);
  ASSERT_TRUE(memory);
  EXPECT_GE(memory->pairs, 37);
  EXPECT_GE(memory->block, 16);
  EXPECT_TRUE(memory->mixed);
  EXPECT_GE(memory->bytes(), memory->rows * 8 * 3 * memory->block);
  expect_window(p, r, o, 1.0, 1.6, 1e-8);
  EXPECT_EQ(multiplicities(r.result.pairs.eigenvalues), multiplicities(exact_in(p, 1.0, 1.6)));
  const solver::WindowReport& report = r.result.report;
  const int ranks = test::mpi_size(MPI_COMM_WORLD);
  EXPECT_EQ(report.groups, std::min(2, ranks));
  ASSERT_EQ(report.slices.size(), 2u);
  EXPECT_EQ(report.slices[0].group, 0);
  EXPECT_EQ(report.slices[1].group, ranks > 1 ? 1 : 0);
  EXPECT_TRUE(r.result.pairs.stats.search_in_fp32);
  EXPECT_GT(r.result.pairs.stats.single_filter_products, 0);
  // Three slices on two groups (at np 2-4): one shared end within a group, one between groups.
  w.slices = 3;
  w.groups = std::min(2, ranks);
  o.search_precision = SearchPrecision::fp64;
  const Windowed three = run_window(p, o, w, Split::balanced, true);
  expect_window(p, three, o, 1.0, 1.6, 1e-8);
  EXPECT_EQ(three.result.report.groups, w.groups);
}

// The merge at a shared end of two groups, on a diagonal A whose eigenvalue 1 is 3-fold: two of its vectors
// below and a rotated basis of all three above keep one new direction (the third vector, once); a basis of
// the two below's span adds none; a vector orthogonal to them is kept as it is.
TEST(Window, MergeKeepsAMultipleEigenvalueOnce) {
  const std::vector<double> d{0.5, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto n = static_cast<std::int64_t>(d.size());
  CsrRows whole;
  whole.global_rows = whole.global_cols = n;
  for (std::int64_t i = 0; i <= n; ++i) whole.row_offsets.push_back(i);
  for (std::int64_t i = 0; i < n; ++i) whole.col_indices.push_back(i);
  whole.values = d;
  const Problem p{whole, d};
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  // Pairs with global column vectors `v` (n entries each), this rank's rows.
  const auto pairs = [&](const std::vector<std::vector<double>>& v, const std::vector<double>& values) {
    solver::SliceOutcome<double> s;
    s.vectors = dense::DenseBlock<double>(Space::host, A.local_rows(), static_cast<std::int64_t>(v.size()));
    for (std::int64_t i = 0; i < A.local_rows(); ++i)
      for (std::size_t j = 0; j < v.size(); ++j) s.vectors.view()(i, j) = v[j][A.first_row() + i];
    s.values = values;
    s.residuals.assign(values.size(), 0.0);
    return s;
  };
  const auto unit = [&](std::int64_t i) {
    std::vector<double> e(d.size(), 0.0);
    e[i] = 1;
    return e;
  };
  const solver::SliceOutcome<double> below = pairs({unit(0), unit(1), unit(2)}, {0.5, 1, 1});
  // An orthonormal basis of span(e1, e2, e3), none of it along one axis, then e4.
  const double c = 1 / std::sqrt(3.0), a = 1 / std::sqrt(2.0), b = 1 / std::sqrt(6.0);
  std::vector<double> q1(d.size()), q2(d.size()), q3(d.size());
  q1[1] = q1[2] = q1[3] = c;
  q2[1] = a, q2[2] = -a;
  q3[1] = q3[2] = b, q3[3] = -2 * b;
  solver::SliceOutcome<double> above = pairs({q1, q2, q3, unit(4)}, {1, 1, 1, 2});
  solver::MergeOutcome m = solver::merge_shared_end<double>(A, MPI_COMM_WORLD, below, above, 0.9, 1.1);
  EXPECT_EQ(m.candidates_below, 2);
  EXPECT_EQ(m.candidates_above, 3);
  EXPECT_EQ(m.kept, 1);
  ASSERT_EQ(above.values.size(), 2u);
  EXPECT_NEAR(above.values[0], 1, 1e-14);
  EXPECT_EQ(above.values[1], 2);
  EXPECT_LE(above.residuals[0], 1e-14);
  // The pair kept is +-e3, on whichever rank holds row 3; e4 stays.
  for (std::int64_t i = 0; i < A.local_rows(); ++i) {
    const std::int64_t g = A.first_row() + i;
    EXPECT_NEAR(std::abs(above.vectors.view()(i, 0)), g == 3 ? 1.0 : 0.0, 1e-14) << "row " << g;
    EXPECT_EQ(above.vectors.view()(i, 1), g == 4 ? 1.0 : 0.0) << "row " << g;
  }
  solver::SliceOutcome<double> again = pairs({q2, unit(4)}, {1, 2});  // q2 lies in span(e1, e2)
  m = solver::merge_shared_end<double>(A, MPI_COMM_WORLD, below, again, 0.9, 1.1);
  EXPECT_EQ(m.kept, 0);
  EXPECT_EQ(again.values, std::vector<double>{2});
  solver::SliceOutcome<double> fresh = pairs({unit(3), unit(4)}, {1, 2});
  m = solver::merge_shared_end<double>(A, MPI_COMM_WORLD, below, fresh, 0.9, 1.1);
  EXPECT_EQ(m.kept, 1);
  EXPECT_EQ(fresh.values, (std::vector<double>{1, 2}));
}

// A window whose ends sit on eigenvalues (of multiplicity 3): both ends count (a <= lambda <= b).
TEST(Window, EndsOnEigenvaluesCount) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  const double a = p.exact[10], b = p.exact[40];
  const LobpcgOptions o = window_options(1e-10);
  WindowOptions w;
  w.lower = a * (1 - 1e-12);
  w.upper = b * (1 + 1e-12);
  const Windowed r = run_window(p, o, w);
  expect_window(p, r, o, w.lower, w.upper);
}

// nos3 (960 rows, an FEM matrix): the eigenvalues 100 to 159 against LAPACK's.
TEST(Window, SuiteSparseInteriorAgainstADenseReference) {
  const std::optional<Problem> reference = test::with_dense_eigenvalues("nos3.mtx.gz");
  if (!reference) GTEST_SKIP() << "nos3.mtx.gz is not in " << BLOCKEIGS_DATA_DIR;
  const Problem& p = *reference;
  const std::vector<double>& values = p.exact;
  WindowOptions w;
  w.lower = 0.5 * (values[99] + values[100]);
  w.upper = 0.5 * (values[159] + values[160]);
  const LobpcgOptions o = window_options(1e-8);
  const Windowed r = run_window(p, o, w);
  expect_window(p, r, o, w.lower, w.upper);
}

// Through the distributed operator (its diagonal shift: one product a filter step): the same pairs, A restored.
TEST(Window, ShiftedProductsThroughTheDistributedOperator) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_2d, 30, 25);
  const solver::RowPartition partition = partition_of(p, MPI_COMM_WORLD, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        slice_rows(p.whole, partition.begin(rank), partition.end(rank)), partition);
  const LobpcgOptions o = window_options(1e-9);
  WindowOptions w;
  w.lower = 3.0;
  w.upper = 3.4;
  Windowed r{solver::window_eigs<double>(A, o, w), {}};
  r.check = test::check_eigenpairs(MPI_COMM_WORLD, context, p.whole, partition, r.result.pairs.eigenvalues,
                                   r.result.pairs.eigenvectors.cview());
  expect_window(p, r, o, 3.0, 3.4);
}

// Between two neighbouring eigenvalues of a path's Laplacian: no pair, said so, no hang; and outside the spectrum.
TEST(Window, EmptyWindowsInsideAndOutsideTheSpectrum) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_1d, 60);
  const LobpcgOptions o = window_options(1e-9);
  WindowOptions w;
  w.lower = p.exact[30] + 0.2 * (p.exact[31] - p.exact[30]);
  w.upper = p.exact[30] + 0.8 * (p.exact[31] - p.exact[30]);
  const Windowed inside = run_window(p, o, w);
  EXPECT_TRUE(inside.result.pairs.eigenvalues.empty());
  EXPECT_FALSE(inside.result.report.outside_spectrum);
  EXPECT_TRUE(inside.result.pairs.all_converged());
  ASSERT_EQ(inside.result.report.slices.size(), 1u);
  EXPECT_TRUE(inside.result.report.slices[0].complete);
  w.lower = 20;
  w.upper = 30;
  const Windowed outside = run_window(p, o, w);
  EXPECT_TRUE(outside.result.pairs.eigenvalues.empty());
  EXPECT_TRUE(outside.result.report.outside_spectrum);
  EXPECT_TRUE(outside.result.report.slices.empty());
}

// The damped filter: near 1 inside the window, about a half at its ends, small far outside, ripples small.
TEST(Window, FilterShape) {
  const solver::SpectrumScale scale{6.0, 6.1};
  const solver::WindowFilter f = solver::window_filter(scale, 1.0, 1.3, 0, 2, 20000);
  EXPECT_EQ(f.degree(), static_cast<int>(std::ceil(2 * M_PI / (std::acos(-5.0 / 6.1) - std::acos(-4.7 / 6.1)))));
  EXPECT_GT(f.value(1.15), 0.9);
  EXPECT_NEAR(f.value(1.0), 0.5, 0.1);
  EXPECT_NEAR(f.value(1.3), 0.5, 0.1);
  EXPECT_LT(std::abs(f.value(0.3)), 2e-2);
  EXPECT_LT(std::abs(f.value(3.0)), 2e-2);
  for (double x = -0.1; x < 12.1; x += 0.01) EXPECT_LE(std::abs(f.value(x)), 1.1) << x;
  EXPECT_EQ(solver::window_filter(scale, 1.0, 1.3, 40, 2, 20000).degree(), 40);  // a degree of one's own
}

TEST(Window, InputErrorsOnEveryRank) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_1d, 50);
  WindowOptions w;
  w.lower = 2;
  w.upper = 1;
  test::expect_mentions(test::input_error_message([&] { run_window(p, window_options(1e-8), w); }),
                        {"eigensolver.interval", "a < b", "[2, 1]"});
  w.upper = std::numeric_limits<double>::infinity();
  test::expect_mentions(test::input_error_message([&] { run_window(p, window_options(1e-8), w); }), {"must be finite"});
  w.upper = 3;
  w.dos_vectors = 1;
  test::expect_mentions(test::input_error_message([&] { run_window(p, window_options(1e-8), w); }), {"dos_vectors"});
  // More groups than ranks; groups without a matrix to copy to them.
  w.dos_vectors = 16;
  w.slices = 8;
  w.groups = test::mpi_size(MPI_COMM_WORLD) + 1;
  test::expect_mentions(
      test::input_error_message([&] { run_window(p, window_options(1e-8), w, Split::balanced, true); }),
      {"eigensolver.slice_groups", "need as many ranks"});
  if (test::mpi_size(MPI_COMM_WORLD) > 1) {
    w.groups = 2;
    test::expect_mentions(test::input_error_message([&] { run_window(p, window_options(1e-8), w); }),
                          {"eigensolver.slice_groups", "give 0 or 1"});
  }
}

}  // namespace
}  // namespace blockeigs
