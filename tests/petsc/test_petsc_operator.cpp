// Our operator as a PETSc Mat (solver/petsc/petsc_operator.hpp), at np 1-4,
// against PETSc's own AIJ matrix built from the same rows and against closed
// forms: KSPCG + PCJACOBI solutions, SLEPc eigenvalues (Krylov-Schur and
// LOBPCG) next to our solver::lobpcg, MatMatMult through ONE block apply,
// MatGetDiagonal, C++ errors returned as PETSc error codes, and refusal of a
// non-symmetric AIJ matrix. At np 1 the AIJ matrices are SEQAIJ, else MPIAIJ.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <slepceps.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "dense/context.hpp"
#include "distributed_fixtures.hpp"
#include "tests/petsc/slepc_test_support.hpp"

namespace blockeigs {
namespace {

using test::OwnedEps;
using test::OwnedKsp;
using test::OwnedMat;
using test::OwnedVec;

// A whole matrix every rank holds, split over the ranks, and what is known of it.
struct Problem {
  std::string name;
  CsrRows whole;
  solver::RowPartition partition;
  CsrRows local;
  std::vector<double> exact;  // ascending eigenvalues (Laplacians); else empty
  double lambda_min = 0;      // a lower bound on the smallest eigenvalue
};

Problem make_problem(const io::GeneratorSpec& spec, bool last_rank_empty = false) {
  Problem p;
  p.name = io::describe(spec);
  p.whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const int ranks = test::mpi_size(PETSC_COMM_WORLD);
  if (last_rank_empty && ranks > 1) {
    const solver::RowPartition others = solver::RowPartition::balanced(p.whole.row_offsets, ranks - 1);
    std::vector<std::int64_t> first = others.first_rows();
    first.push_back(first.back());
    p.partition = solver::RowPartition(first);
  } else {
    p.partition = solver::RowPartition::balanced(p.whole.row_offsets, ranks);
  }
  const int rank = test::mpi_rank(PETSC_COMM_WORLD);
  p.local = slice_rows(p.whole, p.partition.begin(rank), p.partition.end(rank));
  if (spec.kind != io::GeneratorKind::random_spd) {
    p.exact = io::laplacian_eigenvalues(spec);
    p.lambda_min = p.exact.front();
  } else {  // strictly diagonally dominant: Gershgorin's lower bound is positive
    p.lambda_min = std::numeric_limits<double>::max();
    for (std::int64_t i = 0; i < p.whole.local_rows(); ++i) {
      double diagonal = 0, off = 0;
      for (auto e = p.whole.row_offsets[i]; e < p.whole.row_offsets[i + 1]; ++e)
        (p.whole.col_indices[e] == i ? diagonal : off) += std::abs(p.whole.values[e]);
      p.lambda_min = std::min(p.lambda_min, diagonal - off);
    }
  }
  return p;
}

io::GeneratorSpec laplacian_2d(std::int64_t nx, std::int64_t ny) {
  return {io::GeneratorKind::laplacian_2d, nx, ny, 1, 5};
}
io::GeneratorSpec random_spd(std::int64_t n, std::uint64_t seed) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::random_spd;
  spec.n = n;
  spec.nnz_per_row = 6;
  spec.seed = seed;
  return spec;
}

// PETSc's own matrix from the same local rows (MATAIJ: SEQAIJ on one rank).
void build_aij(const Problem& p, Mat* out) {
  const auto m = static_cast<PetscInt>(p.local.local_rows());
  const auto n = static_cast<PetscInt>(p.whole.global_rows);
  std::vector<PetscInt> offsets(p.local.row_offsets.begin(), p.local.row_offsets.end());
  std::vector<PetscInt> columns(p.local.col_indices.begin(), p.local.col_indices.end());
  PETSC_OK(MatCreate(PETSC_COMM_WORLD, out));
  PETSC_OK(MatSetSizes(*out, m, m, n, n));
  PETSC_OK(MatSetType(*out, MATAIJ));
  // Only the call matching the actual type acts; both copy the values and assemble.
  PETSC_OK(MatSeqAIJSetPreallocationCSR(*out, offsets.data(), columns.data(), p.local.values.data()));
  PETSC_OK(MatMPIAIJSetPreallocationCSR(*out, offsets.data(), columns.data(), p.local.values.data()));
}

// Entries that do not depend on the rank count: a function of the global index.
void fill_by_index(Vec v, double phase) {
  PetscInt begin = 0, end = 0;
  PetscScalar* a = nullptr;
  PETSC_OK(VecGetOwnershipRange(v, &begin, &end));
  PETSC_OK(VecGetArrayWrite(v, &a));
  for (PetscInt i = begin; i < end; ++i) a[i - begin] = std::sin(0.37 * double(i) + phase) + 0.25;
  PETSC_OK(VecRestoreArrayWrite(v, &a));
}

double distance(Vec x, Vec y) {
  OwnedVec d;
  PetscReal norm = 0;
  PETSC_OK(VecDuplicate(x, d.out()));
  PETSC_OK(VecWAXPY(d, -1.0, y, x));
  PETSC_OK(VecNorm(d, NORM_INFINITY, &norm));
  return norm;
}

// ---- (a) KSPCG + PCJACOBI: our Mat reaches the AIJ matrix's solution ------

struct CgOutcome {
  PetscInt iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
};

CgOutcome solve_cg(Mat A, Vec b, Vec x, double rtol) {
  OwnedKsp ksp;
  PC pc = nullptr;
  CgOutcome out;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  PETSC_OK(KSPSetOperators(ksp, A, A));
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPGetPC(ksp, &pc));
  PETSC_OK(PCSetType(pc, PCJACOBI));  // needs MatGetDiagonal
  // The true residual, so that the bound on the solution error below holds.
  PETSC_OK(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PETSC_OK(KSPSetTolerances(ksp, rtol, 0.0, PETSC_DEFAULT, 5000));
  PETSC_OK(KSPSolve(ksp, b, x));
  PETSC_OK(KSPGetIterationNumber(ksp, &out.iterations));
  PETSC_OK(KSPGetConvergedReason(ksp, &out.reason));
  return out;
}

TEST(PetscOperator, KspCgJacobiMatchesAij) {
  const auto context = test::petsc_test_context();
  for (const Problem& p : {make_problem(laplacian_2d(24, 20)), make_problem(random_spd(400, 7), true)}) {
    SCOPED_TRACE(p.name);
    OwnedMat aij, ours;
    build_aij(p, aij.out());
    *ours.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, p.local, p.partition);
    OwnedVec b, x_ours, x_aij;
    PETSC_OK(MatCreateVecs(ours, x_ours.out(), b.out()));
    PETSC_OK(VecDuplicate(x_ours, x_aij.out()));
    fill_by_index(b, 0.1);
    const double rtol = 1e-10;
    const CgOutcome with_ours = solve_cg(ours, b, x_ours, rtol);
    const CgOutcome with_aij = solve_cg(aij, b, x_aij, rtol);
    EXPECT_GT(with_ours.reason, 0);
    EXPECT_GT(with_aij.reason, 0);
    // The same arithmetic up to the order of sums: the same iteration count, or one apart.
    EXPECT_LE(std::abs(with_ours.iterations - with_aij.iterations), 1);
    // ||b - A x|| <= rtol ||b|| for both, so ||x_ours - x_aij|| <= 2 rtol ||b|| / lambda_min.
    PetscReal b_norm = 0;
    PETSC_OK(VecNorm(b, NORM_2, &b_norm));
    EXPECT_LE(distance(x_ours, x_aij), 2.02 * rtol * b_norm / p.lambda_min);
    // And our solution solves PETSc's own matrix.
    OwnedVec r;
    PetscReal r_norm = 0;
    PETSC_OK(VecDuplicate(b, r.out()));
    PETSC_OK(MatMult(aij, x_ours, r));
    PETSC_OK(VecAYPX(r, -1.0, b));
    PETSC_OK(VecNorm(r, NORM_2, &r_norm));
    EXPECT_LE(r_norm, 1.01 * rtol * b_norm);
  }
}

