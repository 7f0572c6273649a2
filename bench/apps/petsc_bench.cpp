// petsc-bench: our operator under PETSc against PETSc's own matrix, on the
// 3D Laplacian (7-point, n^3 rows):
//
//   mpirun -np N petsc-bench [-n 128] [-rtol 1e-8] [-columns 16] [-reps 3] [PETSc options]
//
//  - KSPCG (b = 1, x0 = 0, rtol) on our MATSHELL with its own vectors
//    (VECCUDA where PETSc has CUDA and the operator is on the GPU), on
//    PETSc's AIJ matrix of the same rows (MATAIJCUSPARSE there, MATAIJ
//    otherwise) with PCJACOBI, on our MATSHELL with host vectors (the staged
//    path), and on our MATSHELL with our Chebyshev PCSHELL;
//  - C = A B for a dense block of `columns` columns (MATDENSECUDA there) as one
//    MatMatMult against one MatMult a column.
// Each line gives the fastest of `reps` runs (the staged path: one), after an
// untimed one, the iterations, and what PETSc
// copied between host and device (-log_view's CpuToGpu/GpuToCpu counts) and
// what the adapter copied in that run. Rows in the operator's numbering.
#include <petscdevice.h>
#include <petscksp.h>
#include <petsctime.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_shell_pc.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace {

using namespace blockeigs;

constexpr char help[] =
    "petsc-bench [-n 128] [-rtol 1e-8] [-columns 16] [-reps 3]: KSPCG and MatMatMult on block-eigs' MATSHELL "
    "against PETSc's AIJ matrix.\n";

