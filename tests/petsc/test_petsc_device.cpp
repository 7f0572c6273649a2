// Our operator with PETSc's device arrays (a PETSc with CUDA, our CUDA
// backend, a GPU on every rank; skipped otherwise), at np 1-4 (the last rank
// without rows from np 2): the Mat's vectors are VECCUDA; KSPCG (with
// PCJACOBI and with our Chebyshev PCSHELL) and SLEPc's Krylov-Schur hand the
// shell device arrays only, and PETSc copies no vector data between host and
// device during KSPSolve; a 16-column MATDENSECUDA product is one apply and
// equals 16 MatMults; MatGetDiagonal fills a device Vec; host Vecs are
// still taken, copied and counted; preconditioner type petsc hands PETSc
// device blocks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <slepceps.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "io/generators/generators.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_shell_pc.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "dense/memory.hpp"
#include "distributed_fixtures.hpp"
#include "tests/petsc/slepc_test_support.hpp"

namespace blockeigs {
namespace {

using test::OwnedEps;
using test::OwnedKsp;
using test::OwnedMat;
using test::OwnedVec;

const io::GeneratorSpec laplacian{io::GeneratorKind::laplacian_3d, 12, 10, 8, 7};

// The operator over the Laplacian's rows; from np 2 the last rank owns none.
class PetscDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (context_.space() != Space::device || !solver::petsc_device_arrays())
      GTEST_SKIP() << "needs a GPU on every rank and a PETSc with CUDA (this build: device arrays "
                   << (solver::petsc_device_arrays() ? "yes" : "no") << ")";
    const CsrRows whole = io::generate_rows(laplacian, 0, io::generated_rows(laplacian));
    const int ranks = test::mpi_size(PETSC_COMM_WORLD), rank = test::mpi_rank(PETSC_COMM_WORLD);
    solver::RowPartition partition = solver::RowPartition::balanced(whole.row_offsets, ranks);
    if (ranks > 1) {
      std::vector<std::int64_t> first = solver::RowPartition::balanced(whole.row_offsets, ranks - 1).first_rows();
      first.push_back(first.back());
      partition = solver::RowPartition(first);
    }
    local_ = slice_rows(whole, partition.begin(rank), partition.end(rank));
    partition_ = partition;
    *A_.out() = solver::create_petsc_operator(PETSC_COMM_WORLD, context_, local_, partition_);
  }

  static bool is_cuda(Vec v) {
    PetscBool cuda = PETSC_FALSE;
    PETSC_OK(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(v), &cuda, VECSEQCUDA, VECMPICUDA, ""));
    return cuda == PETSC_TRUE;
  }

  dense::Context context_ = test::petsc_test_context();
  CsrRows local_;
  solver::RowPartition partition_;
  OwnedMat A_;
};

// What a step handed the shell and what PETSc copied meanwhile.
struct Traffic {
  solver::PetscOperatorStats stats;
  solver::PetscCopyCounts copies;
  static Traffic now(Mat A) { return {solver::petsc_operator_stats(A), solver::petsc_copy_counts()}; }
};

