#include "solver/precond/preconditioner_config.hpp"

namespace blockeigs::solver {

ChebyshevOptions chebyshev_options(const io::PreconditionerConfig& config, SpectrumEnd end, bool eigensolver) {
  ChebyshevOptions options;
  options.degree = config.degree;
  options.lower = config.lower;
  options.jacobi = config.jacobi;
  options.precision = config.precision;
  options.end = end;
  options.eigensolver = eigensolver;
  return options;
}

}  // namespace blockeigs::solver
