// A x = lambda B x through PETSc: SLEPc's generalized Krylov-Schur
// (EPSSetOperators(eps, A, B), EPS_GHEP) on our Mats (create_petsc_pencil)
// against solver::lobpcg with B on the same operators' rows, at np 1-4, the
// smallest end, to 1e-8 relative:
//  (a) fem_p1's 2D and 3D pencils (stiffness, mass), also against the closed form;
//  (b) a real pencil: bcsstk21's stiffness matrix K with a lumped mass matrix
//      D = diag(sum_j |K_ij|). Lumping puts a row's mass on the diagonal; taking
//      K's own absolute row sums gives a diagonal, positive definite B on K's
//      scale, and by Gershgorin the pencil's eigenvalues lie in (0, 1]. Its
//      smallest are 2.6e-5, 5.5e-5, 1.5e-4, 1.6e-4, 1.9e-4, 2.8e-4 (SciPy's
//      shift-invert eigsh), its largest 0.87: a condition of 3.4e4. LOBPCG gets
//      Jacobi (diag(K)^-1): without a preconditioner its search directions are
//      the residuals K x - lambda D x, which weight the rows by D (a range of
//      4000) and leave it as slow as on K alone (it stagnates near 1.2e-3);
//      with Jacobi it converges in about 1250 iterations, as LOBPCG does on
//      the equivalent D^-1/2 K D^-1/2 (807).
// Tolerance 1e-10 for (a), 1e-9 for (b), whose relative residuals' rounding
// floor is near 1e-10 (D's rows are K's absolute row sums, lambda_1 = 2.6e-5).
// SLEPc's GHEP applies B^-1 through the ST's KSP: CG with Jacobi (MatGetDiagonal)
// to 1e-14, exact in one step for the diagonal D.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <slepceps.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "io/matrix_market.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "distributed_fixtures.hpp"
#include "tests/petsc/slepc_test_support.hpp"
#include "test_matrices.hpp"

