// petsc-example: our operator inside ordinary PETSc/SLEPc code.
//
//   mpirun -np 2 petsc-example [-nx 12 -ny 10 -nz 8] [-blockeigs_pc chebyshev] [PETSc/SLEPc options]
//
// Builds a 3D Laplacian (7-point) with our generator (with a complex PETSc the
// twisted one: periodic, Bloch phases 0.3, 0.5, 0.7, complex Hermitian), wraps it as a PETSc Mat
// in two calls, solves A x = 1 with KSPCG + PCJACOBI and finds the 4 smallest
// eigenvalues with SLEPc's EPS (Krylov-Schur unless -eps_type says otherwise),
// printing both next to the closed-form eigenvalues. Everything after the two
// calls is plain PETSc/SLEPc code: -ksp_monitor, -eps_type lobpcg,
// -eps_view, -log_view ... work as usual; on the GPU with a PETSc that has
// CUDA the Mat's vectors are VECCUDA (-vec_type standard gives host vectors,
// staged through the device). -blockeigs_pc chebyshev (or jacobi) puts our
// preconditioner in as a PCSHELL, for KSPCG and for preconditioned
// eigensolvers (-eps_type lobpcg). Exit status: 0, 1 on an error, 3 when the
// solve or the eigensolver did not converge.
#include <petscksp.h>
#include <petsctime.h>
#include <slepceps.h>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "apps/environment.hpp"
#include "core/env_overrides.hpp"
#include "config/run_config.hpp"
#include "core/scalar.hpp"
#include "io/generators/generators.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_shell_pc.hpp"

namespace {

using namespace blockeigs;

constexpr char help[] = "Solves with KSPCG and finds eigenvalues with SLEPc on block-eigs' distributed operator.\n";

constexpr const char* usage =
    "usage: mpirun -np N petsc-example [-nx 12 -ny 10 -nz 8] [-blockeigs_pc chebyshev|jacobi]\n"
    "                                  [PETSc/SLEPc options]\n"
    "       petsc-example --help | --version\n"
    "\n"
    "Wraps block-eigs' distributed operator for a 3D Laplacian (7-point, nx x ny x nz; with a\n"
    "complex PETSc the twisted one, periodic with Bloch phases 0.3, 0.5, 0.7) as a\n"
    "PETSc Mat, solves A x = 1 with KSPCG + PCJACOBI and finds the 4 smallest eigenvalues\n"
    "with SLEPc's EPS (Krylov-Schur unless -eps_type says otherwise), printing them next to\n"
    "the closed form.\n"
    "\n"
    "options:\n"
    "  -nx N, -ny N, -nz N  the grid (default 12 x 10 x 8)\n"
    "  -OPTION VALUE        PETSc's and SLEPc's options take one dash (-ksp_monitor,\n"
    "                       -eps_type lobpcg, -eps_view; -help lists them all).\n"
    "                       Preconditioned eigensolvers get PCJACOBI by default\n"
    "                       (-st_pc_type overrides it)\n"
    "  -blockeigs_pc NAME   chebyshev or jacobi: block-eigs' own preconditioner as a PCSHELL,\n"
    "                       for KSPCG and for preconditioned eigensolvers\n"
    "  -vec_type TYPE       the Mat's vectors: standard, or cuda (the default where PETSc\n"
    "                       has CUDA and the operator runs on the GPU)\n"
    "  --help               prints this text\n"
    "  --version            prints the version, commit and build (CUDA, PETSc, HDF5)\n"
    "\n"
    "exit codes:\n"
    "  0  both the solve and the eigensolver converged\n"
    "  1  error: PETSc, SLEPc or block-eigs failed; the message says where\n"
    "  2  bad command line: an unknown --option, a bad -nx or -blockeigs_pc\n"
    "  3  the solve or the eigensolver did not converge\n"
    "\n"
    "The adapter, and the block-eigs calls behind it: docs/petsc.md\n";

// Our preconditioner as the PC (-blockeigs_pc), or PETSc's PCJACOBI.
enum class OurPc { none, chebyshev, jacobi };

// Sets `pc` to ours where asked; a C++ exception becomes a PETSc error.
PetscErrorCode set_pc(PC pc, Mat A, OurPc ours, bool eigensolver) {
  PetscFunctionBeginUser;
  try {
    if (ours == OurPc::chebyshev) {
      solver::ChebyshevOptions options = solver::petsc_chebyshev_options();
      options.eigensolver = eigensolver;  // degree 16 for an eigensolver, 8 for KSPCG
      solver::set_petsc_chebyshev_pc(pc, A, options);
    } else if (ours == OurPc::jacobi) {
      solver::set_petsc_jacobi_pc(pc, A);
    } else {
      PetscCall(PCSetType(pc, PCJACOBI));  // from our operator's diagonal
    }
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscFunctionReturn(0);
}

PetscErrorCode solve_linear_system(Mat A, OurPc ours, PetscBool* converged) {
  KSP ksp = nullptr;
  PC pc = nullptr;
  Vec x = nullptr, b = nullptr, r = nullptr;
  PetscInt iterations = 0;
  PetscReal b_norm = 0, r_norm = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(set_pc(pc, A, ours, false));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscLogDouble start = 0, end = 0;
  PetscCall(PetscTime(&start));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&end));
  PetscCall(KSPGetIterationNumber(ksp, &iterations));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  *converged = reason > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &r_norm));
  PetscCall(VecNorm(b, NORM_2, &b_norm));
  const char* pc_name = ours == OurPc::chebyshev ? "block-eigs chebyshev"
                        : ours == OurPc::jacobi  ? "block-eigs jacobi"
                                                 : PCJACOBI;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "KSP %s + PC %s: %s in %d iterations, ||b - A x|| / ||b|| = %.3e (KSPSolve %.4f s)\n", KSPCG,
                        pc_name, reason > 0 ? "converged" : "NOT converged", static_cast<int>(iterations),
                        static_cast<double>(r_norm / b_norm), static_cast<double>(end - start)));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

