// The PETSc adapter with a complex PETSc (the petsc-complex preset), at np 1-4 with an empty rank: our operator
// as a MATSHELL over the twisted Laplacian (complex Hermitian) against products formed from the whole matrix
// (MatMult, MatMultTranspose = conj(A) x, MatMultHermitianTranspose, MatMatMult in one block apply,
// MatGetDiagonal), KSPCG with PETSc's and our preconditioners, SLEPc's eigenvalues against the closed form
// (standard and with B), a MATSHELL from a complex AIJ matrix and the refusal of a non-Hermitian one,
// PETSc's PC behind our Preconditioner, and the refusals of real values and of inertia.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <slepceps.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_shell_pc.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "solver/window/inertia.hpp"
#include "distributed_fixtures.hpp"
#include "csr_test_operator.hpp"
#include "tests/petsc/slepc_test_support.hpp"

namespace blockeigs {
namespace {

using test::OwnedEps;
using test::OwnedKsp;
using test::OwnedMat;
using test::OwnedVec;
using Complex = std::complex<double>;
static_assert(std::is_same_v<PetscScalar, Complex>, "this test is for a complex PETSc");

io::GeneratorSpec twisted(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, nx, ny, nz, 7};
  spec.periodic = true;
  spec.phase = {0.3, 0.5, 0.7};
  return spec;
}

// The twisted Laplacian whole on every rank, and this rank's rows of a partition with an empty rank.
struct Problem {
  io::GeneratorSpec spec;
  ComplexCsrRows whole;
  solver::RowPartition partition;
  ComplexCsrRows local;
};

Problem make_problem(const io::GeneratorSpec& spec) {
  Problem p{spec, io::generate_complex_rows(spec, 0, io::generated_rows(spec)), {}, {}};
  p.partition = test::partition_with_empty_rank(p.whole.global_rows, test::mpi_size(PETSC_COMM_WORLD));
  const int rank = test::mpi_rank(PETSC_COMM_WORLD);
  p.local = slice_rows(p.whole, p.partition.begin(rank), p.partition.end(rank));
  return p;
}

// A value for global row i, column j: every rank computes the same.
Complex entry(std::int64_t i, std::int64_t j) { return {std::sin(0.7 * i + 1.3 * j + 0.1), std::cos(0.3 * i - j)}; }

// y = op(A) x of the whole matrix for x(i) = entry(i, column); op conjugates A's entries where `conjugate`.
std::vector<Complex> reference_product(const ComplexCsrRows& whole, std::int64_t column, bool conjugate) {
  std::vector<Complex> y(static_cast<std::size_t>(whole.global_rows));
  for (std::int64_t i = 0; i < whole.global_rows; ++i)
    for (auto e = whole.row_offsets[i]; e < whole.row_offsets[i + 1]; ++e) {
      const Complex a = conjugate ? std::conj(whole.values[e]) : whole.values[e];
      y[i] += a * entry(whole.col_indices[e], column);
    }
  return y;
}

// x(i) = entry(i, column) on this rank's rows of the Vec.
void fill(Vec x, std::int64_t column) {
  PetscInt begin = 0, end = 0;
  PETSC_OK(VecGetOwnershipRange(x, &begin, &end));
  PetscScalar* a = nullptr;
  PETSC_OK(VecGetArray(x, &a));
  for (PetscInt i = begin; i < end; ++i) a[i - begin] = entry(i, column);
  PETSC_OK(VecRestoreArray(x, &a));
}

// The largest |y(i) - expected(i)| over this rank's rows, reduced over the ranks.
double max_difference(Vec y, const std::vector<Complex>& expected) {
  PetscInt begin = 0, end = 0;
  PETSC_OK(VecGetOwnershipRange(y, &begin, &end));
  const PetscScalar* a = nullptr;
  PETSC_OK(VecGetArrayRead(y, &a));
  double worst = 0;
  for (PetscInt i = begin; i < end; ++i) worst = std::max(worst, std::abs(a[i - begin] - expected[i]));
  PETSC_OK(VecRestoreArrayRead(y, &a));
  double all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return all;
}

class PetscComplexTest : public ::testing::Test {
 protected:
  const dense::Context context_ = test::petsc_test_context();
  const Problem problem_ = make_problem(twisted(6, 5, 4));
  Mat shell() { return solver::create_petsc_operator(PETSC_COMM_WORLD, context_, problem_.local, problem_.partition); }
};

TEST_F(PetscComplexTest, ProductsAreTheHermitianMatrixProducts) {
  OwnedMat A(shell());
  OwnedVec x, y;
  PETSC_OK(MatCreateVecs(A, x.out(), y.out()));
  fill(x, 0);
  PETSC_OK(MatMult(A, x, y));
  EXPECT_LT(max_difference(y, reference_product(problem_.whole, 0, false)), 1e-13);
  PETSC_OK(MatMultHermitianTranspose(A, x, y));
  EXPECT_LT(max_difference(y, reference_product(problem_.whole, 0, false)), 1e-13);
  PETSC_OK(MatMultTranspose(A, x, y));  // A^T = conj(A) for a Hermitian A
  EXPECT_LT(max_difference(y, reference_product(problem_.whole, 0, true)), 1e-13);
  PetscBool hermitian = PETSC_FALSE, known = PETSC_FALSE;
  PETSC_OK(MatIsHermitianKnown(A, &known, &hermitian));
  EXPECT_TRUE(known && hermitian);
  // The diagonal: 6 on every row, real.
  PETSC_OK(MatGetDiagonal(A, y));
  EXPECT_EQ(max_difference(y, std::vector<Complex>(static_cast<std::size_t>(problem_.whole.global_rows), 6.0)), 0.0);
}

TEST_F(PetscComplexTest, MatMatMultIsOneBlockApply) {
  OwnedMat A(shell());
  const PetscInt k = 3;
  PetscInt local = 0, global = 0;
  PETSC_OK(MatGetLocalSize(A, &local, nullptr));
  PETSC_OK(MatGetSize(A, &global, nullptr));
  OwnedMat X, Y;
  PETSC_OK(MatCreateDense(PETSC_COMM_WORLD, local, PETSC_DECIDE, global, k, nullptr, X.out()));
  PetscInt begin = 0, end = 0, ld = 0;
  PETSC_OK(MatGetOwnershipRange(X, &begin, &end));
  PETSC_OK(MatDenseGetLDA(X, &ld));
  PetscScalar* x = nullptr;
  PETSC_OK(MatDenseGetArray(X, &x));
  for (PetscInt j = 0; j < k; ++j)
    for (PetscInt i = begin; i < end; ++i) x[j * ld + (i - begin)] = entry(i, j);
  PETSC_OK(MatDenseRestoreArray(X, &x));
  PETSC_OK(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, Y.out()));
  EXPECT_EQ(solver::petsc_operator_block_applies(A), 1);
  for (PetscInt j = 0; j < k; ++j) {
    OwnedVec column;
    PETSC_OK(MatCreateVecs(A, nullptr, column.out()));
    PETSC_OK(MatGetColumnVector(Y, column, j));
    EXPECT_LT(max_difference(column, reference_product(problem_.whole, j, false)), 1e-13) << "column " << j;
  }
}

