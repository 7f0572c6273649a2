// What a MATSHELL made by create_petsc_operator carries, and how it moves
// PETSc's arrays to the operator: in place where they live in the operator's
// space and the Mat has the operator's numbering; otherwise copied (and
// counted) and, where the Mat has the input's numbering, moved to the
// operator's ranks and back. Internal to blockeigs_petsc (the MATSHELL's
// callbacks and the PCSHELL use it).
#pragma once

#include <mpi.h>
#include <petscmat.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/petsc/petsc_device.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {

// PETSc's scalar: the operator's values and blocks are of this type (real double, or complex double for a
// complex PETSc).
using Scalar = PetscScalar;

// Row-major blocks of the operator's local rows in its space, for a body run on them.
using OperatorBody = std::function<void(dense::ConstDenseView<Scalar> X, dense::DenseView<Scalar> Y)>;

struct ShellContext {
  static constexpr std::uint64_t expected_tag = 0x626c6b6569677321;  // tells our shells from others
  std::uint64_t tag = expected_tag;

  // A private duplicate of the user's communicator, so that our halo messages
  // can never match the caller's own point-to-point traffic. Freed last.
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<DistributedOperator<Scalar>> op;

  // The Mat's numbering against the operator's (create_petsc_operator on
  // DistributedRows): Vec rows are the input's, moved to the operator's ranks
  // and back around each product. The identity otherwise.
  RowNumbering numbering;
  std::int64_t mat_rows = 0;  // the Mat's local rows (the Vecs' local size)

  PetscOperatorStats stats;
  std::string injected_failure;  // test_hooks::fail_next_petsc_callback

  ShellContext() = default;
  ShellContext(const ShellContext&) = delete;
  ShellContext& operator=(const ShellContext&) = delete;
  ~ShellContext();

  const dense::Context& context() const { return op->context(); }
  std::int64_t local_rows() const { return op->local_rows(); }

  // Y = A X for row-major blocks of the Mat's rows (width k, ld k), X in
  // `xs`, Y in `ys`. Counts the arrays and copies in `stats`.
  void apply(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k);

  // body(X, Y) on X's rows in the operator's numbering and space, and Y's
  // back in the Mat's: the path of apply, for any map of the operator's rows
  // (the PCSHELL's preconditioners).
  void run(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k, const OperatorBody& body);

  // C = A B for column-major blocks of the Mat's rows (width k, leading
  // dimensions ldb and ldc), both in `space`: one column-major apply of the
  // whole block in place where `space` is the operator's and the numbering
  // its own, else through row-major blocks as run_column_major.
  void apply_column_major(const Scalar* b, std::int64_t ldb, Scalar* c, std::int64_t ldc, std::int64_t k, Space space);

  // body(X, Y) on the rows of column-major blocks as run does (the
  // PCSHELL's block apply); apply_column_major with the product.
  void run_column_major(const Scalar* b, std::int64_t ldb, Scalar* c, std::int64_t ldc, std::int64_t k, Space space,
                        const OperatorBody& body);

  // The diagonal in the Mat's numbering, into `out` in `space`.
  void diagonal(Scalar* out, Space space);

 private:
  // Y = A X on the operator's blocks.
  OperatorBody product();
  // run without counting the arrays; counting them.
  void run_uncounted(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k, const OperatorBody& body);
  void count_arrays(Space a, Space b);
  // Room for blocks of `count` values in the operator's space.
  void reserve(std::size_t count);
  // The path through the host where the Mat's numbering is not the operator's.
  void run_renumbered(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k, const OperatorBody& body);
  // Copies between spaces, counted.
  void copy(Scalar* dst, Space dst_space, const Scalar* src, Space src_space, std::size_t count);

  dense::Buffer<Scalar> x_stage_, y_stage_;  // the operator's space: staged or transposed blocks
  std::vector<Scalar> x_host_, y_host_;      // host: column-major blocks the operator cannot take in place
};

// Runs a callback's work; a C++ exception becomes PETSC_ERR_LIB with its
// message (PETSC_COMM_SELF: the failure may be this rank's alone).
template <class Body>
PetscErrorCode guarded(ShellContext& ctx, Body&& body) noexcept {
  try {
    if (!ctx.injected_failure.empty()) throw Error(std::exchange(ctx.injected_failure, {}));
    body();
    return PETSC_SUCCESS;
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "block-eigs operator: %s", e.what());
  } catch (...) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "block-eigs operator: unknown C++ exception");
  }
}

// Y = f(X) for dense blocks (MatProduct AB, PCMatApply): their local sizes
// and arrays, the rows and the spaces checked (`pair` names the two blocks in
// the message), body(x, ldx, y, ldy, k, space) guarded, the arrays restored.
template <class Body>
PetscErrorCode on_dense_pair(ShellContext& shell, Mat X, Mat Y, const char* pair, Body&& body) {
  const PetscScalar* x = nullptr;
  PetscScalar* y = nullptr;
  Space xs = Space::host, ys = Space::host;
  PetscInt m = 0, k = 0, ldx = 0, ldy = 0;
  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(X, &m, nullptr));
  PetscCall(MatGetSize(X, nullptr, &k));
  PetscCall(MatDenseGetLDA(X, &ldx));
  PetscCall(MatDenseGetLDA(Y, &ldy));
  PetscCall(petsc_device::dense_get_read(X, &x, &xs));
  PetscCall(petsc_device::dense_get_write(Y, &y, &ys));
  const PetscErrorCode status = guarded(shell, [&] {
    if (m != shell.mat_rows)
      throw Error(detail::concat("the dense block has ", m, " local rows, but the operator has ", shell.mat_rows,
                                 " on this rank"));
    if (xs != ys) throw Error(detail::concat("the dense blocks ", pair, " are in different memory spaces"));
    body(x, ldx, y, ldy, k, xs);
  });
  PetscCall(petsc_device::dense_restore_write(Y, &y));
  PetscCall(petsc_device::dense_restore_read(X, &x));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The context of a Mat made by this adapter, or an Error.
ShellContext& shell_context_of(Mat A);

// Throws LibraryError naming a PETSc call that failed outside a callback,
// with PETSc's own message for the error.
[[noreturn]] void throw_petsc_error(PetscErrorCode code, const char* call, const char* file, int line);

#define BLOCKEIGS_PETSC_CHECK(call)                                                               \
  do {                                                                                            \
    const PetscErrorCode blockeigs_petsc_status_ = (call);                                        \
    if (blockeigs_petsc_status_ != PETSC_SUCCESS)                                                 \
      ::blockeigs::solver::throw_petsc_error(blockeigs_petsc_status_, #call, __FILE__, __LINE__); \
  } while (0)

}  // namespace blockeigs::solver