PetscErrorCode find_smallest_eigenvalues(Mat A, OurPc ours, PetscInt nev, const std::vector<double>& exact,
                                         PetscBool* all_converged) {
  EPS eps = nullptr;
  EPSType type = nullptr;
  PetscInt converged = 0, iterations = 0;
  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, nullptr));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSKRYLOVSCHUR));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(eps, 1e-10, 10000));
  // Preconditioned solvers (-eps_type lobpcg, gd, jd) precondition through the
  // ST's KSP. PETSc's parallel default PC, block Jacobi, needs the diagonal
  // block as an assembled matrix, which a MATSHELL does not have; Jacobi takes
  // our operator's diagonal. -st_pc_type (read by EPSSetFromOptions) overrides it.
  ST st = nullptr;
  KSP st_ksp = nullptr;
  PC st_pc = nullptr;
  PetscCall(EPSGetST(eps, &st));
  PetscCall(STGetKSP(st, &st_ksp));
  PetscCall(KSPGetPC(st_ksp, &st_pc));
  PetscCall(set_pc(st_pc, A, ours, true));
  PetscCall(EPSSetFromOptions(eps));
  PetscLogDouble start = 0, end = 0;
  PetscCall(PetscTime(&start));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&end));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(EPSGetConverged(eps, &converged));
  PetscCall(EPSGetIterationNumber(eps, &iterations));
  *all_converged = converged >= nev ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "EPS %s: %d of %d eigenpairs converged in %d iterations (EPSSolve %.4f s)\n",
                        type, static_cast<int>(converged), static_cast<int>(nev), static_cast<int>(iterations),
                        static_cast<double>(end - start)));
  PetscCall(
      PetscPrintf(PETSC_COMM_WORLD, "  %2s  %-20s  %-20s  %s\n", "i", "eigenvalue", "closed form", "||r||/|lambda|"));
  for (PetscInt i = 0; i < PetscMin(converged, nev); ++i) {
    PetscScalar value = 0, imaginary = 0;  // zero: the problem is Hermitian
    PetscReal error = 0;
    PetscCall(EPSGetEigenvalue(eps, i, &value, &imaginary));
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &error));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %2d  %-20.14e  %-20.14e  %.2e\n", static_cast<int>(i),
                          static_cast<double>(PetscRealPart(value)), exact[static_cast<std::size_t>(i)],
                          static_cast<double>(error)));
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

// The generator's 3D Laplacian; with a complex PETSc, which wraps a complex Hermitian operator, the twisted one
// (periodic, with phases that split the periodic grid's repeated eigenvalues).
io::MatrixConfig example_matrix(PetscInt nx, PetscInt ny, PetscInt nz) {
  io::MatrixConfig matrix;
  matrix.source = io::MatrixSource::generator;
  matrix.generator = {io::GeneratorKind::laplacian_3d, nx, ny, nz, 7};
  if constexpr (is_complex_v<PetscScalar>) {
    matrix.generator.periodic = true;
    matrix.generator.phase = {0.3, 0.5, 0.7};
  }
  return matrix;
}

}  // namespace

