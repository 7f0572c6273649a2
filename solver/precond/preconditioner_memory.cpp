#include "solver/precond/preconditioner_memory.hpp"

#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"

namespace blockeigs::solver {

PreconditionerMemory preconditioner_memory(PreconditionerKind kind, Precision problem, Space space,
                                           const ChebyshevOptions& chebyshev) {
  const bool single = problem == Precision::fp32;
  switch (kind) {
    case PreconditionerKind::none:
    case PreconditionerKind::petsc: return {};
    case PreconditionerKind::jacobi:
      return single ? JacobiPreconditioner<float>::memory() : JacobiPreconditioner<double>::memory();
    case PreconditionerKind::automatic:  // at most what the Chebyshev polynomial holds (resolve_preconditioner)
    case PreconditionerKind::chebyshev:
      return single ? ChebyshevPreconditioner<float>::memory(chebyshev, space)
                    : ChebyshevPreconditioner<double>::memory(chebyshev, space);
  }
  return {};
}

}  // namespace blockeigs::solver