// MatMult and MatMultTranspose of a Mat made from the AIJ matrix (SEQAIJ at np 1, else MPIAIJ).
TEST(PetscOperator, FromAijMatchesAij) {
  const auto context = test::petsc_test_context();
  const Problem p = make_problem(random_spd(300, 5), true);
  OwnedMat aij, ours;
  build_aij(p, aij.out());
  *ours.out() = solver::create_petsc_operator_from_aij(aij, context);
  OwnedVec x, y_ours, y_aij;
  PETSC_OK(MatCreateVecs(aij, x.out(), y_aij.out()));
  PETSC_OK(VecDuplicate(y_aij, y_ours.out()));
  fill_by_index(x, 0.7);
  PETSC_OK(MatMult(aij, x, y_aij));
  PETSC_OK(MatMult(ours, x, y_ours));
  EXPECT_LE(distance(y_ours, y_aij), 1e-13);    // |values| < 2, rows of ~13 entries
  PETSC_OK(MatMultTranspose(ours, x, y_ours));  // symmetric: the same product
  EXPECT_LE(distance(y_ours, y_aij), 1e-13);
}

// ---- (b) SLEPc eigenvalues against solver::lobpcg and the closed form -----

std::vector<double> slepc_smallest(Mat A, EPSType type, PCType pc_type, int nev, double tol) {
  OwnedEps eps;
  PETSC_OK(EPSCreate(PETSC_COMM_WORLD, eps.out()));
  PETSC_OK(EPSSetOperators(eps, A, nullptr));
  PETSC_OK(EPSSetProblemType(eps, EPS_HEP));
  PETSC_OK(EPSSetType(eps, type));
  PETSC_OK(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PETSC_OK(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PETSC_OK(EPSSetTolerances(eps, tol, 20000));
  if (pc_type) {  // LOBPCG preconditions through ST (STPRECOND) -> KSP -> PC
    ST st = nullptr;
    KSP ksp = nullptr;
    PC pc = nullptr;
    PETSC_OK(EPSGetST(eps, &st));
    PETSC_OK(STGetKSP(st, &ksp));
    PETSC_OK(KSPGetPC(ksp, &pc));
    PETSC_OK(PCSetType(pc, pc_type));
  }
  PETSC_OK(EPSSolve(eps));
  PetscInt converged = 0;
  PETSC_OK(EPSGetConverged(eps, &converged));
  std::vector<double> values;
  for (PetscInt i = 0; i < std::min<PetscInt>(converged, nev); ++i) {
    PetscScalar real = 0, imaginary = 0;
    PETSC_OK(EPSGetEigenvalue(eps, i, &real, &imaginary));
    values.push_back(real);
  }
  std::sort(values.begin(), values.end());
  return values;
}

TEST(PetscOperator, SlepcEigenvaluesMatchLobpcgAndClosedForm) {
  const auto context = test::petsc_test_context();
  const Problem p = make_problem(laplacian_2d(16, 12));
  const int nev = 4;
  const double tol = 1e-9;  // EPS's relative test: ||r|| <= tol |theta|, so |theta - lambda| <= tol |theta|

  solver::DistributedOperator<double> op(PETSC_COMM_WORLD, context, p.local, p.partition);
  solver::LobpcgOptions options;
  options.k = nev;
  options.tolerance = tol;
  options.test = solver::StoppingTest::relative;
  options.keep_history = false;
  const auto ours = solver::lobpcg(op, options);
  ASSERT_TRUE(ours.all_converged());

  OwnedMat A;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, p.local, p.partition);
  struct Run {
    const char* what;
    EPSType type;
    PCType pc;
  };
  for (const Run& run : {Run{"Krylov-Schur", EPSKRYLOVSCHUR, nullptr}, Run{"LOBPCG + Jacobi", EPSLOBPCG, PCJACOBI},
                         Run{"LOBPCG, no PC", EPSLOBPCG, PCNONE}}) {
    SCOPED_TRACE(run.what);
    const std::int64_t blocks_before = solver::petsc_operator_block_applies(A);
    const std::vector<double> slepc = slepc_smallest(A, run.type, run.pc, nev, tol);
    ASSERT_EQ(slepc.size(), std::size_t(nev));
    for (int i = 0; i < nev; ++i) {
      const double bound = 2.02 * tol * p.exact[i];
      EXPECT_NEAR(slepc[i], p.exact[i], bound) << "eigenvalue " << i;
      EXPECT_NEAR(ours.eigenvalues[i], p.exact[i], bound) << "eigenvalue " << i;
      EXPECT_NEAR(slepc[i], ours.eigenvalues[i], 2 * bound) << "eigenvalue " << i;
    }
    // SLEPc's block method multiplies its basis through MatMatMult: our one-apply product.
    if (std::string(run.type) == EPSLOBPCG) {
      EXPECT_GT(solver::petsc_operator_block_applies(A), blocks_before);
    }
  }
}

// ---- (c), (d): MatMatMult in one apply; MatGetDiagonal ---------------------

TEST(PetscOperator, MatMatMultIsOneApplyAndMatchesColumns) {
  const auto context = test::petsc_test_context();
  const Problem p = make_problem(random_spd(250, 3), true);  // a rank with no rows at np > 1
  OwnedMat A, aij, B, C, C_aij;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, p.local, p.partition);
  build_aij(p, aij.out());

  // B with a leading dimension larger than its local rows, as a sub-block of a bigger array would have.
  const PetscInt m = static_cast<PetscInt>(p.local.local_rows()), n = static_cast<PetscInt>(p.whole.global_rows);
  const PetscInt k = 5, lda = m + 3;
  std::vector<PetscScalar> storage(static_cast<std::size_t>(lda * k), std::nan(""));
  for (PetscInt j = 0; j < k; ++j)
    for (PetscInt i = 0; i < m; ++i) storage[j * lda + i] = std::cos(0.1 * double(p.local.first_row + i) * (j + 1));
  PETSC_OK(MatCreateDense(PETSC_COMM_WORLD, m, PETSC_DECIDE, n, k, storage.data(), B.out()));
  PETSC_OK(MatDenseSetLDA(B, lda));

  const std::int64_t before = solver::petsc_operator_block_applies(A);
  PETSC_OK(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, C.out()));
  EXPECT_EQ(solver::petsc_operator_block_applies(A), before + 1);  // the whole block, once
  PETSC_OK(MatMatMult(aij, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, C_aij.out()));

  OwnedVec y;
  PETSC_OK(MatCreateVecs(A, nullptr, y.out()));
  for (PetscInt j = 0; j < k; ++j) {
    Vec b_j = nullptr, c_j = nullptr, c_aij_j = nullptr;
    PETSC_OK(MatDenseGetColumnVecRead(B, j, &b_j));
    PETSC_OK(MatMult(A, b_j, y));
    PETSC_OK(MatDenseRestoreColumnVecRead(B, j, &b_j));
    PETSC_OK(MatDenseGetColumnVecRead(C, j, &c_j));
    const double to_columns = distance(c_j, y);
    PETSC_OK(MatDenseRestoreColumnVecRead(C, j, &c_j));
    PETSC_OK(MatDenseGetColumnVecRead(C_aij, j, &c_aij_j));
    const double to_aij = distance(c_aij_j, y);
    PETSC_OK(MatDenseRestoreColumnVecRead(C_aij, j, &c_aij_j));
    EXPECT_LE(to_columns, 1e-13) << "column " << j;  // |a|, |b| <= ~1, rows of ~13 entries
    EXPECT_LE(to_aij, 1e-13) << "column " << j;
  }
  EXPECT_EQ(solver::petsc_operator_block_applies(A), before + 1);  // MatMult is not a block apply

  // Reusing C, and the MatProduct interface, are one apply each too.
  PETSC_OK(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, C.out()));
  EXPECT_EQ(solver::petsc_operator_block_applies(A), before + 2);
  OwnedMat D;
  PETSC_OK(MatProductCreate(A, B, nullptr, D.out()));
  PETSC_OK(MatProductSetType(D, MATPRODUCT_AB));
  PETSC_OK(MatProductSetFromOptions(D));
  PETSC_OK(MatProductSymbolic(D));
  PETSC_OK(MatProductNumeric(D));
  EXPECT_EQ(solver::petsc_operator_block_applies(A), before + 3);
  PetscBool equal = PETSC_FALSE;
  PETSC_OK(MatEqual(C, D, &equal));  // the same inputs give the same bits
  EXPECT_TRUE(equal);
}