// KSPCG (Hermitian) on A x = b, b = A x_true: the error against x_true, with PCJACOBI and our PCSHELLs.
double cg_error(Mat A, const Problem& problem, const char* pc) {
  OwnedVec x, b, truth;
  PETSC_OK(MatCreateVecs(A, x.out(), b.out()));
  PETSC_OK(VecDuplicate(x, truth.out()));
  fill(truth, 1);
  PETSC_OK(MatMult(A, truth, b));
  OwnedKsp ksp;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPSetOperators(ksp, A, A));
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPCGSetType(ksp, KSP_CG_HERMITIAN));
  PETSC_OK(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PC p = nullptr;
  PETSC_OK(KSPGetPC(ksp, &p));
  if (std::string(pc) == "chebyshev")
    solver::set_petsc_chebyshev_pc(p, A);
  else if (std::string(pc) == "jacobi")
    solver::set_petsc_jacobi_pc(p, A);
  else
    PETSC_OK(PCSetType(p, PCJACOBI));
  PETSC_OK(KSPSolve(ksp, b, x));
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PETSC_OK(KSPGetConvergedReason(ksp, &reason));
  EXPECT_GT(reason, 0) << pc;
  std::vector<Complex> expected(static_cast<std::size_t>(problem.whole.global_rows));
  for (std::int64_t i = 0; i < problem.whole.global_rows; ++i) expected[i] = entry(i, 1);
  return max_difference(x, expected);
}

