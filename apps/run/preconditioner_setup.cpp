#include "apps/run/preconditioner_setup.hpp"

#include <mpi.h>

#include <complex>
#include <cstdio>
#include <type_traits>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/precond/petsc_pc.hpp"

namespace blockeigs::apps {

template <class T>
BuiltPreconditioner<T> build_preconditioner(const solver::PreconditionerOptions& config, solver::LinearOperator<T>& op,
                                            const solver::DistributedRows& matrix, SpectrumEnd end, bool eigensolver) {
  BuiltPreconditioner<T> built;
  built.description = std::string(to_string(config.kind));
  if (config.kind == PreconditionerKind::jacobi) {
    built.object = std::make_unique<solver::JacobiPreconditioner<T>>(op);
  } else if (config.kind == PreconditionerKind::chebyshev) {
    const double start = MPI_Wtime();
    auto chebyshev =
        std::make_unique<solver::ChebyshevPreconditioner<T>>(op, solver::chebyshev_options(config, end, eigensolver));
    const solver::ChebyshevInterval& iv = chebyshev->interval();
    char text[320];
    std::snprintf(text, sizeof text,
                  "chebyshev, degree %d%s, in %s%s, 1/x on [%.6g, %.6g]%s of %s%s (power estimate %.6g), set up in "
                  "%.3f s",
                  chebyshev->degree(), config.chebyshev.degree == 0 ? " (auto)" : "",
                  to_string(chebyshev->precision()).data(),
                  config.chebyshev.precision == ChebyshevPrecision::automatic ? " (auto)" : "", iv.a, iv.b,
                  config.chebyshev.lower == 0 ? " (lower auto)" : "", iv.sign > 0 ? "" : "s I - ",
                  config.chebyshev.jacobi ? "D^-1/2 A D^-1/2" : "A", iv.norm_estimate, MPI_Wtime() - start);
    built.description = text;
    if (iv.sign < 0) built.description += detail::concat(", s = ", iv.shift);
    built.object = std::move(chebyshev);
  } else if (config.kind == PreconditionerKind::petsc) {
    // PETSc's PCs approximate A^{-1}: SPD for SPD A, and they help the smallest end only.
    if (end == SpectrumEnd::largest)
      solver::fail_input_everywhere(
          "preconditioner type petsc approximates A^-1, which amplifies the smallest eigenvalues, not the "
          "largest: for which: largest use {type: chebyshev} (a polynomial in s I - A) or none");
    if constexpr (!std::is_same_v<T, double> && !std::is_same_v<T, std::complex<double>>) {
      solver::fail_input_everywhere(
          "preconditioner type petsc needs execution.spmm_precision: fp64 (PETSc's scalars are doubles)");
    } else {
      // PETSc's scalars are real or complex (docs/petsc.md#complex-petsc): the rows of this run's kind.
      const CsrRowsOf<T>& rows = matrix.rows_for<T>();
      if (!solver::petsc_available())  // the same on every rank: the stub's message, once
        solver::collectively(op.comm(), [&] {
          solver::make_petsc_preconditioner(op.comm(), op.context(), rows, matrix.partition, config.petsc_options);
        });
      const double start = MPI_Wtime();
      built.object =
          solver::make_petsc_preconditioner(op.comm(), op.context(), rows, matrix.partition, config.petsc_options);
      char text[96];
      std::snprintf(text, sizeof text, "\", set up in %.3f s", MPI_Wtime() - start);
      built.description = "petsc, options \"" + config.petsc_options + text +
                          (op.context().space() == Space::device ? " (blocks staged through the host)" : "");
    }
  }
  return built;
}

void note_preconditioner_choice(PreconditionerKind kind, SpectrumEnd end) {
  if (end != SpectrumEnd::largest || kind == PreconditionerKind::none) return;
  std::printf(
      "note: at the largest end no preconditioner was the fastest on 23 of 24 SuiteSparse matrices, and jacobi and "
      "chebyshev each failed to converge on 9 of the 21 they ran on (docs/benchmarks/robustness.md): "
      "preconditioner none (or auto) suits the largest end\n");
}

std::string preconditioner_time(double seconds, const solver::PreconditionerWork& work) {
  char text[200];
  if (work.products == 0) {
    std::snprintf(text, sizeof text, "preconditioner %.3f", seconds);
  } else {
    std::snprintf(text, sizeof text,
                  "preconditioner %.3f (of which its %lld block products: SpMM %.3f, halo %.3f; not in SpMM above)",
                  seconds, work.products, work.spmm - work.halo, work.halo);
  }
  return text;
}

template BuiltPreconditioner<float> build_preconditioner(const solver::PreconditionerOptions&,
                                                         solver::LinearOperator<float>&, const solver::DistributedRows&,
                                                         SpectrumEnd, bool);
template BuiltPreconditioner<double> build_preconditioner(const solver::PreconditionerOptions&,
                                                          solver::LinearOperator<double>&,
                                                          const solver::DistributedRows&, SpectrumEnd, bool);
template BuiltPreconditioner<std::complex<float>> build_preconditioner(const solver::PreconditionerOptions&,
                                                                       solver::LinearOperator<std::complex<float>>&,
                                                                       const solver::DistributedRows&, SpectrumEnd,
                                                                       bool);
template BuiltPreconditioner<std::complex<double>> build_preconditioner(const solver::PreconditionerOptions&,
                                                                        solver::LinearOperator<std::complex<double>>&,
                                                                        const solver::DistributedRows&, SpectrumEnd,
                                                                        bool);

}  // namespace blockeigs::apps