TEST(PetscOperator, GetDiagonalEqualsAij) {
  const auto context = test::petsc_test_context();
  for (const Problem& p : {make_problem(laplacian_2d(9, 7), true), make_problem(random_spd(120, 9))}) {
    SCOPED_TRACE(p.name);
    OwnedMat A, aij;
    *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, p.local, p.partition);
    build_aij(p, aij.out());
    OwnedVec d, d_aij;
    PETSC_OK(MatCreateVecs(A, nullptr, d.out()));
    PETSC_OK(VecDuplicate(d, d_aij.out()));
    PETSC_OK(MatGetDiagonal(A, d));
    PETSC_OK(MatGetDiagonal(aij, d_aij));
    EXPECT_EQ(distance(d, d_aij), 0.0);  // copied values, not computed
    PetscReal smallest = 0;
    PETSC_OK(VecMin(d, nullptr, &smallest));
    EXPECT_GT(smallest, 0.0);  // not an untouched zero vector
  }
}

// ---- (e) errors ------------------------------------------------------------

TEST(PetscOperator, ExceptionInCallbackBecomesPetscError) {
  const auto context = test::petsc_test_context();
  const Problem p = make_problem(laplacian_2d(8, 6));
  OwnedMat A, B, C;
  *A.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context, p.local, p.partition);
  OwnedVec x, y;
  PETSC_OK(MatCreateVecs(A, x.out(), y.out()));
  fill_by_index(x, 0.2);
  PETSC_OK(MatCreateDense(PETSC_COMM_WORLD, static_cast<PetscInt>(p.local.local_rows()), PETSC_DECIDE,
                          static_cast<PetscInt>(p.whole.global_rows), 3, nullptr, B.out()));
  PETSC_OK(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PETSC_OK(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));

  PETSC_OK(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));  // quiet: the errors are expected
  solver::test_hooks::fail_next_petsc_callback(A, "injected by the test");
  const PetscErrorCode mult = MatMult(A, x, y);
  const char* text = nullptr;
  test::PetscSpecificMessage specific = nullptr;
  PetscErrorMessage(mult, &text, &specific);
  const std::string message = specific ? specific : "";
  // A failed product leaks inside PETSc 3.18 (the shell's numeric phase detaches C's product data,
  // which holds references to A and B, before calling us, and does not reattach it on error), so
  // -malloc_dump lists A, B and C after this test. MatProduct rather than MatMatMult at least keeps C ours.
  PETSC_OK(MatProductCreate(A, B, nullptr, C.out()));
  PETSC_OK(MatProductSetType(C, MATPRODUCT_AB));
  PETSC_OK(MatProductSetFromOptions(C));
  PETSC_OK(MatProductSymbolic(C));
  solver::test_hooks::fail_next_petsc_callback(A, "injected into the product");
  const PetscErrorCode product = MatProductNumeric(C);
  solver::test_hooks::fail_next_petsc_callback(A, "injected into the diagonal");
  const PetscErrorCode diagonal = MatGetDiagonal(A, y);
  PETSC_OK(PetscPopErrorHandler());

  EXPECT_EQ(mult, PETSC_ERR_LIB);
  EXPECT_NE(message.find("injected by the test"), std::string::npos) << message;
  EXPECT_EQ(product, PETSC_ERR_LIB);
  EXPECT_EQ(diagonal, PETSC_ERR_LIB);
  // The Mat still works after the failures.
  OwnedVec y2;
  PETSC_OK(VecDuplicate(y, y2.out()));
  EXPECT_EQ(MatMult(A, x, y2), 0);
}

TEST(PetscOperator, FromAijRefusesNonSymmetric) {
  const auto context = test::petsc_test_context();
  Problem p = make_problem(laplacian_2d(6, 5));
  // Row 0 holds columns 0, 1 and 6: make A(0, 1) = 0.5 while A(1, 0) stays -1.
  if (test::mpi_rank(PETSC_COMM_WORLD) == 0) p.local.values[1] = 0.5;
  OwnedMat aij;
  build_aij(p, aij.out());
  try {
    OwnedMat A;
    *A.out() = solver::create_petsc_operator_from_aij(aij, context);
    ADD_FAILURE() << "a non-symmetric matrix was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not symmetric"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blockeigs
