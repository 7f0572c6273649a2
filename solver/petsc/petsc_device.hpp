// What the PETSc adapter needs of PETSc's device API, behind one interface:
// petsc_device_cuda.cpp where PETSc has CUDA and our CUDA backend is built
// (VECCUDA and MATDENSECUDA arrays handed over in place, streams ordered by
// events), petsc_device_host.cpp otherwise (PETSc's host arrays; nothing to
// order). CMake picks the file (solver/petsc/CMakeLists.txt). Internal to
// blockeigs_petsc.
#pragma once

#include <petscmat.h>

#include <cstdint>

#include "core/enums.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver::petsc_device {

// A Vec's local array and the space it lives in: on the device where PETSc
// holds the Vec's current values there (a VECCUDA Vec; device builds only),
// else on the host. Restore with the matching call. Return PETSc's error codes.
PetscErrorCode get_read(Vec v, const PetscScalar** array, Space* space);
PetscErrorCode restore_read(Vec v, const PetscScalar** array);
PetscErrorCode get_write(Vec v, PetscScalar** array, Space* space);
PetscErrorCode restore_write(Vec v, PetscScalar** array);

// The same for a dense Mat's local column-major array (MATDENSE, MATDENSECUDA).
PetscErrorCode dense_get_read(Mat m, const PetscScalar** array, Space* space);
PetscErrorCode dense_restore_read(Mat m, const PetscScalar** array);
PetscErrorCode dense_get_write(Mat m, PetscScalar** array, Space* space);
PetscErrorCode dense_restore_write(Mat m, PetscScalar** array);

// Stream order between PETSc's current device context and `context`: our
// stream waits for the work PETSc queued before the call, PETSc's for ours.
// No host waits; no-ops on the host and in builds without device arrays.
void wait_for_petsc(const dense::Context& context);
void petsc_waits_for(const dense::Context& context);

// The shell's vectors on the device (MatShellSetVecType VECCUDA) and the
// MatProduct AB for MATDENSECUDA blocks (`numeric`, as for MATDENSE), where
// `context` is a device one and this build has device arrays; else nothing.
using ProductNumeric = PetscErrorCode (*)(Mat, Mat, Mat, void*);
PetscErrorCode make_device_resident(Mat A, const dense::Context& context, ProductNumeric numeric);

// dst = src^T for column-major matrices on the device (src rows x cols with
// leading dimension ld_src; dst cols x rows with ld_dst), queued on
// `context`'s stream. Throws where the build has no device arrays.
void transpose(const dense::Context& context, std::int64_t rows, std::int64_t cols, const PetscScalar* src,
               std::int64_t ld_src, PetscScalar* dst, std::int64_t ld_dst);

}  // namespace blockeigs::solver::petsc_device