// Waits for our device work and, where PETSc's arrays are on the device, for
// PETSc's, so that a clock reading covers it.
PetscErrorCode synchronize(const dense::Context& context, bool device) {
  PetscDeviceContext dctx = nullptr;
  PetscFunctionBeginUser;
  context.synchronize();
  if (device) {
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

struct Run {
  double seconds = 1e300;
  PetscInt iterations = 0;
  double to_device = 0, to_host = 0;  // PETSc's counts
  std::int64_t adapter_copies = 0;    // ours (the shell's), where the Mat is ours
};

enum class Preconditioner { petsc_jacobi, our_chebyshev };

// The fastest of `reps` KSPCG solves of A x = 1 from x = 0 (set-up and a first solve outside the clock).
PetscErrorCode time_cg(Mat A, Mat shell, Preconditioner kind, PetscReal rtol, int reps, Run* out) {
  KSP ksp = nullptr;
  PC pc = nullptr;
  Vec x = nullptr, b = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  if (kind == Preconditioner::petsc_jacobi) {
    PetscCall(PCSetType(pc, PCJACOBI));
  } else {
    try {
      solver::set_petsc_chebyshev_pc(pc, A);
    } catch (const std::exception& e) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
    }
  }
  PetscCall(KSPSetTolerances(ksp, rtol, 0.0, PETSC_DEFAULT, 100000));
  PetscCall(KSPSetUp(ksp));
  // An untimed solve first: PCJACOBI's set-up leaves its diagonal on the host
  // and its first apply moves it; libraries' first calls set up.
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  for (int rep = 0; rep < reps; ++rep) {
    PetscCall(VecSet(x, 0.0));
    const solver::PetscCopyCounts before = solver::petsc_copy_counts();
    const std::int64_t ours_before = shell ? solver::petsc_operator_stats(shell).copies : 0;
    PetscLogDouble start = 0, end = 0;
    PetscCall(PetscTime(&start));
    PetscCall(KSPSolve(ksp, b, x));  // ends in a norm on the host
    PetscCall(PetscTime(&end));
    const solver::PetscCopyCounts after = solver::petsc_copy_counts();
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPCG did not converge (reason %d)",
               static_cast<int>(reason));
    if (end - start < out->seconds) {
      out->seconds = end - start;
      PetscCall(KSPGetIterationNumber(ksp, &out->iterations));
      out->to_device = after.to_device - before.to_device;
      out->to_host = after.to_host - before.to_host;
      out->adapter_copies = shell ? solver::petsc_operator_stats(shell).copies - ours_before : 0;
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode print_cg(const char* name, const Run& run, const Run& reference) {
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(
      PETSC_COMM_WORLD, "petsc-bench | %-44s | %6d | %9.4f | %8.4f | %7.2fx | %5.0f / %-5.0f | %lld\n", name,
      static_cast<int>(run.iterations), run.seconds, 1e3 * run.seconds / std::max<PetscInt>(run.iterations, 1),
      run.seconds / reference.seconds, run.to_device, run.to_host, static_cast<long long>(run.adapter_copies)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The fastest of `reps` C = A B (one MatMatMult) and of one MatMult a column.
PetscErrorCode time_product(Mat A, const dense::Context& context, PetscInt columns, int reps, bool device) {
  Mat B = nullptr, C = nullptr;
  Vec y = nullptr;
  PetscInt m = 0, n = 0;
  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  PetscCall(MatGetSize(A, &n, nullptr));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, m, PETSC_DECIDE, n, columns));
  PetscCall(MatSetType(B, device ? MATDENSECUDA : MATDENSE));
  PetscCall(MatSetUp(B));
  PetscCall(MatSetRandom(B, nullptr));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));  // set-up, and B on the device
  PetscCall(MatCreateVecs(A, nullptr, &y));
  double block = 1e300, single = 1e300;
  for (int rep = 0; rep < reps; ++rep) {
    PetscLogDouble t0 = 0, t1 = 0, t2 = 0;
    PetscCall(synchronize(context, device));
    PetscCall(PetscTime(&t0));
    PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C));
    PetscCall(synchronize(context, device));
    PetscCall(PetscTime(&t1));
    for (PetscInt j = 0; j < columns; ++j) {
      Vec b_j = nullptr, c_j = nullptr;
      PetscCall(MatDenseGetColumnVecRead(B, j, &b_j));
      PetscCall(MatDenseGetColumnVecWrite(C, j, &c_j));
      PetscCall(MatMult(A, b_j, c_j));
      PetscCall(MatDenseRestoreColumnVecWrite(C, j, &c_j));
      PetscCall(MatDenseRestoreColumnVecRead(B, j, &b_j));
    }
    PetscCall(synchronize(context, device));
    PetscCall(PetscTime(&t2));
    block = std::min(block, t1 - t0);
    single = std::min(single, t2 - t1);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc-bench | MatProduct AB, %d columns (%s) | one MatMatMult %.3f ms | %d MatMults %.3f ms | "
                        "%.2fx\n",
                        static_cast<int>(columns), device ? MATDENSECUDA : MATDENSE, 1e3 * block,
                        static_cast<int>(columns), 1e3 * single, single / block));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// PETSc's AIJ matrix of our rows: MATAIJCUSPARSE where `device`, else MATAIJ.
