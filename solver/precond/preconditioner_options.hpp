// What preconditioner a solve asks for (eigensolver.preconditioner and
// block_cg.preconditioner in a config, M in Python): the kind, and the options
// of the class that builds it, read straight into them (config/).
#pragma once

#include <string>

#include "core/enums.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"

namespace blockeigs::solver {

struct PreconditionerOptions {
  PreconditionerKind kind = PreconditionerKind::none;
  // kind chebyshev: degree, lower, jacobi and precision as asked; the end it
  // amplifies and the solver it serves are set by whoever builds it.
  ChebyshevOptions chebyshev;
  std::string petsc_options;  // kind petsc: PETSc's options for the PC, "-pc_type gamg"
};

// The Chebyshev options `options` asks for, for the solver that wants `end`
// (`eigensolver`: LOBPCG, else block CG; it sets the default degree).
inline ChebyshevOptions chebyshev_options(const PreconditionerOptions& options, SpectrumEnd end, bool eigensolver) {
  ChebyshevOptions chebyshev = options.chebyshev;
  chebyshev.end = end;
  chebyshev.eigensolver = eigensolver;
  return chebyshev;
}

}  // namespace blockeigs::solver
