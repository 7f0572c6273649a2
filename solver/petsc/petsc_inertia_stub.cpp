// make_inertia_counter in a build whose PETSc has no MUMPS, or complex scalars (MUMPS factors complex symmetric
// matrices, not Hermitian ones): it says so.
#include <petscconf.h>
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

// Why there is no inertia here.
std::string reason() {
#if defined(PETSC_USE_COMPLEX)
  return "this build's PETSc " + petsc_version() + " has complex scalars (MUMPS's LDL^T is not Hermitian)";
#else
  return "this build's PETSc " + petsc_version() + " has no MUMPS";
#endif
}

}  // namespace

bool inertia_available(std::string* why) {
  if (why) *why = reason();
  return false;
}

std::unique_ptr<InertiaCounter> make_inertia_counter(MPI_Comm, const CsrRows&, const RowPartition&) {
  fail_input("eigensolver.count: inertia needs a real PETSc with MUMPS, and ", reason(), "; use count: density");
}

}  // namespace blockeigs::solver
