// make_petsc_preconditioner in builds without PETSc: a clear input error.
#include "core/error.hpp"
#include "solver/precond/petsc_pc.hpp"

namespace blockeigs::solver {

bool petsc_available() { return false; }
bool petsc_is_complex() { return false; }

namespace {

[[noreturn]] void no_petsc() {
  fail_input(
      "preconditioner type petsc needs block-eigs built with PETSc (cmake -DBLOCKEIGS_PETSC=ON with "
      "petsc-dev and slepc-dev installed); this build has none: choose chebyshev, jacobi or none");
}

}  // namespace

std::unique_ptr<Preconditioner<double>> make_petsc_preconditioner(MPI_Comm, const dense::Context&, const CsrRows&,
                                                                  const RowPartition&, const std::string&) {
  no_petsc();
}

std::unique_ptr<Preconditioner<std::complex<double>>> make_petsc_preconditioner(MPI_Comm, const dense::Context&,
                                                                                const ComplexCsrRows&,
                                                                                const RowPartition&,
                                                                                const std::string&) {
  no_petsc();
}

}  // namespace blockeigs::solver