TEST_F(PetscComplexTest, KspCgSolvesWithPetscsAndOurPreconditioners) {
  OwnedMat A(shell());
  for (const char* pc : {"pcjacobi", "jacobi", "chebyshev"}) EXPECT_LT(cg_error(A, problem_, pc), 1e-8) << pc;
  EXPECT_GT(solver::petsc_operator_stats(A).preconditioner_applies, 0);
}

// SLEPc's `nev` smallest eigenvalues of (A, B) (B null: standard), Krylov-Schur, relative tolerance 1e-12.
std::vector<double> smallest_eigenvalues(Mat A, Mat B, PetscInt nev) {
  OwnedEps eps;
  PETSC_OK(EPSCreate(PETSC_COMM_WORLD, eps.out()));
  PETSC_OK(EPSSetOperators(eps, A, B));
  PETSC_OK(EPSSetProblemType(eps, B ? EPS_GHEP : EPS_HEP));
  PETSC_OK(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PETSC_OK(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PETSC_OK(EPSSetTolerances(eps, 1e-12, 10000));
  if (B) test::st_solves_by_cg(eps);
  PETSC_OK(EPSSolve(eps));
  PetscInt converged = 0;
  PETSC_OK(EPSGetConverged(eps, &converged));
  EXPECT_GE(converged, nev);
  std::vector<double> values;
  for (PetscInt i = 0; i < std::min(converged, nev); ++i) {
    PetscScalar value = 0;
    PETSC_OK(EPSGetEigenvalue(eps, i, &value, nullptr));
    EXPECT_LT(std::abs(PetscImaginaryPart(value)), 1e-12);
    values.push_back(PetscRealPart(value));
  }
  return values;
}

TEST_F(PetscComplexTest, SlepcFindsTheClosedFormStandardAndWithB) {
  const std::vector<double> exact = io::laplacian_eigenvalues(problem_.spec);
  OwnedMat A(shell());
  const std::vector<double> found = smallest_eigenvalues(A, nullptr, 4);
  for (std::size_t i = 0; i < found.size(); ++i) EXPECT_NEAR(found[i], exact[i], 1e-10 * exact[i]) << i;
  // B = 2 I (Hermitian positive definite): the pencil's eigenvalues are A's halved.
  ComplexCsrRows b = problem_.local;
  b.row_offsets.assign(1, 0);
  b.col_indices.clear();
  b.values.clear();
  for (std::int64_t i = 0; i < problem_.local.local_rows(); ++i) {
    b.col_indices.push_back(b.first_row + i);
    b.values.push_back(2.0);
    b.row_offsets.push_back(i + 1);
  }
  solver::PetscPencil pencil =
      solver::create_petsc_pencil(PETSC_COMM_WORLD, context_, problem_.local, b, problem_.partition);
  OwnedMat pa(pencil.A), pb(pencil.B);
  const std::vector<double> halved = smallest_eigenvalues(pa, pb, 4);
  for (std::size_t i = 0; i < halved.size(); ++i) EXPECT_NEAR(halved[i], exact[i] / 2, 1e-10 * exact[i]) << i;
}

// This rank's rows as a complex AIJ matrix (SEQAIJ at one rank, MPIAIJ otherwise).
Mat aij_of(const ComplexCsrRows& local, const solver::RowPartition& partition) {
  std::vector<PetscInt> offsets(local.row_offsets.begin(), local.row_offsets.end());
  std::vector<PetscInt> columns(local.col_indices.begin(), local.col_indices.end());
  Mat M = nullptr;
  const auto m = static_cast<PetscInt>(local.local_rows()), n = static_cast<PetscInt>(partition.global_rows());
  PETSC_OK(MatCreate(PETSC_COMM_WORLD, &M));
  PETSC_OK(MatSetSizes(M, m, m, n, n));
  PETSC_OK(MatSetType(M, MATAIJ));
  PETSC_OK(MatSeqAIJSetPreallocationCSR(M, offsets.data(), columns.data(), local.values.data()));
  PETSC_OK(MatMPIAIJSetPreallocationCSR(M, offsets.data(), columns.data(), local.values.data()));
  return M;
}

TEST_F(PetscComplexTest, ShellFromAComplexAijMatrixAndANonHermitianOneRefused) {
  OwnedMat aij(aij_of(problem_.local, problem_.partition));
  OwnedMat A(solver::create_petsc_operator_from_aij(aij, context_));
  OwnedVec x, y, z;
  PETSC_OK(MatCreateVecs(A, x.out(), y.out()));
  PETSC_OK(VecDuplicate(y, z.out()));
  fill(x, 2);
  PETSC_OK(MatMult(A, x, y));
  PETSC_OK(MatMult(aij, x, z));
  PETSC_OK(VecAXPY(z, -1.0, y));
  PetscReal difference = 1;
  PETSC_OK(VecNorm(z, NORM_INFINITY, &difference));
  EXPECT_LT(difference, 1e-13);

  // The first row's first off-diagonal entry conjugated: A(i, j) = A(j, i), not its conjugate.
  ComplexCsrRows bent = problem_.whole;
  std::int64_t e = 0;
  while (bent.col_indices[e] == 0) ++e;
  bent.values[e] = std::conj(bent.values[e]);
  const int rank = test::mpi_rank(PETSC_COMM_WORLD);
  OwnedMat wrong(
      aij_of(slice_rows(bent, problem_.partition.begin(rank), problem_.partition.end(rank)), problem_.partition));
  try {
    OwnedMat refused(solver::create_petsc_operator_from_aij(wrong, context_));
    ADD_FAILURE() << "a non-Hermitian AIJ matrix was taken";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("the PETSc matrix"), std::string::npos) << error.what();
  }
}

TEST_F(PetscComplexTest, DistributedRowsOfTheInputAndRealValuesRefused) {
  io::MatrixConfig matrix;
  matrix.source = io::MatrixSource::generator;
  matrix.generator = problem_.spec;
  const solver::DistributedRows loaded =
      solver::load_distributed_rows(matrix, PETSC_COMM_WORLD, solver::Values::real_or_complex);
  OwnedMat A(solver::create_petsc_operator(PETSC_COMM_WORLD, context_, loaded));
  const std::vector<double> exact = io::laplacian_eigenvalues(problem_.spec);
  const std::vector<double> found = smallest_eigenvalues(A, nullptr, 2);
  for (std::size_t i = 0; i < found.size(); ++i) EXPECT_NEAR(found[i], exact[i], 1e-10 * exact[i]) << i;

  matrix.generator = {io::GeneratorKind::laplacian_3d, 4, 3, 2, 7};
  const solver::DistributedRows real = solver::load_distributed_rows(matrix, PETSC_COMM_WORLD);
  try {
    OwnedMat refused(solver::create_petsc_operator(PETSC_COMM_WORLD, context_, real));
    ADD_FAILURE() << "real rows were taken by a complex PETSc";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("real values, but this build's PETSc has complex scalars"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(PetscComplexTest, PetscPreconditionerOnComplexBlocksAndRealOnesRefused) {
  auto pc = solver::make_petsc_preconditioner(PETSC_COMM_WORLD, context_, problem_.local, problem_.partition,
                                              "-pc_type jacobi");
  const std::int64_t m = problem_.local.local_rows(), k = 2;
  dense::DenseBlock<Complex> R(Space::host, m, k), W(Space::host, m, k);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) R.view()(i, j) = entry(problem_.local.first_row + i, j);
  pc->apply(R.cview(), W.view());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) EXPECT_LT(std::abs(W.view()(i, j) - R.view()(i, j) / 6.0), 1e-15);

  CsrRows real;
  real.global_rows = real.global_cols = problem_.partition.global_rows();
  real.first_row = problem_.local.first_row;
  real.row_offsets.assign(static_cast<std::size_t>(m) + 1, 0);
  try {
    solver::make_petsc_preconditioner(PETSC_COMM_WORLD, context_, real, problem_.partition, "-pc_type jacobi");
    ADD_FAILURE() << "a real matrix was taken by a complex PETSc's preconditioner";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("real values, but this build's PETSc has complex scalars"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(solver::petsc_is_complex());
}

TEST_F(PetscComplexTest, InertiaSaysWhyItIsMissing) {
  std::string why;
  EXPECT_FALSE(solver::inertia_available(&why));
  EXPECT_NE(why.find("complex scalars"), std::string::npos) << why;
}

}  // namespace
}  // namespace blockeigs
