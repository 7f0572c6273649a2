// The preconditioner a config names, built on the operator for block-eigs
// and block-cg, and the two lines of their output that describe it: what
// was built, and its share of the solve time.
#pragma once

#include <memory>
#include <string>

#include "core/enums.hpp"
#include "config/run_config.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/preconditioner_options.hpp"

namespace blockeigs::apps {

template <class T>
struct BuiltPreconditioner {
  std::unique_ptr<solver::Preconditioner<T>> object;  // null for none
  std::string description;  // for the run's header: "chebyshev degree 8 on [a, b] ..., set up in 0.01 s"
};

// Collective over op.comm(); InputErrors (a zero diagonal for Jacobi, a zero
// matrix for Chebyshev, options PETSc rejects, PETSc for the largest end or
// fp32 blocks) on every rank. `end`: the spectrum end the solver wants
// (block CG: smallest); `eigensolver`: for LOBPCG (else block CG), which
// sets the default degree. `matrix`: the rows op was built from (PETSc's copy).
template <class T>
BuiltPreconditioner<T> build_preconditioner(const solver::PreconditionerOptions& config, solver::LinearOperator<T>& op,
                                            const solver::DistributedRows& matrix, SpectrumEnd end, bool eigensolver);

// A note where the measurements say a named preconditioner slows the end wanted:
// any at the largest end (docs/benchmarks/robustness.md). Rank 0.
void note_preconditioner_choice(PreconditionerKind kind, SpectrumEnd end);

// The summary's preconditioner part: "preconditioner 0.123 (its 96 products: SpMM 0.100, halo 0.010, not in
// SpMM above)", or just the time where it made no products.
std::string preconditioner_time(double seconds, const solver::PreconditionerWork& work);

}  // namespace blockeigs::apps
