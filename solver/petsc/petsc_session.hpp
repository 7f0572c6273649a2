// PETSc kept initialised while any of our objects that need it lives: the
// first initialises it (on `comm`) where nothing had, the last finalises what
// it initialised. Our PETSc PCs and inertia counters hold one each.
#pragma once

#include <mpi.h>

namespace blockeigs::solver {

class PetscSession {
 public:
  explicit PetscSession(MPI_Comm comm);
  ~PetscSession();
  PetscSession(const PetscSession&) = delete;
  PetscSession& operator=(const PetscSession&) = delete;
};

}  // namespace blockeigs::solver