PetscErrorCode build_aij(const solver::DistributedRows& loaded, bool device, Mat* aij) {
  PetscFunctionBeginUser;
  const auto m = static_cast<PetscInt>(loaded.rows.local_rows());
  const auto n = static_cast<PetscInt>(loaded.partition.global_rows());
  std::vector<PetscInt> offsets(loaded.rows.row_offsets.begin(), loaded.rows.row_offsets.end());
  std::vector<PetscInt> columns(loaded.rows.col_indices.begin(), loaded.rows.col_indices.end());
  PetscCall(MatCreate(PETSC_COMM_WORLD, aij));
  PetscCall(MatSetSizes(*aij, m, m, n, n));
  PetscCall(MatSetType(*aij, device ? MATAIJCUSPARSE : MATAIJ));
  PetscCall(MatSeqAIJSetPreallocationCSR(*aij, offsets.data(), columns.data(), loaded.rows.values.data()));
  PetscCall(MatMPIAIJSetPreallocationCSR(*aij, offsets.data(), columns.data(), loaded.rows.values.data()));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode run(const dense::Context& context, const solver::DistributedRows& loaded, PetscReal rtol,
                   PetscInt columns, int reps) {
  Mat shell = nullptr, staged = nullptr, aij = nullptr;
  PetscFunctionBeginUser;
  const bool device = context.space() == Space::device && solver::petsc_device_arrays();
  try {
    shell = solver::create_petsc_operator(PETSC_COMM_WORLD, context, loaded.rows, loaded.partition);
    staged = solver::create_petsc_operator(PETSC_COMM_WORLD, context, loaded.rows, loaded.partition);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(MatShellSetVecType(staged, VECSTANDARD));  // host vectors: every product copied both ways
  PetscCall(build_aij(loaded, device, &aij));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-bench | %s: %lld rows on the %s backend, PETSc device arrays: %s\n",
                        loaded.description.c_str(), static_cast<long long>(loaded.partition.global_rows()),
                        context.space() == Space::host ? "cpu" : "cuda", device ? "yes" : "no"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-bench | %-44s | %6s | %9s | %8s | %8s | %-13s | %s\n", "KSPCG rtol",
                        "its", "time s", "ms/it", "vs aij", "CpuToGpu/GtoC", "adapter copies"));
  Run on_aij, on_shell, on_staged, with_chebyshev;
  PetscCall(time_cg(aij, nullptr, Preconditioner::petsc_jacobi, rtol, reps, &on_aij));
  PetscCall(time_cg(shell, shell, Preconditioner::petsc_jacobi, rtol, reps, &on_shell));
  PetscCall(time_cg(staged, staged, Preconditioner::petsc_jacobi, rtol, 1, &on_staged));  // slow: once
  PetscCall(time_cg(shell, shell, Preconditioner::our_chebyshev, rtol, reps, &with_chebyshev));
  PetscCall(print_cg(device ? "AIJCUSPARSE + PCJACOBI" : "AIJ + PCJACOBI", on_aij, on_aij));
  PetscCall(print_cg("our MATSHELL + PCJACOBI", on_shell, on_aij));
  PetscCall(print_cg("our MATSHELL, host Vecs (staged) + PCJACOBI", on_staged, on_aij));
  PetscCall(print_cg("our MATSHELL + our Chebyshev PCSHELL", with_chebyshev, on_aij));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc-bench | staged / shell: %.2fx; Chebyshev / Jacobi on the shell: %.2fx time, "
                        "%d vs %d iterations\n",
                        on_staged.seconds / on_shell.seconds, with_chebyshev.seconds / on_shell.seconds,
                        static_cast<int>(with_chebyshev.iterations), static_cast<int>(on_shell.iterations)));
  PetscCall(time_product(shell, context, columns, reps, device));
  PetscCall(MatDestroy(&aij));
  PetscCall(MatDestroy(&staged));
  PetscCall(MatDestroy(&shell));
  PetscFunctionReturn(PETSC_SUCCESS);
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  solver::set_petsc_gpu_aware_default();  // before PETSc starts
  if (PetscInitialize(&argc, &argv, nullptr, help) != PETSC_SUCCESS) return 1;
  PetscInt n = 128, columns = 16, reps = 3;
  PetscReal rtol = 1e-8;
  int status = 0;
  if (PetscOptionsGetInt(nullptr, nullptr, "-n", &n, nullptr) ||
      PetscOptionsGetInt(nullptr, nullptr, "-columns", &columns, nullptr) ||
      PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr) ||
      PetscOptionsGetReal(nullptr, nullptr, "-rtol", &rtol, nullptr))
    status = 1;
  try {
    if (status == 0) {
      const dense::Context context = solver::make_context(Backend::automatic, PETSC_COMM_WORLD);
      context.warm_up();
      io::MatrixConfig matrix;
      matrix.source = io::MatrixSource::generator;
      matrix.generator = {io::GeneratorKind::laplacian_3d, n, n, n, 7};
      const solver::DistributedRows loaded = solver::load_distributed_rows(matrix, PETSC_COMM_WORLD);
      const int runs = static_cast<int>(std::max<PetscInt>(reps, 1));
      if (run(context, loaded, rtol, columns, runs) != PETSC_SUCCESS) status = 1;
    }
  } catch (const std::exception& e) {
    PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", e.what());
    status = 1;
  }
  if (PetscFinalize() != PETSC_SUCCESS) status = 1;
  MPI_Finalize();
  return status;
}