TEST_F(PetscDevice, KspCgHandsTheShellDeviceArraysWithoutCopies) {
  OwnedVec b, x;
  PETSC_OK(MatCreateVecs(A_, x.out(), b.out()));
  EXPECT_TRUE(is_cuda(x));
  EXPECT_TRUE(is_cuda(b));
  PETSC_OK(VecSet(b, 1.0));
  PetscInt iterations[2] = {0, 0};
  for (int chebyshev = 0; chebyshev < 2; ++chebyshev) {
    SCOPED_TRACE(chebyshev ? "our Chebyshev PCSHELL" : "PCJACOBI");
    OwnedKsp ksp;
    PC pc = nullptr;
    PETSC_OK(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
    PETSC_OK(KSPSetOperators(ksp, A_, A_));
    PETSC_OK(KSPSetType(ksp, KSPCG));
    PETSC_OK(KSPGetPC(ksp, &pc));
    if (chebyshev)
      solver::set_petsc_chebyshev_pc(pc, A_);
    else
      PETSC_OK(PCSetType(pc, PCJACOBI));
    PETSC_OK(KSPSetTolerances(ksp, 1e-8, 0.0, PETSC_DEFAULT, 2000));
    PETSC_OK(KSPSetUp(ksp));
    // A first solve: PCJACOBI's set-up leaves its diagonal on the host (it
    // checks for zeros there), and its first apply moves it to the device.
    PETSC_OK(VecSet(x, 0.0));
    PETSC_OK(KSPSolve(ksp, b, x));
    PETSC_OK(VecSet(x, 0.0));
    const Traffic before = Traffic::now(A_);
    PETSC_OK(KSPSolve(ksp, b, x));
    const Traffic after = Traffic::now(A_);
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    PETSC_OK(KSPGetConvergedReason(ksp, &reason));
    PETSC_OK(KSPGetIterationNumber(ksp, &iterations[chebyshev]));
    EXPECT_GT(reason, 0);
    EXPECT_GT(after.stats.device_arrays, before.stats.device_arrays);
    EXPECT_EQ(after.stats.host_arrays, before.stats.host_arrays);
    EXPECT_EQ(after.stats.copies, before.stats.copies);
    EXPECT_EQ(after.copies.to_device, before.copies.to_device);  // -log_view's CpuToGpu
    EXPECT_EQ(after.copies.to_host, before.copies.to_host);      // and GpuToCpu
  }
  EXPECT_LT(iterations[1], iterations[0]);  // Chebyshev against PCJACOBI
}

TEST_F(PetscDevice, DenseCudaProductIsOneApplyAndEqualsColumnProducts) {
  const PetscInt k = 16;
  PetscInt m = 0, n = 0;
  PETSC_OK(MatGetLocalSize(A_, &m, nullptr));
  PETSC_OK(MatGetSize(A_, &n, nullptr));
  OwnedMat B, C;
  PETSC_OK(MatCreate(PETSC_COMM_WORLD, B.out()));
  PETSC_OK(MatSetSizes(B, m, PETSC_DECIDE, n, k));
  PETSC_OK(MatSetType(B, MATDENSECUDA));
  PETSC_OK(MatSetUp(B));
  PetscInt first = 0;
  PETSC_OK(MatGetOwnershipRange(B, &first, nullptr));
  PetscScalar* host = nullptr;
  PETSC_OK(MatDenseGetArrayWrite(B, &host));  // filled on the host, moved to the device by the first product
  for (PetscInt j = 0; j < k; ++j)
    for (PetscInt i = 0; i < m; ++i) host[j * m + i] = std::cos(0.1 * double(first + i) * double(j + 1));
  PETSC_OK(MatDenseRestoreArrayWrite(B, &host));
  PETSC_OK(MatMatMult(A_, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, C.out()));
  PetscBool dense_cuda = PETSC_FALSE;
  PETSC_OK(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(static_cast<Mat>(C)), &dense_cuda, MATSEQDENSECUDA,
                                     MATMPIDENSECUDA, ""));
  EXPECT_TRUE(dense_cuda);

  const Traffic before = Traffic::now(A_);
  PETSC_OK(MatMatMult(A_, B, MAT_REUSE_MATRIX, PETSC_DETERMINE, C.out()));
  const Traffic after = Traffic::now(A_);
  EXPECT_EQ(after.stats.block_applies, before.stats.block_applies + 1);  // the whole block, once
  EXPECT_EQ(after.stats.host_arrays, before.stats.host_arrays);
  EXPECT_EQ(after.stats.copies, before.stats.copies);
  EXPECT_EQ(after.copies.to_device, before.copies.to_device);
  EXPECT_EQ(after.copies.to_host, before.copies.to_host);

  OwnedVec y;
  PETSC_OK(MatCreateVecs(A_, nullptr, y.out()));
  for (PetscInt j = 0; j < k; ++j) {
    Vec b_j = nullptr, c_j = nullptr;
    PETSC_OK(MatDenseGetColumnVecRead(B, j, &b_j));
    PETSC_OK(MatMult(A_, b_j, y));
    PETSC_OK(MatDenseRestoreColumnVecRead(B, j, &b_j));
    PETSC_OK(MatDenseGetColumnVecRead(C, j, &c_j));
    PETSC_OK(VecAXPY(y, -1.0, c_j));
    PETSC_OK(MatDenseRestoreColumnVecRead(C, j, &c_j));
    PetscReal difference = 0;
    PETSC_OK(VecNorm(y, NORM_INFINITY, &difference));
    EXPECT_LE(difference, 1e-13) << "column " << j;  // |b| <= 1, rows of 7 entries up to 6
  }
  EXPECT_EQ(solver::petsc_operator_stats(A_).products, after.stats.products + k);
}

TEST_F(PetscDevice, DiagonalIntoADeviceVector) {
  OwnedVec d;
  PETSC_OK(MatCreateVecs(A_, nullptr, d.out()));
  const Traffic before = Traffic::now(A_);
  PETSC_OK(MatGetDiagonal(A_, d));
  const Traffic after = Traffic::now(A_);
  EXPECT_EQ(after.stats.copies, before.stats.copies);
  EXPECT_EQ(after.copies.to_device + after.copies.to_host, before.copies.to_device + before.copies.to_host);
  PetscReal low = 0, high = 0;
  PETSC_OK(VecMin(d, nullptr, &low));
  PETSC_OK(VecMax(d, nullptr, &high));
  EXPECT_EQ(low, 6.0);  // the 7-point Laplacian's diagonal
  EXPECT_EQ(high, 6.0);
}

