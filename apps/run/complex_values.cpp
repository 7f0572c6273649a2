#include "apps/run/complex_values.hpp"

#include <string>

#include "solver/base/collective.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "solver/window/inertia.hpp"

namespace blockeigs::apps {
namespace {

// `key: type petsc` refused for complex values where this build's PETSc is not complex (empty: taken).
std::string petsc_refusal(const PreconditionerKind kind, const char* key) {
  if (kind != PreconditionerKind::petsc || solver::petsc_is_complex()) return {};
  return std::string(key) + ": type petsc takes complex matrices with a complex PETSc only, and this build has " +
         (solver::petsc_available() ? "a real PETSc" : "no PETSc") +
         " (docs/petsc.md#complex-petsc); use jacobi or chebyshev";
}

// The settings a complex run refuses, each with the reason; the first one set is named.
std::string first_refusal(const cfg::EigsConfig& c) {
  const cfg::EigensolverSettings& e = c.eigensolver;
  if (e.interval && e.count == WindowCount::inertia)
    return std::string("eigensolver.count: inertia takes real matrices (") + solver::kNoComplexInertia +
           "); use count: density or auto";
  if (e.lobpcg.search_precision == SearchPrecision::fp32)
    return "eigensolver.search_precision: fp32 takes real matrices (complex residuals stay in complex double); use "
           "fp64 or auto";
  return petsc_refusal(e.preconditioner.kind, "eigensolver.preconditioner");
}

}  // namespace

void check_complex_eigs(const cfg::EigsConfig& config, const solver::DistributedRows& matrix) {
  if (!matrix.complex) return;
  const std::string refusal = first_refusal(config);
  if (!refusal.empty()) solver::fail_input_everywhere(matrix.description, " holds complex values: ", refusal);
}

void check_complex_cg(const cfg::CgConfig& config, const solver::DistributedRows& matrix) {
  if (!matrix.complex) return;
  const std::string refusal = petsc_refusal(config.solver.preconditioner.kind, "block_cg.preconditioner");
  if (!refusal.empty())
    solver::fail_input_everywhere(
        matrix.description, " holds complex values: ", refusal,
        " (complex values take block CG with jacobi, chebyshev, no preconditioner or a complex PETSc's PC so far)");
}

void check_complex_rows(const solver::DistributedRows& matrix, MPI_Comm comm, const dense::Context* context) {
  if (!matrix.symmetric_by_construction)
    solver::check_hermitian(comm, matrix.complex_rows, matrix.partition, matrix.description, context);
}

}  // namespace blockeigs::apps