namespace blockeigs {
namespace {

// Both matrices whole on every rank, and this rank's rows of each on A's balanced partition.
struct Pencil {
  std::string name;
  CsrRows a, b;
  solver::RowPartition partition;
  CsrRows a_local, b_local;
  std::vector<double> exact;  // ascending, where known
};

Pencil split(std::string name, CsrRows a, CsrRows b) {
  Pencil p{std::move(name), std::move(a), std::move(b), {}, {}, {}, {}};
  p.partition = solver::RowPartition::balanced(p.a.row_offsets, test::mpi_size(PETSC_COMM_WORLD));
  const int rank = test::mpi_rank(PETSC_COMM_WORLD);
  p.a_local = slice_rows(p.a, p.partition.begin(rank), p.partition.end(rank));
  p.b_local = slice_rows(p.b, p.partition.begin(rank), p.partition.end(rank));
  return p;
}

Pencil fem_pencil(io::GeneratorKind kind, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  io::GeneratorSpec k;
  k.kind = kind;
  k.nx = nx;
  k.ny = ny;
  k.nz = nz;
  io::GeneratorSpec m = k;
  m.part = io::FemPart::mass;
  Pencil p = split(io::describe(k), io::generate_rows(k, 0, io::generated_rows(k)),
                   io::generate_rows(m, 0, io::generated_rows(m)));
  p.exact = io::fem_p1_eigenvalues(k);
  return p;
}

// D = diag(sum_j |K_ij|): K's lumped mass matrix (see the file's comment).
CsrRows lumped_mass(const CsrRows& k) {
  CsrRows d;
  d.global_rows = d.global_cols = k.global_rows;
  d.row_offsets.push_back(0);
  for (std::int64_t i = 0; i < k.local_rows(); ++i) {
    double sum = 0;
    for (std::int64_t p = k.row_offsets[i]; p < k.row_offsets[i + 1]; ++p) sum += std::abs(k.values[p]);
    d.col_indices.push_back(i);
    d.values.push_back(sum);
    d.row_offsets.push_back(i + 1);
  }
  return d;
}

// SLEPc's nev smallest of A x = lambda B x by Krylov-Schur (GHEP), ascending.
std::vector<double> slepc_smallest(Mat A, Mat B, int nev, double tol) {
  EPS eps = nullptr;
  PETSC_OK(EPSCreate(PETSC_COMM_WORLD, &eps));
  std::vector<double> values;
  try {
    PETSC_OK(EPSSetOperators(eps, A, B));
    PETSC_OK(EPSSetProblemType(eps, EPS_GHEP));
    PETSC_OK(EPSSetType(eps, EPSKRYLOVSCHUR));
    PETSC_OK(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
    PETSC_OK(EPSSetDimensions(eps, nev, 4 * nev + 16, PETSC_DEFAULT));
    PETSC_OK(EPSSetTolerances(eps, tol, 100000));
    test::st_solves_by_cg(eps);
    PETSC_OK(EPSSolve(eps));
    PetscInt converged = 0;
    PETSC_OK(EPSGetConverged(eps, &converged));
    for (PetscInt i = 0; i < std::min<PetscInt>(converged, nev); ++i) {
      PetscScalar real = 0, imaginary = 0;
      PETSC_OK(EPSGetEigenvalue(eps, i, &real, &imaginary));
      values.push_back(real);
    }
  } catch (...) {
    EPSDestroy(&eps);
    throw;
  }
  PETSC_OK(EPSDestroy(&eps));
  std::sort(values.begin(), values.end());
  return values;
}

// Both solvers on the pencil; their eigenvalues agree to 1e-8 (and with the closed form where known).
// `jacobi`: LOBPCG preconditioned by diag(A)^-1.
void compare(const Pencil& p, int nev, double tol, int max_iterations, bool jacobi = false) {
  SCOPED_TRACE(p.name);
  const dense::Context context = test::petsc_test_context();
  solver::DistributedOperator<double> A(PETSC_COMM_WORLD, context, p.a_local, p.partition);
  solver::DistributedOperator<double> B(PETSC_COMM_WORLD, context, p.b_local, p.partition);
  solver::LobpcgOptions options;
  options.k = nev;
  options.tolerance = tol;
  options.test = solver::StoppingTest::relative;
  options.max_iterations = max_iterations;
  options.keep_history = false;
  std::optional<solver::JacobiPreconditioner<double>> preconditioner;
  if (jacobi) preconditioner.emplace(A);
  const auto ours = solver::lobpcg<double>(A, options, preconditioner ? &*preconditioner : nullptr, std::nullopt, &B);
  ASSERT_TRUE(ours.all_converged()) << ours.iterations << " iterations";
  EXPECT_TRUE(ours.generalized);

  const solver::PetscPencil mats =
      solver::create_petsc_pencil(PETSC_COMM_WORLD, context, p.a_local, p.b_local, p.partition);
  std::vector<double> slepc;
  try {
    slepc = slepc_smallest(mats.A, mats.B, nev, tol);
  } catch (...) {
    Mat a = mats.A, b = mats.B;
    MatDestroy(&a);
    MatDestroy(&b);
    throw;
  }
  Mat a = mats.A, b = mats.B;
  PETSC_OK(MatDestroy(&a));
  PETSC_OK(MatDestroy(&b));
  ASSERT_EQ(slepc.size(), std::size_t(nev)) << "SLEPc converged " << slepc.size() << " of " << nev;
  for (int i = 0; i < nev; ++i) {
    EXPECT_NEAR(slepc[i], ours.eigenvalues[i], 1e-8 * std::abs(slepc[i])) << "eigenvalue " << i;
    if (!p.exact.empty()) {
      EXPECT_NEAR(slepc[i], p.exact[i], 1e-8 * p.exact[i]) << "eigenvalue " << i;
      EXPECT_NEAR(ours.eigenvalues[i], p.exact[i], 1e-8 * p.exact[i]) << "eigenvalue " << i;
    }
  }
}

TEST(PetscPencil, FemP1PencilsMatchSlepcAndTheClosedForm) {
  compare(fem_pencil(io::GeneratorKind::fem_p1_2d, 16, 12, 1), 6, 1e-10, 5000);
  compare(fem_pencil(io::GeneratorKind::fem_p1_3d, 8, 7, 6), 6, 1e-10, 5000);
}

TEST(PetscPencil, Bcsstk21WithItsLumpedMassMatchesSlepc) {
  const std::string dir = test::data_dir();
  if (dir.empty()) GTEST_SKIP() << "no matrix folder (BLOCKEIGS_DATA_DIR)";
  const std::string file = dir + "/bcsstk21.mtx.gz";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is missing";
  CsrRows k = io::read_matrix_market(file).matrix;
  CsrRows d = lumped_mass(k);
  compare(split("bcsstk21 with D = diag(sum_j |K_ij|)", std::move(k), std::move(d)), 6, 1e-9, 5000, true);
}

// B on other rows than A is refused on every rank.
TEST(PetscPencil, BMustBeOnTheRowsOfA) {
  const Pencil p = fem_pencil(io::GeneratorKind::fem_p1_2d, 6, 5, 1);
  const dense::Context context = test::petsc_test_context();
  const CsrRows shorter = slice_rows(p.b, p.partition.begin(0), p.partition.end(0) - 1);  // one row fewer
  try {
    solver::create_petsc_pencil(PETSC_COMM_WORLD, context, p.a_local,
                                test::mpi_rank(PETSC_COMM_WORLD) == 0 ? shorter : p.b_local, p.partition);
    ADD_FAILURE() << "B on other rows was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not on A's rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blockeigs
