// make_petsc_preconditioner in builds without PETSc: a clear input error.
#include "core/error.hpp"
#include "solver/precond/petsc_pc.hpp"

namespace blockeigs::solver {

bool petsc_available() { return false; }

std::unique_ptr<Preconditioner<double>> make_petsc_preconditioner(MPI_Comm, const dense::Context&, const CsrRows&,
                                                                  const RowPartition&, const std::string&) {
  fail_input(
      "preconditioner type petsc needs block-eigs built with PETSc (cmake -DBLOCKEIGS_PETSC=ON with "
      "petsc-dev and slepc-dev installed); this build has none: choose chebyshev, jacobi or none");
}

}  // namespace blockeigs::solver
