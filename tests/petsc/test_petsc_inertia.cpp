// Counts by inertia (solver/window/inertia.hpp through PETSc's MUMPS) at
// np 1-4, one rank without rows: the number of eigenvalues of the 3D
// Laplacian below a shift against its closed form, at shifts between
// eigenvalues (6 among them, where A - 6 I has no diagonal) and on a multiple
// one; then windows counted by
// inertia: every slice's certified count equal to the closed form's and every
// pair found, one slice and several; nos3's interior window against LAPACK.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "io/matrix_market.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/window/inertia.hpp"
#include "solver/window/window.hpp"
#include "tests/support/dense_reference.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "tests/support/lobpcg_problems.hpp"

namespace blockeigs {
namespace {

using namespace test::lobpcg_problems;

std::int64_t below(const Problem& p, double sigma) {
  return std::count_if(p.exact.begin(), p.exact.end(), [&](double v) { return v < sigma; });
}

struct Counted {
  solver::RowPartition partition;
  std::unique_ptr<solver::InertiaCounter> counter;
};

Counted counter_for(const Problem& p, Split split) {
  Counted out{partition_of(p, MPI_COMM_WORLD, split), nullptr};
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const CsrRows rows = slice_rows(p.whole, out.partition.begin(rank), out.partition.end(rank));
  out.counter = solver::make_inertia_counter(MPI_COMM_WORLD, rows, out.partition);
  return out;
}

// The window [a, b] of p in `slices` slices, counted by inertia, on a rank without rows.
solver::WindowResult<double> counted_window(const Problem& p, double a, double b, int slices, double tolerance) {
  Counted c = counter_for(p, Split::empty_rank);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const dense::Context context = dense::Context::host();
  solver::DistributedOperator<double> A(
      MPI_COMM_WORLD, context, slice_rows(p.whole, c.partition.begin(rank), c.partition.end(rank)), c.partition);
  LobpcgOptions o;
  o.tolerance = tolerance;
  o.max_iterations = 100;
  solver::WindowOptions w;
  w.lower = a;
  w.upper = b;
  w.slices = slices;
  w.inertia = c.counter.get();
  return solver::window_eigs<double>(A, o, w);
}

TEST(PetscInertia, CountsBelowShiftsMatchTheClosedForm) {
  ASSERT_TRUE(solver::inertia_available());
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 10, 9, 8);
  for (const Split split : {Split::balanced, Split::empty_rank}) {
    Counted c = counter_for(p, split);
    for (const std::size_t j :
         {std::size_t{0}, std::size_t{7}, std::size_t{100}, std::size_t{359}, p.exact.size() - 1}) {
      // Halfway to the next distinct eigenvalue.
      std::size_t next = j + 1;
      while (next < p.exact.size() && p.exact[next] - p.exact[j] < 1e-9) ++next;
      const double sigma = next < p.exact.size() ? 0.5 * (p.exact[j] + p.exact[next]) : p.exact[j] + 1;
      const solver::Inertia i = c.counter->at(sigma);
      EXPECT_EQ(i.negative, below(p, sigma)) << "sigma " << sigma;
      EXPECT_EQ(i.zero, 0);
      EXPECT_EQ(i.negative + i.positive, static_cast<std::int64_t>(p.exact.size()));
    }
    EXPECT_EQ(c.counter->factorizations, 5);
    EXPECT_NE(c.counter->name().find("MUMPS"), std::string::npos);
  }
}

// A shift on an eigenvalue of multiplicity 3 of the 8^3 Laplacian: the three lie within rounding of it, so
// each is a null pivot or a pivot of either sign (or, where the factorization at sigma is unstable, the
// count is taken beside it): at least the one below, at most four.
TEST(PetscInertia, AShiftOnAMultipleEigenvalue) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 8, 8, 8);
  Counted c = counter_for(p, Split::balanced);
  const double sigma = p.exact[1];  // 3-fold
  ASSERT_NEAR(p.exact[3], sigma, 1e-12);
  ASSERT_GT(p.exact[4] - sigma, 1e-3);
  const solver::Inertia i = c.counter->at(sigma);
  EXPECT_GE(i.negative, 1);
  EXPECT_LE(i.negative + i.zero, 4);
  EXPECT_EQ(i.negative + i.zero + i.positive, static_cast<std::int64_t>(p.exact.size()));
  EXPECT_LE(std::abs(i.shift - sigma), 16e-10 * 12);  // at sigma, or beside it where that factorization was unstable
}

// Windows counted by inertia: each slice's certified count is the closed form's, and each is found.
TEST(PetscInertia, WindowSlicesFindTheirCertifiedCounts) {
  const Problem p = laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12);
  for (const int slices : {1, 3}) {
    const solver::WindowResult<double> r = counted_window(p, 1.0, 1.6, slices, 1e-9);
    const std::int64_t want = below(p, 1.6 + 1e-12) - below(p, 1.0);
    ASSERT_EQ(want, 37);
    EXPECT_EQ(r.report.certified, want);
    EXPECT_EQ(r.report.certified_below, below(p, 1.0));
    EXPECT_EQ(r.report.factorizations, slices + 1);
    EXPECT_EQ(static_cast<std::int64_t>(r.pairs.eigenvalues.size()), want);
    EXPECT_TRUE(r.pairs.all_converged());
    std::int64_t sum = 0;
    for (const solver::SliceReport& s : r.report.slices) {
      EXPECT_EQ(s.found, s.certified) << "[" << s.lower << ", " << s.upper << "]";
      EXPECT_EQ(s.certified,
                below(p, s.upper + 1e-12) - below(p, s.lower + (&s == &r.report.slices.front() ? 0 : 1e-12)));
      sum += s.certified;
    }
    EXPECT_EQ(sum, want);
  }
}

// nos3 (960 rows, an FEM matrix): the window over its eigenvalues 100 to 159, counted by inertia, against
// LAPACK's dense eigenvalues, on a rank without rows.
TEST(PetscInertia, SuiteSparseWindowAgainstADenseReference) {
  const std::optional<Problem> reference = test::with_dense_eigenvalues("nos3.mtx.gz");
  if (!reference) GTEST_SKIP() << "nos3.mtx.gz is not in " << BLOCKEIGS_DATA_DIR;
  const Problem& p = *reference;
  const std::vector<double>& values = p.exact;
  const solver::WindowResult<double> r =
      counted_window(p, 0.5 * (values[99] + values[100]), 0.5 * (values[159] + values[160]), 2, 1e-8);
  EXPECT_EQ(r.report.certified, 60);
  EXPECT_EQ(r.report.certified_below, 100);
  ASSERT_EQ(r.pairs.eigenvalues.size(), 60u);
  for (std::size_t j = 0; j < 60; ++j)
    EXPECT_LE(std::abs(r.pairs.eigenvalues[j] - values[100 + j]), 1e-8 * std::abs(values[100 + j])) << "pair " << j;
  for (const solver::SliceReport& s : r.report.slices) EXPECT_EQ(s.found, s.certified);
}

TEST(PetscInertia, CountChoice) {
  EXPECT_TRUE(solver::choose_count(WindowCount::automatic, 1000).inertia);
  EXPECT_FALSE(solver::choose_count(WindowCount::automatic, solver::kAutoInertiaRows + 1).inertia);
  EXPECT_TRUE(solver::choose_count(WindowCount::inertia, solver::kAutoInertiaRows + 1).inertia);
  EXPECT_FALSE(solver::choose_count(WindowCount::density, 1000).inertia);
}

}  // namespace
}  // namespace blockeigs
