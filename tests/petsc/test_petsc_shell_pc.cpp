// Our preconditioners as PETSc PCSHELLs (solver/petsc/petsc_shell_pc.hpp),
// at np 1-4 (the last rank without rows from np 2), on the backend under
// test: KSPCG with our Chebyshev polynomial converges in fewer iterations
// than with PETSc's PCJACOBI, to the same solution; our Jacobi PCSHELL takes
// PCJACOBI's iterations; a block apply equals one apply a column; the PC
// keeps its Mat alive; errors are agreed.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_shell_pc.hpp"
#include "distributed_fixtures.hpp"
#include "tests/petsc/slepc_test_support.hpp"

namespace blockeigs {
namespace {

using test::OwnedKsp;
using test::OwnedMat;
using test::OwnedVec;

// A 3D Laplacian's rows on this rank; from np 2 the last rank owns none.
struct Rows {
  CsrRows local;
  solver::RowPartition partition;
};
Rows laplacian_rows(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  const io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, nx, ny, nz, 7};
  const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const int ranks = test::mpi_size(PETSC_COMM_WORLD), rank = test::mpi_rank(PETSC_COMM_WORLD);
  solver::RowPartition partition = solver::RowPartition::balanced(whole.row_offsets, ranks);
  if (ranks > 1) {
    std::vector<std::int64_t> first = solver::RowPartition::balanced(whole.row_offsets, ranks - 1).first_rows();
    first.push_back(first.back());
    partition = solver::RowPartition(first);
  }
  return {slice_rows(whole, partition.begin(rank), partition.end(rank)), partition};
}

struct Solve {
  PetscInt iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
};

enum class Pc { petsc_jacobi, our_jacobi, our_chebyshev };

Solve solve_cg(Mat A, Pc kind, Vec b, Vec x) {
  OwnedKsp ksp;
  PC pc = nullptr;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPSetOperators(ksp, A, A));
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPGetPC(ksp, &pc));
  if (kind == Pc::petsc_jacobi) PETSC_OK(PCSetType(pc, PCJACOBI));
  if (kind == Pc::our_jacobi) solver::set_petsc_jacobi_pc(pc, A);
  if (kind == Pc::our_chebyshev) solver::set_petsc_chebyshev_pc(pc, A);
  PETSC_OK(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));  // the same test for every PC
  PETSC_OK(KSPSetTolerances(ksp, 1e-8, 0.0, PETSC_DEFAULT, 2000));
  PETSC_OK(VecSet(x, 0.0));
  PETSC_OK(KSPSolve(ksp, b, x));
  Solve out;
  PETSC_OK(KSPGetIterationNumber(ksp, &out.iterations));
  PETSC_OK(KSPGetConvergedReason(ksp, &out.reason));
  return out;
}

TEST(PetscShellPc, ChebyshevTakesFewerIterationsThanJacobi) {
  const auto context = test::petsc_test_context();
  const Rows rows = laplacian_rows(14, 12, 10);
  OwnedMat A;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, rows.local, rows.partition);
  OwnedVec b, x_jacobi, x_ours, x_chebyshev;
  PETSC_OK(MatCreateVecs(A, x_jacobi.out(), b.out()));
  PETSC_OK(VecDuplicate(x_jacobi, x_ours.out()));
  PETSC_OK(VecDuplicate(x_jacobi, x_chebyshev.out()));
  PETSC_OK(VecSet(b, 1.0));

  const Solve jacobi = solve_cg(A, Pc::petsc_jacobi, b, x_jacobi);
  const Solve ours = solve_cg(A, Pc::our_jacobi, b, x_ours);
  const std::int64_t applies_before = solver::petsc_operator_stats(A).preconditioner_applies;
  const Solve chebyshev = solve_cg(A, Pc::our_chebyshev, b, x_chebyshev);
  EXPECT_GT(jacobi.reason, 0);
  EXPECT_GT(ours.reason, 0);
  EXPECT_GT(chebyshev.reason, 0);
  // Our Jacobi is PCJACOBI's M (the Laplacian's diagonal is positive).
  EXPECT_LE(std::abs(ours.iterations - jacobi.iterations), 1);
  // Degree 8: several times fewer iterations (each costs 8 more products).
  EXPECT_LT(3 * chebyshev.iterations, jacobi.iterations) << chebyshev.iterations << " vs " << jacobi.iterations;
  EXPECT_GE(solver::petsc_operator_stats(A).preconditioner_applies - applies_before, chebyshev.iterations);

  // The same solution: both residuals are below 1e-8 ||b||, and lambda_min of
  // this Laplacian is above 0.2, so the solutions differ by less than 1e-7 ||b||.
  PetscReal b_norm = 0, d_norm = 0;
  PETSC_OK(VecNorm(b, NORM_2, &b_norm));
  PETSC_OK(VecAXPY(x_chebyshev, -1.0, x_jacobi));
  PETSC_OK(VecNorm(x_chebyshev, NORM_2, &d_norm));
  EXPECT_LE(d_norm, 1e-7 * b_norm);
}