int main(int argc, char** argv) {
  // Our own options, before PETSc sees the command line: every rank reads the
  // same argv, so each exits the same way without MPI.
  apps::set_nccl_defaults();
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto first_rank = [] {
    const std::optional<std::string>& rank = env::environment().launcher_rank;
    return !rank || *rank == "0";
  };
  if (const apps::InfoRequest request = apps::info_request(args); request != apps::InfoRequest::none)
    return first_rank() ? apps::print_info(request, "petsc-example", usage) : apps::exit_ok;
  for (const std::string& arg : args)
    if (arg.starts_with("--")) {
      if (first_rank()) apps::usage_error("petsc-example", apps::unknown_option(arg));
      return apps::exit_usage;
    }
  // MPI first, so that PETSc's option for a MPI without CUDA support can be set before PETSc starts.
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  solver::set_petsc_gpu_aware_default();
  if (SlepcInitialize(&argc, &argv, nullptr, help) != 0) return 1;
  PetscInt nx = 12, ny = 10, nz = 8;  // unequal sides: no repeated eigenvalues among the smallest
  char pc_name[32] = "", vec_type[32] = "";
  PetscBool vec_type_set = PETSC_FALSE;
  int status = 0;
  if (PetscOptionsGetInt(nullptr, nullptr, "-nx", &nx, nullptr) ||
      PetscOptionsGetInt(nullptr, nullptr, "-ny", &ny, nullptr) ||
      PetscOptionsGetInt(nullptr, nullptr, "-nz", &nz, nullptr) ||
      PetscOptionsGetString(nullptr, nullptr, "-blockeigs_pc", pc_name, sizeof pc_name, nullptr) ||
      PetscOptionsGetString(nullptr, nullptr, "-vec_type", vec_type, sizeof vec_type, &vec_type_set))
    status = apps::exit_usage;  // -nx abc: PETSc has said why
  const std::string pc_option = pc_name;
  const OurPc ours = pc_option == "chebyshev" ? OurPc::chebyshev : pc_option == "jacobi" ? OurPc::jacobi : OurPc::none;
  if (status == 0 && !pc_option.empty() && ours == OurPc::none) {
    PetscPrintf(PETSC_COMM_WORLD, "error: -blockeigs_pc %s: expected chebyshev or jacobi\n", pc_name);
    status = apps::exit_usage;
  }

  // Our library reports errors as exceptions, agreed on by every rank.
  try {
    const io::MatrixConfig matrix = example_matrix(nx, ny, nz);
    const dense::Context context = solver::make_context(Backend::automatic, PETSC_COMM_WORLD);
    Mat A = nullptr;
    const std::vector<double> exact = io::laplacian_eigenvalues(matrix.generator);
    if (status == 0) {
      // The two calls: this rank's rows, then the Mat. Nothing after them throws.
      const solver::DistributedRows loaded =
          solver::load_distributed_rows(matrix, PETSC_COMM_WORLD, solver::Values::real_or_complex);
      A = solver::create_petsc_operator(PETSC_COMM_WORLD, context, loaded);  // the input's numbering
      // Plain PETSc from here: -vec_type picks the Mat's vectors.
      if (vec_type_set && MatShellSetVecType(A, vec_type)) status = 1;
      VecType mat_vec_type = nullptr;
      if (MatGetVecType(A, &mat_vec_type)) status = 1;
      PetscPrintf(PETSC_COMM_WORLD, "%s: %lld rows, %lld nonzeros, on the %s backend, vectors %s\n",
                  loaded.description.c_str(), static_cast<long long>(loaded.partition.global_rows()),
                  static_cast<long long>(loaded.global_nnz), context.space() == Space::host ? "cpu" : "cuda",
                  mat_vec_type ? mat_vec_type : "?");
      PetscBool solved = PETSC_FALSE, found = PETSC_FALSE;
      if (status != 0 || solve_linear_system(A, ours, &solved) || find_smallest_eigenvalues(A, ours, 4, exact, &found))
        status = 1;
      else if (!solved || !found)
        status = 3;  // like block-cg and block-eigs: ran, but did not converge
      // What PETSc handed the Mat (rank 0's): device arrays in place, or host ones copied.
      const solver::PetscOperatorStats stats = solver::petsc_operator_stats(A);
      PetscPrintf(PETSC_COMM_WORLD,
                  "operator: %lld MatMult, %lld MatProduct, %lld PCSHELL applies; arrays %lld on the device, %lld "
                  "on the host; %lld copied by the adapter\n",
                  static_cast<long long>(stats.products), static_cast<long long>(stats.block_applies),
                  static_cast<long long>(stats.preconditioner_applies), static_cast<long long>(stats.device_arrays),
                  static_cast<long long>(stats.host_arrays), static_cast<long long>(stats.copies));
      MatDestroy(&A);  // before the context it uses goes out of scope
    }
  } catch (const std::exception& e) {
    PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", e.what());
    status = 1;
  }
  if (SlepcFinalize() != 0) status = 1;
  MPI_Finalize();
  return status;
}
