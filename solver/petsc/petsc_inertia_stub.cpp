// make_inertia_counter in a build whose PETSc has no MUMPS: it says so.
#include <petscversion.h>

#include <string>

#include "core/error.hpp"
#include "solver/window/inertia.hpp"

namespace blockeigs::solver {
namespace {

std::string petsc_version() {
  return std::to_string(PETSC_VERSION_MAJOR) + "." + std::to_string(PETSC_VERSION_MINOR) + "." +
         std::to_string(PETSC_VERSION_SUBMINOR);
}

}  // namespace

bool inertia_available(std::string* why) {
  if (why) *why = "this build's PETSc " + petsc_version() + " has no MUMPS";
  return false;
}

std::unique_ptr<InertiaCounter> make_inertia_counter(MPI_Comm, const CsrRows&, const RowPartition&) {
  fail_input("eigensolver.count: inertia needs PETSc with MUMPS, and this build's PETSc ", petsc_version(),
             " has none; use count: density");
}

}  // namespace blockeigs::solver