// PCMatApply (KSPMatSolve, SLEPc's LOBPCG) runs the whole block through the
// polynomial at once, as one PCApply a column would.
TEST(PetscShellPc, BlockApplyEqualsColumnApplies) {
  const auto context = test::petsc_test_context();
  const Rows rows = laplacian_rows(9, 8, 7);
  OwnedMat A, X, Y;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, rows.local, rows.partition);
  OwnedKsp ksp;
  PC pc = nullptr;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPGetPC(ksp, &pc));
  solver::set_petsc_chebyshev_pc(pc, A);
  PETSC_OK(PCSetOperators(pc, A, A));
  PETSC_OK(PCSetUp(pc));
  // Blocks of the Mat's own kind: MATDENSECUDA where its vectors are VECCUDA.
  VecType vec_type = nullptr;
  PETSC_OK(MatGetVecType(A, &vec_type));
  const bool cuda = std::string(vec_type).find("cuda") != std::string::npos;
  const PetscInt k = 5;
  PetscInt m = 0, n = 0, first = 0;
  PETSC_OK(MatGetLocalSize(A, &m, nullptr));
  PETSC_OK(MatGetSize(A, &n, nullptr));
  PETSC_OK(MatCreate(PETSC_COMM_WORLD, X.out()));
  PETSC_OK(MatSetSizes(X, m, PETSC_DECIDE, n, k));
  PETSC_OK(MatSetType(X, cuda ? MATDENSECUDA : MATDENSE));
  PETSC_OK(MatSetUp(X));
  PETSC_OK(MatGetOwnershipRange(X, &first, nullptr));
  PetscScalar* x = nullptr;
  PETSC_OK(MatDenseGetArrayWrite(X, &x));
  for (PetscInt j = 0; j < k; ++j)
    for (PetscInt i = 0; i < m; ++i) x[j * m + i] = std::sin(0.3 * double(first + i) * double(j + 1)) + 0.1;
  PETSC_OK(MatDenseRestoreArrayWrite(X, &x));
  PETSC_OK(MatDuplicate(X, MAT_DO_NOT_COPY_VALUES, Y.out()));
  const std::int64_t before = solver::petsc_operator_stats(A).preconditioner_applies;
  PETSC_OK(PCMatApply(pc, X, Y));
  EXPECT_EQ(solver::petsc_operator_stats(A).preconditioner_applies, before + 1);  // the block, once

  OwnedVec w;
  PETSC_OK(MatCreateVecs(A, nullptr, w.out()));
  for (PetscInt j = 0; j < k; ++j) {
    Vec x_j = nullptr, y_j = nullptr;
    PETSC_OK(MatDenseGetColumnVecRead(X, j, &x_j));
    PETSC_OK(PCApply(pc, x_j, w));
    PETSC_OK(MatDenseRestoreColumnVecRead(X, j, &x_j));
    PETSC_OK(MatDenseGetColumnVecRead(Y, j, &y_j));
    PetscReal column_norm = 0, difference = 0;
    PETSC_OK(VecNorm(y_j, NORM_INFINITY, &column_norm));
    PETSC_OK(VecAXPY(w, -1.0, y_j));
    PETSC_OK(MatDenseRestoreColumnVecRead(Y, j, &y_j));
    PETSC_OK(VecNorm(w, NORM_INFINITY, &difference));
    EXPECT_GT(column_norm, 0.0) << "column " << j;
    EXPECT_LE(difference, 1e-12 * column_norm) << "column " << j;  // 8 products: the same sums in other orders
  }
}

// The PC holds a reference to the Mat: destroying the caller's handle first is fine.
TEST(PetscShellPc, KeepsItsMatAlive) {
  const auto context = test::petsc_test_context();
  const Rows rows = laplacian_rows(8, 7, 6);
  Mat A = solver::create_petsc_operator(PETSC_COMM_WORLD, context, rows.local, rows.partition);
  OwnedVec b, x;
  PETSC_OK(MatCreateVecs(A, x.out(), b.out()));
  PETSC_OK(VecSet(b, 1.0));
  OwnedKsp ksp;
  PC pc = nullptr;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPSetOperators(ksp, A, A));
  PETSC_OK(KSPGetPC(ksp, &pc));
  solver::set_petsc_chebyshev_pc(pc, A);
  solver::set_petsc_chebyshev_pc(pc, A);  // again: the first shell's context is freed, not leaked
  PETSC_OK(MatDestroy(&A));               // the KSP and the PC still hold it
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPSolve(ksp, b, x));
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PETSC_OK(KSPGetConvergedReason(ksp, &reason));
  EXPECT_GT(reason, 0);
}

TEST(PetscShellPc, BadOptionsAndForeignMatsAreRefusedEverywhere) {
  const auto context = test::petsc_test_context();
  const Rows rows = laplacian_rows(6, 5, 4);
  OwnedMat A, dense;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, rows.local, rows.partition);
  OwnedKsp ksp;
  PC pc = nullptr;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPGetPC(ksp, &pc));
  solver::ChebyshevOptions options = solver::petsc_chebyshev_options();
  options.lower = 1.5;                                                       // must lie in (0, 1)
  EXPECT_THROW(solver::set_petsc_chebyshev_pc(pc, A, options), InputError);  // on every rank
  PETSC_OK(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 10, 10, nullptr, dense.out()));
  EXPECT_THROW(solver::set_petsc_jacobi_pc(pc, dense), Error);
}

}  // namespace
}  // namespace blockeigs
