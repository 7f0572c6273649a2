#include "solver/petsc/petsc_session.hpp"

#include <petscsys.h>

#include <atomic>

#include "core/error.hpp"
#include "solver/petsc/petsc_operator.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {
namespace {
std::atomic<int> live{0};
bool we_initialised = false;
}  // namespace

PetscSession::PetscSession(MPI_Comm comm) {
  if (live++ > 0) return;
  PetscBool initialised = PETSC_FALSE;
  PetscInitialized(&initialised);
  if (initialised) return;
  PETSC_COMM_WORLD = comm;
  set_petsc_gpu_aware_default();
  if (PetscInitializeNoArguments() != PETSC_SUCCESS) {
    --live;
    throw LibraryError("PetscInitializeNoArguments failed");
  }
  we_initialised = true;
}

PetscSession::~PetscSession() {
  if (--live == 0 && we_initialised) {
    PetscFinalize();
    we_initialised = false;
  }
}

}  // namespace blockeigs::solver
