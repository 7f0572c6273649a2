#include "solver/petsc/petsc_shell_pc.hpp"

#include <memory>
#include <string>

#include "solver/petsc/petsc_device.hpp"
#include "solver/petsc/shell_context.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"

namespace blockeigs::solver {
namespace {

// What the PCSHELL carries: A (referenced: its operator is what the
// preconditioner multiplies by) and the preconditioner. Freed with the PC.
struct ShellPc {
  Mat A = nullptr;
  ShellContext* shell = nullptr;  // A's
  std::unique_ptr<Preconditioner<Scalar>> preconditioner;

  ShellPc() = default;
  ShellPc(const ShellPc&) = delete;
  ShellPc& operator=(const ShellPc&) = delete;
  ~ShellPc() {
    preconditioner.reset();  // before the operator it may hold a reference to
    if (A) MatDestroy(&A);   // drops our reference
  }
};

PetscErrorCode shell_pc_apply(PC pc, Vec x, Vec y) {
  ShellPc* p = nullptr;
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  Space xs = Space::host, ys = Space::host;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &p));
  PetscCall(petsc_device::get_read(x, &xa, &xs));
  PetscCall(petsc_device::get_write(y, &ya, &ys));
  ShellContext& shell = *p->shell;
  const PetscErrorCode status = guarded(shell, [&] {
    shell.stats.preconditioner_applies += 1;
    shell.run(xa, xs, ya, ys, 1,
              [p](dense::ConstDenseView<Scalar> R, dense::DenseView<Scalar> W) { p->preconditioner->apply(R, W); });
  });
  PetscCall(petsc_device::restore_write(y, &ya));
  PetscCall(petsc_device::restore_read(x, &xa));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Y = M X for dense blocks (KSPMatSolve, SLEPc's block eigensolvers): the
// whole block through the preconditioner at once.
PetscErrorCode shell_pc_mat_apply(PC pc, Mat X, Mat Y) {
  ShellPc* p = nullptr;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &p));
  ShellContext& shell = *p->shell;
  PetscCall(on_dense_pair(shell, X, Y, "X and Y of Y = M X",
                          [&](const Scalar* x, PetscInt ldx, Scalar* y, PetscInt ldy, PetscInt k, Space space) {
                            shell.stats.preconditioner_applies += 1;
                            shell.run_column_major(x, ldx, y, ldy, k, space,
                                                   [p](dense::ConstDenseView<Scalar> R, dense::DenseView<Scalar> W) {
                                                     p->preconditioner->apply(R, W);
                                                   });
                          }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode shell_pc_destroy(PC pc) {
  ShellPc* p = nullptr;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &p));
  delete p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// `pc` as a PCSHELL over A's operator with the preconditioner `make` builds from it.
template <class Make>
void set_shell_pc(PC pc, Mat A, const char* name, Make&& make) {
  ShellContext& shell = shell_context_of(A);
  auto p = std::make_unique<ShellPc>();
  p->shell = &shell;
  p->preconditioner = make(*shell.op);  // collective; throws agreed errors
  BLOCKEIGS_PETSC_CHECK(PetscObjectReference(reinterpret_cast<PetscObject>(A)));
  p->A = A;
  // Through PCNONE: a PC that is already a shell frees its context first.
  BLOCKEIGS_PETSC_CHECK(PCSetType(pc, PCNONE));
  BLOCKEIGS_PETSC_CHECK(PCSetType(pc, PCSHELL));
  BLOCKEIGS_PETSC_CHECK(PCShellSetContext(pc, p.get()));
  BLOCKEIGS_PETSC_CHECK(PCShellSetDestroy(pc, shell_pc_destroy));
  p.release();  // the PC owns it now
  BLOCKEIGS_PETSC_CHECK(PCShellSetApply(pc, shell_pc_apply));
  BLOCKEIGS_PETSC_CHECK(PCShellSetMatApply(pc, shell_pc_mat_apply));
  BLOCKEIGS_PETSC_CHECK(PCShellSetName(pc, name));
}

}  // namespace

void set_petsc_chebyshev_pc(PC pc, Mat A, const ChebyshevOptions& options) {
  set_shell_pc(pc, A, "block-eigs Chebyshev", [&](DistributedOperator<Scalar>& op) {
    return std::make_unique<ChebyshevPreconditioner<Scalar>>(op, options);
  });
}

void set_petsc_jacobi_pc(PC pc, Mat A) {
  set_shell_pc(pc, A, "block-eigs Jacobi",
               [](DistributedOperator<Scalar>& op) { return std::make_unique<JacobiPreconditioner<Scalar>>(op); });
}

}  // namespace blockeigs::solver
