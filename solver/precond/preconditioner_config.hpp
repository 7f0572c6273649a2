// A preconditioner config (eigensolver.preconditioner, block_cg.preconditioner)
// as the options of the class that builds it: for the apps and the Python package alike.
#pragma once

#include "core/enums.hpp"
#include "io/config.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"

namespace blockeigs::solver {

// The Chebyshev options a config of kind chebyshev asks for, for the solver
// that wants `end` (`eigensolver`: LOBPCG, else block CG).
ChebyshevOptions chebyshev_options(const io::PreconditionerConfig& config, SpectrumEnd end, bool eigensolver);

}  // namespace blockeigs::solver
