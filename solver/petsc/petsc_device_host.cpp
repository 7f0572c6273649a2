// petsc_device.hpp where the adapter takes PETSc's host arrays: a PETSc
// without CUDA, or a build without our CUDA backend. PETSc moves a device
// Vec's values to the host itself when asked for its host array.
#include "solver/petsc/petsc_device.hpp"

#include "core/error.hpp"
#include "solver/petsc/petsc_operator.hpp"

namespace blockeigs::solver {

bool petsc_device_arrays() { return false; }
PetscCopyCounts petsc_copy_counts() { return {}; }

namespace petsc_device {

PetscErrorCode get_read(Vec v, const PetscScalar** array, Space* space) {
  *space = Space::host;
  return VecGetArrayRead(v, array);
}
PetscErrorCode restore_read(Vec v, const PetscScalar** array) { return VecRestoreArrayRead(v, array); }
PetscErrorCode get_write(Vec v, PetscScalar** array, Space* space) {
  *space = Space::host;
  return VecGetArrayWrite(v, array);
}
PetscErrorCode restore_write(Vec v, PetscScalar** array) { return VecRestoreArrayWrite(v, array); }

PetscErrorCode dense_get_read(Mat m, const PetscScalar** array, Space* space) {
  *space = Space::host;
  return MatDenseGetArrayRead(m, array);
}
PetscErrorCode dense_restore_read(Mat m, const PetscScalar** array) { return MatDenseRestoreArrayRead(m, array); }
PetscErrorCode dense_get_write(Mat m, PetscScalar** array, Space* space) {
  *space = Space::host;
  return MatDenseGetArrayWrite(m, array);
}
PetscErrorCode dense_restore_write(Mat m, PetscScalar** array) { return MatDenseRestoreArrayWrite(m, array); }

void wait_for_petsc(const dense::Context&) {}
void petsc_waits_for(const dense::Context&) {}

PetscErrorCode make_device_resident(Mat, const dense::Context&, ProductNumeric) { return 0; }

void transpose(const dense::Context&, std::int64_t, std::int64_t, const PetscScalar*, std::int64_t, PetscScalar*,
               std::int64_t) {
  throw Error("the PETSc adapter was built without device arrays (PETSc without CUDA, or no CUDA backend)");
}

}  // namespace petsc_device
}  // namespace blockeigs::solver
