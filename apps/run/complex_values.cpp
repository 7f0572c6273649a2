#include "apps/run/complex_values.hpp"

#include <string>

#include "solver/base/collective.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "solver/window/inertia.hpp"

namespace blockeigs::apps {
namespace {

// The settings a complex run refuses, each with the reason; the first one set is named.
std::string first_refusal(const cfg::EigsConfig& c) {
  const cfg::EigensolverSettings& e = c.eigensolver;
  const std::string tail =
      " (complex values take Chebyshev-filtered subspace iteration or a window on A x = lambda x so far)";
  if (c.matrix_b) return "matrix_b: a generalized problem takes real values only" + tail;
  if (e.interval && e.count == WindowCount::inertia)
    return std::string("eigensolver.count: inertia takes real matrices (") + solver::kNoComplexInertia +
           "); use count: density or auto" + tail;
  if (e.method == solver::EigenMethod::lobpcg)
    return "eigensolver.method: lobpcg takes real values only; use chebyshev_filter or auto" + tail;
  if (e.preconditioner.kind != PreconditionerKind::automatic && e.preconditioner.kind != PreconditionerKind::none)
    return "eigensolver.preconditioner: the Chebyshev filter takes none; remove it" + tail;
  if (e.constraints != cfg::ConstraintsSource::none) return "eigensolver.constraints: real values only" + tail;
  return {};
}

}  // namespace

void check_complex_eigs(const cfg::EigsConfig& config, const solver::DistributedRows& matrix) {
  if (!matrix.complex) return;
  const std::string refusal = first_refusal(config);
  if (!refusal.empty()) solver::fail_input_everywhere(matrix.description, " holds complex values: ", refusal);
}

void check_complex_cg(const cfg::CgConfig& config, const solver::DistributedRows& matrix) {
  if (!matrix.complex) return;
  const cfg::BlockCgSettings& s = config.solver;
  const std::string tail =
      " (complex values take block CG with jacobi, chebyshev, no preconditioner or a complex PETSc's PC so far)";
  std::string refusal;
  if (s.preconditioner.kind == PreconditionerKind::petsc && !solver::petsc_is_complex())
    refusal =
        "block_cg.preconditioner: type petsc takes complex matrices with a complex PETSc only, and this build "
        "has " +
        std::string(solver::petsc_available() ? "a real PETSc" : "no PETSc") +
        " (docs/petsc.md#complex-petsc); use jacobi or chebyshev" + tail;
  if (!refusal.empty()) solver::fail_input_everywhere(matrix.description, " holds complex values: ", refusal);
}

void check_complex_rows(const solver::DistributedRows& matrix, MPI_Comm comm, const dense::Context* context) {
  if (!matrix.symmetric_by_construction)
    solver::check_hermitian(comm, matrix.complex_rows, matrix.partition, matrix.description, context);
}

}  // namespace blockeigs::apps
