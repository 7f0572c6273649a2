// What a preconditioner holds beside the solver, for the memory plan
// (solver/plan/memory_plan.hpp), in the units the plan scales: bytes per local
// row and per element of the preconditioned width. Each preconditioner class
// states its own (JacobiPreconditioner::memory, ChebyshevPreconditioner::memory),
// next to the code that allocates it; preconditioner_memory picks by kind.
#pragma once

#include "core/enums.hpp"

namespace blockeigs::solver {

struct ChebyshevOptions;

struct PreconditionerMemory {
  // Bytes a local row of its diagonal vectors takes (Jacobi's two in the
  // blocks' precision; Chebyshev's two, with jacobi: true, in the polynomial's).
  int vector_bytes = 0;
  // Bytes an element of the preconditioned width takes in its scratch blocks
  // (Chebyshev: two blocks in fp64, or three in fp32).
  int block_bytes = 0;
  // The operator's values in fp32 beside it (Chebyshev in fp32 for an fp64
  // operator: DistributedOperator::rounded_to_single), with its halo product.
  bool matrix_copy = false;
};

// The memory of a `kind` preconditioner on an operator of `problem`
// precision in `space` that has an fp32 copy (the apps' distributed
// operator); `chebyshev`: the options a Chebyshev one is built with. none:
// nothing; petsc: nothing in the plan (PETSc's own copy of the rows and its
// PC's hierarchy are PETSc's to allocate).
PreconditionerMemory preconditioner_memory(PreconditionerKind kind, Precision problem, Space space,
                                           const ChebyshevOptions& chebyshev);

}  // namespace blockeigs::solver
