// Our preconditioners as PETSc PCs: a PCSHELL over the operator of a Mat
// made by create_petsc_operator, so that KSPCG with our operator and our
// Chebyshev polynomial runs where the operator runs (on the device, with
// VECCUDA vectors, without copies):
//
//   KSPGetPC(ksp, &pc);
//   solver::set_petsc_chebyshev_pc(pc, A);   // or set_petsc_jacobi_pc(pc, A)
//   KSPSolve(ksp, b, x);
//
// PCMatApply (KSPMatSolve, SLEPc's LOBPCG) applies the preconditioner to the
// whole dense block at once, as MatMatMult does the product.
// Each PCApply takes PETSc's arrays as the Mat's products do (device arrays
// in place on the device backend; host arrays copied there and counted in
// petsc_operator_stats; rows moved where the Mat has the input's numbering).
// The PC holds a reference to A, released when the PC is destroyed or set
// to another type.
#pragma once

#include <petscksp.h>

#include "solver/precond/chebyshev_preconditioner.hpp"

namespace blockeigs::solver {

// The Chebyshev options for a Krylov solver's preconditioner: block CG's
// (the smallest end, degree 8, fp64 with Jacobi scaling; KSPCG needs the
// same linear M every apply).
inline ChebyshevOptions petsc_chebyshev_options() {
  ChebyshevOptions options;
  options.eigensolver = false;
  options.precision = ChebyshevPrecision::fp64;
  return options;
}

// Sets `pc` to a PCSHELL applying our Chebyshev polynomial preconditioner
// (chebyshev_preconditioner.hpp) of A's operator. Collective over A's
// communicator (the power method's products). InputError on every rank for
// options out of range or a zero diagonal entry; Error when A was not made by
// create_petsc_operator; LibraryError when PETSc refuses.
void set_petsc_chebyshev_pc(PC pc, Mat A, const ChebyshevOptions& options = petsc_chebyshev_options());

// The same with our Jacobi preconditioner (W = |D|^{-1} R).
void set_petsc_jacobi_pc(PC pc, Mat A);

}  // namespace blockeigs::solver
