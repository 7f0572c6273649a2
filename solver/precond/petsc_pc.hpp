// PETSc's preconditioners (GAMG, hypre's BoomerAMG where PETSc has it,
// ICC, ILU, ...) behind our Preconditioner interface, without PETSc in the
// header: built by solver/petsc/petsc_preconditioner.cpp in PETSc builds,
// and by a stub that says PETSc is missing otherwise.
#pragma once

#include <mpi.h>

#include <complex>
#include <memory>
#include <string>

#include "core/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"
#include "solver/precond/preconditioner.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver {

// Whether this build has PETSc.
bool petsc_available();
// Whether its PETSc has complex scalars (libpetsc-complex-dev): then only the complex overload below works, as
// only the real one does with a real PETSc.
bool petsc_is_complex();

// Hands this rank's `rows` (global column indices, distributed by
// `partition`) to PETSc once as an AIJ matrix and sets up the PC that
// `options` configures ("-pc_type gamg"; PETSc's option names, applied under
// a private prefix, so that the caller's own PETSc options are untouched).
// Each apply runs PCMatApply on the whole block (PETSc loops over the
// columns where a PC has no block apply). Blocks in device memory go to a
// PETSc with CUDA as MATDENSECUDA, over the matrix as MATAIJCUSPARSE, without
// leaving the device; to a PETSc without CUDA they are staged through the host. Collective over comm; initialises PETSc
// if nothing has (and finalises it when the last such preconditioner goes). InputError on every rank, with PETSc's
// message, for options PETSc rejects or does not use, for a build without PETSc, and for values whose kind
// (real, complex) is not its PetscScalar's.
std::unique_ptr<Preconditioner<double>> make_petsc_preconditioner(MPI_Comm comm, const dense::Context& context,
                                                                  const CsrRows& rows, const RowPartition& partition,
                                                                  const std::string& options);
std::unique_ptr<Preconditioner<std::complex<double>>> make_petsc_preconditioner(MPI_Comm comm,
                                                                                const dense::Context& context,
                                                                                const ComplexCsrRows& rows,
                                                                                const RowPartition& partition,
                                                                                const std::string& options);

}  // namespace blockeigs::solver
