#include "solver/petsc/petsc_operator.hpp"

#include <petscversion.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "core/scalar.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/petsc/petsc_device.hpp"
#include "solver/petsc/shell_context.hpp"

// PetscCall, PetscFunctionBeginUser and MatShellSetContextDestroy are what we
// rely on; Debian 12's 3.18 is the oldest PETSc this is built and tested with.
#if !PETSC_VERSION_GE(3, 18, 0)
#error "blockeigs_petsc needs PETSc 3.18 or newer"
#endif

namespace blockeigs::solver {
namespace {

// Whether PETSc was built with CUDA (CMake's test of PETSC_HAVE_CUDA; BLOCKEIGS_PETSC_HAS_CUDA).
constexpr bool petsc_has_cuda = BLOCKEIGS_PETSC_HAS_CUDA;

// y = A x: PETSc's arrays where they live (device arrays in place on the
// device backend), a row-major block of width 1.
PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  ShellContext* ctx = nullptr;
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  Space xs = Space::host, ys = Space::host;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(petsc_device::get_read(x, &xa, &xs));
  PetscCall(petsc_device::get_write(y, &ya, &ys));
  const PetscErrorCode status = guarded(*ctx, [&] { ctx->apply(xa, xs, ya, ys, 1); });
  // Arrays go back to their Vecs before an error is passed up.
  PetscCall(petsc_device::restore_write(y, &ya));
  PetscCall(petsc_device::restore_read(x, &xa));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// y = A^T x for a Hermitian A (a complex PETSc): conj(A conj(x)), through a conjugated copy of x.
PetscErrorCode shell_mult_transpose_hermitian(Mat A, Vec x, Vec y) {
  Vec conjugated = nullptr;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(x, &conjugated));
  PetscCall(VecCopy(x, conjugated));
  PetscCall(VecConjugate(conjugated));
  const PetscErrorCode status = shell_mult(A, conjugated, y);
  PetscCall(VecDestroy(&conjugated));
  PetscCall(status);
  PetscCall(VecConjugate(y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode shell_get_diagonal(Mat A, Vec d) {
  ShellContext* ctx = nullptr;
  PetscScalar* da = nullptr;
  Space space = Space::host;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(petsc_device::get_write(d, &da, &space));
  const PetscErrorCode status = guarded(*ctx, [&] { ctx->diagonal(da, space); });
  PetscCall(petsc_device::restore_write(d, &da));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatProduct AB with a dense B (MatMatMult): C = A B in one apply. PETSc has
// created C (MATDENSE or MATDENSECUDA, local rows of A, all columns of B) and
// checked the layouts. B and C are in one space (PETSc makes C of B's kind).
PetscErrorCode shell_product_numeric(Mat A, Mat B, Mat C, void* /*product_data*/) {
  ShellContext* ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(on_dense_pair(*ctx, B, C, "B and C of C = A B",
                          [&](const Scalar* b, PetscInt ldb, Scalar* c, PetscInt ldc, PetscInt k, Space space) {
                            ctx->apply_column_major(b, ldb, c, ldc, k, space);
                          }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatShellSetContextDestroy's callback: its argument is the context up to
// 3.22, the context's address from 3.23 (void **, then PetscCtxRt, a void *).
template <class F>
struct FirstArgument;
template <class R, class A>
struct FirstArgument<R(A)> {
  using type = A;
};
template <class R, class M, class Fn>
struct FirstArgument<R(M, Fn)> {
  using type = typename FirstArgument<std::remove_pointer_t<Fn>>::type;
};
using DestroyArgument = FirstArgument<decltype(MatShellSetContextDestroy)>::type;

PetscErrorCode destroy_shell_context(DestroyArgument pointer) {
  PetscFunctionBeginUser;
#if PETSC_VERSION_GE(3, 23, 0)
  auto** slot = static_cast<ShellContext**>(static_cast<void*>(pointer));
  delete *slot;
  *slot = nullptr;
#else
  delete static_cast<ShellContext*>(pointer);
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatShellSetOperation's function-pointer type: void (*)(void) up to 3.23,
// PetscErrorCodeFn * after; taken from the declaration to build with both.
template <class Setter>
struct OperationArgument;
template <class R, class M, class Op, class Fn>
struct OperationArgument<R(M, Op, Fn)> {
  using type = Fn;
};
using Operation = OperationArgument<decltype(MatShellSetOperation)>::type;

void check_fits_petsc_int(std::int64_t rows) {
  constexpr auto largest = static_cast<std::int64_t>(std::numeric_limits<PetscInt>::max());
  if (rows > largest)
    fail_input_everywhere("the matrix has ", rows, " rows, more than this PETSc's PetscInt holds (", largest,
                          "): use a PETSc configured --with-64-bit-indices");
}

// The Hermitian or symmetric check that goes with a kind of rows.
[[maybe_unused]] void check_self_adjoint(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition) {
  check_symmetric(comm, rows, partition, "the PETSc matrix");
}
[[maybe_unused]] void check_self_adjoint(MPI_Comm comm, const ComplexCsrRows& rows, const RowPartition& partition) {
  check_hermitian(comm, rows, partition, "the PETSc matrix");
}

// The rows of PETSc's scalar: a real PETSc takes real rows, a complex one complex rows (InputError on every
// rank otherwise, `what` naming the matrix).
const PetscRows& petsc_rows(const DistributedRows& rows, const char* what) {
  if (rows.complex != is_complex_v<Scalar>)
    fail_input_everywhere(what, " (", rows.description, ") has ", rows.complex ? "complex" : "real",
                          " values, but this build's PETSc has ", is_complex_v<Scalar> ? "complex" : "real",
                          " scalars: build block-eigs with a ", rows.complex ? "complex" : "real",
                          " PETSc (docs/petsc.md#complex-petsc)");
  return rows.rows_for<Scalar>();
}

}  // namespace

namespace {

// The MATSHELL over `rows` (the operator's numbering, distributed by
// `partition`), numbered as `numbering`'s input (or as `rows` where it is the identity).
Mat make_shell(MPI_Comm comm, const dense::Context& context, const PetscRows& rows, const RowPartition& partition,
               Algorithm algorithm, const RowNumbering& numbering) {
  int ranks = 1, rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (partition.ranks() != ranks)
    fail_input_everywhere("the row partition has ", partition.ranks(), " ranks, but the communicator has ", ranks);
  check_fits_petsc_int(partition.global_rows());

  auto ctx = std::make_unique<ShellContext>();
  BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(comm, &ctx->comm));
  use_errors_return(ctx->comm);
  ctx->op = std::make_unique<DistributedOperator<Scalar>>(ctx->comm, context, rows, partition, algorithm);
  ctx->numbering = numbering;
  ctx->mat_rows = numbering.is_identity() ? partition.rows(rank) : numbering.original().rows(rank);

  const auto local = static_cast<PetscInt>(ctx->mat_rows);
  const auto global = static_cast<PetscInt>(partition.global_rows());
  Mat A = nullptr;
  BLOCKEIGS_PETSC_CHECK(MatCreateShell(comm, local, local, global, global, ctx.get(), &A));
  if (const PetscErrorCode status = MatShellSetContextDestroy(A, destroy_shell_context)) {
    MatDestroy(&A);
    throw_petsc_error(status, "MatShellSetContextDestroy", __FILE__, __LINE__);
  }
  ctx.release();  // the Mat owns it now: MatDestroy frees it
  try {
    BLOCKEIGS_PETSC_CHECK(MatShellSetOperation(A, MATOP_MULT, reinterpret_cast<Operation>(shell_mult)));
    // The operator is symmetric (this library's matrices are), so A^T x = A x; in complex it is Hermitian:
    // A^H x = A x, and A^T x = conj(A conj(x)).
    if constexpr (is_complex_v<Scalar>) {
      BLOCKEIGS_PETSC_CHECK(
          MatShellSetOperation(A, MATOP_MULT_HERMITIAN_TRANSPOSE, reinterpret_cast<Operation>(shell_mult)));
      BLOCKEIGS_PETSC_CHECK(
          MatShellSetOperation(A, MATOP_MULT_TRANSPOSE, reinterpret_cast<Operation>(shell_mult_transpose_hermitian)));
    } else {
      BLOCKEIGS_PETSC_CHECK(MatShellSetOperation(A, MATOP_MULT_TRANSPOSE, reinterpret_cast<Operation>(shell_mult)));
    }
    BLOCKEIGS_PETSC_CHECK(MatShellSetOperation(A, MATOP_GET_DIAGONAL, reinterpret_cast<Operation>(shell_get_diagonal)));
    BLOCKEIGS_PETSC_CHECK(
        MatShellSetMatProductOperation(A, MATPRODUCT_AB, nullptr, shell_product_numeric, nullptr, MATDENSE, MATDENSE));
    BLOCKEIGS_PETSC_CHECK(petsc_device::make_device_resident(A, context, shell_product_numeric));
    // Hermitian in complex, and then not symmetric (A^T = conj(A)); PETSc wants MAT_SYMMETRIC set either way
    // before MAT_SYMMETRY_ETERNAL.
    BLOCKEIGS_PETSC_CHECK(MatSetOption(A, MAT_SYMMETRIC, is_complex_v<Scalar> ? PETSC_FALSE : PETSC_TRUE));
    if (is_complex_v<Scalar>) BLOCKEIGS_PETSC_CHECK(MatSetOption(A, MAT_HERMITIAN, PETSC_TRUE));
    BLOCKEIGS_PETSC_CHECK(MatSetOption(A, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  } catch (...) {
    MatDestroy(&A);
    throw;
  }
  return A;
}

}  // namespace

Mat create_petsc_operator(MPI_Comm comm, const dense::Context& context, const PetscRows& rows,
                          const RowPartition& partition, Algorithm algorithm) {
  return make_shell(comm, context, rows, partition, algorithm, RowNumbering());
}

Mat create_petsc_operator(MPI_Comm comm, const dense::Context& context, const DistributedRows& rows,
                          Algorithm algorithm) {
  return make_shell(comm, context, petsc_rows(rows, "the matrix"), rows.partition, algorithm, rows.numbering);
}

Mat create_petsc_operator_from_aij(Mat aij, const dense::Context& context, Algorithm algorithm) {
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(aij));
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  PetscInt global_rows = 0, global_cols = 0;
  BLOCKEIGS_PETSC_CHECK(MatGetSize(aij, &global_rows, &global_cols));
  if (global_rows != global_cols)
    fail_input_everywhere("the PETSc matrix is ", global_rows, " x ", global_cols,
                          ": the operator needs a square matrix");

  // Every rank's range, from PETSc's own layout (the same array on every rank).
  const PetscInt* ranges = nullptr;
  BLOCKEIGS_PETSC_CHECK(MatGetOwnershipRanges(aij, &ranges));
  RowPartition partition(std::vector<std::int64_t>(ranges, ranges + ranks + 1));

  PetscRows rows = collectively(comm, [&] {
    PetscInt local_rows = 0, local_cols = 0, begin = 0, end = 0;
    BLOCKEIGS_PETSC_CHECK(MatGetLocalSize(aij, &local_rows, &local_cols));
    if (local_rows != local_cols)
      fail_input("the PETSc matrix has ", local_rows, " local rows but ", local_cols,
                 " local columns on a rank: the operator needs rows and columns distributed alike");
    BLOCKEIGS_PETSC_CHECK(MatGetOwnershipRange(aij, &begin, &end));
    PetscRows out;
    out.global_rows = global_rows;
    out.global_cols = global_cols;
    out.first_row = begin;
    out.row_offsets.reserve(static_cast<std::size_t>(local_rows) + 1);
    out.row_offsets.push_back(0);
    for (PetscInt row = begin; row < end; ++row) {
      PetscInt count = 0;
      const PetscInt* cols = nullptr;
      const PetscScalar* vals = nullptr;
      BLOCKEIGS_PETSC_CHECK(MatGetRow(aij, row, &count, &cols, &vals));
      out.col_indices.insert(out.col_indices.end(), cols, cols + count);
      out.values.insert(out.values.end(), vals, vals + count);
      BLOCKEIGS_PETSC_CHECK(MatRestoreRow(aij, row, &count, &cols, &vals));
      out.row_offsets.push_back(static_cast<std::int64_t>(out.col_indices.size()));
    }
    sort_and_sum_duplicates(out);  // MatGetRow's order is the type's business
    validate(out, "the PETSc matrix");
    return out;
  });
  // MatMultTranspose reuses MatMult, and the solvers assume symmetry (Hermitian
  // in complex): refuse a matrix that is not (one exchange of the entries, like our own readers).
  check_self_adjoint(comm, rows, partition);
  return create_petsc_operator(comm, context, rows, partition, algorithm);
}

namespace {

PetscPencil make_pencil(MPI_Comm comm, const dense::Context& context, const PetscRows& a, const PetscRows& b,
                        const RowPartition& partition, Algorithm algorithm, const RowNumbering& numbering) {
  collectively(comm, [&] {
    if (a.global_rows != b.global_rows || a.first_row != b.first_row || a.local_rows() != b.local_rows())
      fail_input("A x = lambda B x: B (", b.global_rows, " rows, this rank's from ", b.first_row, ", ", b.local_rows(),
                 " of them) is not on A's rows (", a.global_rows, " rows, this rank's from ", a.first_row, ", ",
                 a.local_rows(), "): load B with load_matrix_b");
  });
  PetscPencil pencil;
  pencil.A = make_shell(comm, context, a, partition, algorithm, numbering);
  try {
    pencil.B = make_shell(comm, context, b, partition, algorithm, numbering);
  } catch (...) {
    MatDestroy(&pencil.A);
    throw;
  }
  return pencil;
}

}  // namespace

PetscPencil create_petsc_pencil(MPI_Comm comm, const dense::Context& context, const PetscRows& a, const PetscRows& b,
                                const RowPartition& partition, Algorithm algorithm) {
  return make_pencil(comm, context, a, b, partition, algorithm, RowNumbering());
}

PetscPencil create_petsc_pencil(MPI_Comm comm, const dense::Context& context, const DistributedRows& a,
                                const DistributedRows& b, Algorithm algorithm) {
  // load_matrix_b moved and renumbered B's rows as A's: A's numbering is B's.
  return make_pencil(comm, context, petsc_rows(a, "A"), petsc_rows(b, "B"), a.partition, algorithm, a.numbering);
}

std::int64_t petsc_operator_block_applies(Mat A) { return shell_context_of(A).stats.block_applies; }
PetscOperatorStats petsc_operator_stats(Mat A) { return shell_context_of(A).stats; }

namespace test_hooks {
void fail_next_petsc_callback(Mat A, const std::string& message) {
  shell_context_of(A).injected_failure = message.empty() ? "injected failure" : message;
}
}  // namespace test_hooks

bool set_petsc_gpu_aware_default() {
  if (!petsc_has_cuda || mpi_is_cuda_aware()) return false;
  return PetscOptionsSetValue(nullptr, "-use_gpu_aware_mpi", "0") == PETSC_SUCCESS;
}

}  // namespace blockeigs::solver
