// make_inertia_counter in a build without PETSc: it says so.
#include "core/error.hpp"
#include "solver/window/inertia.hpp"

namespace blockeigs::solver {

bool inertia_available(std::string* why) {
  if (why) *why = "this build has no PETSc (CMake option BLOCKEIGS_PETSC)";
  return false;
}

std::unique_ptr<InertiaCounter> make_inertia_counter(MPI_Comm, const CsrRows&, const RowPartition&) {
  fail_input(
      "eigensolver.count: inertia needs PETSc with MUMPS, and this build has no PETSc (CMake option "
      "BLOCKEIGS_PETSC); use count: density");
}

}  // namespace blockeigs::solver
