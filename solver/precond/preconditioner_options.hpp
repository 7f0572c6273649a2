// What preconditioner a solve asks for (eigensolver.preconditioner and
// block_cg.preconditioner in a config, M in Python): the kind, and the options
// of the class that builds it, read straight into them (config/).
#pragma once

#include <string>

#include "core/enums.hpp"
#include "solver/base/linear_operator.hpp"
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

// What `auto` (PreconditionerKind::automatic) is for an eigensolver that wants
// `end` of an operator, with the reason the summary prints; other kinds pass
// through. From the SuiteSparse sweep (docs/benchmarks/robustness.md): at the
// smallest end Chebyshev in D^-1/2 A D^-1/2 took the fewest iterations on 19 of
// 21 matrices (none failed on 13 of 24); at the largest end none was fastest on
// 23 of 24. So: chebyshev at the smallest end where every diagonal entry is
// nonzero (the scaling needs it; graphs with empty rows take none), none at the
// largest end, under the Chebyshev filter (its own acceleration) and with the
// residual block in fp32 (`single_search`: search_precision fp32 takes none).
// `min_abs_diagonal`: the smallest |A(i, i)| over all ranks (min_abs_diagonal).
struct ResolvedPreconditioner {
  PreconditionerOptions options;
  std::string reason;  // empty where the kind was not auto
};
ResolvedPreconditioner resolve_preconditioner(const PreconditionerOptions& requested, SpectrumEnd end, bool filter,
                                              bool single_search, double min_abs_diagonal);

// Whether a request names a preconditioner of its own (not none, not auto).
inline bool names_a_preconditioner(const PreconditionerOptions& requested) {
  return requested.kind != PreconditionerKind::none && requested.kind != PreconditionerKind::automatic;
}

// The smallest |A(i, i)| over every rank's rows (+inf where no rank has any). Collective.
template <class T>
double min_abs_diagonal(const LinearOperator<T>& A);

}  // namespace blockeigs::solver