TEST_F(PetscDevice, HostVectorsAreCopiedAndCounted) {
  OwnedVec x_device, y_device, x_host, y_host;
  PETSC_OK(MatCreateVecs(A_, x_device.out(), y_device.out()));
  PETSC_OK(VecCreate(PETSC_COMM_WORLD, x_host.out()));
  PETSC_OK(VecSetType(x_host, VECSTANDARD));
  PetscInt m = 0;
  PETSC_OK(MatGetLocalSize(A_, &m, nullptr));
  PETSC_OK(VecSetSizes(x_host, m, PETSC_DETERMINE));
  PETSC_OK(VecDuplicate(x_host, y_host.out()));
  PETSC_OK(VecSetRandom(x_host, nullptr));
  PETSC_OK(VecCopy(x_host, x_device));
  const Traffic before = Traffic::now(A_);
  PETSC_OK(MatMult(A_, x_host, y_host));
  const Traffic after = Traffic::now(A_);
  EXPECT_EQ(after.stats.host_arrays, before.stats.host_arrays + 2);
  EXPECT_EQ(after.stats.copies, before.stats.copies + (m > 0 ? 2 : 0));  // x in, y out; nothing on a rank without rows
  PETSC_OK(MatMult(A_, x_device, y_device));
  PETSC_OK(VecAXPY(y_device, -1.0, y_host));
  PetscReal difference = 0;
  PETSC_OK(VecNorm(y_device, NORM_INFINITY, &difference));
  EXPECT_EQ(difference, 0.0);  // the same kernel on the same values
}

TEST_F(PetscDevice, SlepcKrylovSchurHandsTheShellDeviceArrays) {
  OwnedEps eps;
  PETSC_OK(EPSCreate(PETSC_COMM_WORLD, eps.out()));
  PETSC_OK(EPSSetOperators(eps, A_, nullptr));
  PETSC_OK(EPSSetProblemType(eps, EPS_HEP));
  PETSC_OK(EPSSetType(eps, EPSKRYLOVSCHUR));
  PETSC_OK(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PETSC_OK(EPSSetDimensions(eps, 4, PETSC_DETERMINE, PETSC_DETERMINE));
  PETSC_OK(EPSSetTolerances(eps, 1e-10, 10000));
  if (test::mpi_size(PETSC_COMM_WORLD) > 1) {
    // A rank without rows (this fixture's last): SLEPc's contiguous CUDA BVs (svec, the default, and mat)
    // reduce an unwritten device buffer in BVDotVec_BLAS_CUDA on such a rank, and find wrong eigenvalues
    // with PETSc's own MATAIJCUSPARSE too (docs/petsc.md); BVVECS reduces VecMDot's results.
    BV bv = nullptr;
    PETSC_OK(EPSGetBV(eps, &bv));
    PETSC_OK(BVSetType(bv, BVVECS));
  }
  const Traffic before = Traffic::now(A_);
  PETSC_OK(EPSSolve(eps));
  const Traffic after = Traffic::now(A_);
  EXPECT_GT(after.stats.device_arrays, before.stats.device_arrays);
  EXPECT_EQ(after.stats.host_arrays, before.stats.host_arrays);
  EXPECT_EQ(after.stats.copies, before.stats.copies);
  PetscInt converged = 0;
  PETSC_OK(EPSGetConverged(eps, &converged));
  ASSERT_GE(converged, 4);
  const std::vector<double> exact = io::laplacian_eigenvalues(laplacian);
  for (PetscInt i = 0; i < 4; ++i) {
    PetscScalar value = 0;
    PETSC_OK(EPSGetEigenvalue(eps, i, &value, nullptr));
    EXPECT_NEAR(value, exact[static_cast<std::size_t>(i)], 1e-9 * exact[static_cast<std::size_t>(i)]) << i;
  }
}

// preconditioner: {type: petsc} with device blocks: PETSc gets MATAIJCUSPARSE
// and MATDENSECUDA blocks; PCJACOBI of the 7-point Laplacian divides by 6.
TEST_F(PetscDevice, PetscPcTakesDeviceBlocks) {
  auto pc = solver::make_petsc_preconditioner(PETSC_COMM_WORLD, context_, local_, partition_, "-pc_type jacobi");
  const std::int64_t m = local_.local_rows(), k = 3;
  std::vector<double> r(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) r[i * k + j] = std::cos(0.2 * double(local_.first_row + i) + double(j));
  dense::Buffer<double> R(Space::device, r.size()), W(Space::device, r.size());
  R.copy_from_host(r.data(), r.size());
  pc->apply(dense::ConstDenseView<double>(Space::device, m, k, k, R.data()),
            dense::DenseView<double>{Space::device, m, k, k, W.data()});
  context_.synchronize();
  const std::vector<double> w = W.to_host();
  for (std::size_t i = 0; i < r.size(); ++i) ASSERT_NEAR(w[i], r[i] / 6.0, 1e-15) << i;
}

}  // namespace
}  // namespace blockeigs
