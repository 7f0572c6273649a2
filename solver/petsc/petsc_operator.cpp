#include "solver/petsc/petsc_operator.hpp"

#include <petscversion.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

// PetscCall, PetscFunctionBeginUser and MatShellSetContextDestroy are what we
// rely on; Debian 12's 3.18 is the oldest PETSc this is built and tested with.
#if !PETSC_VERSION_GE(3, 18, 0)
#error "blockeigs_petsc needs PETSc 3.18 or newer"
#endif
#if !PETSC_VERSION_GE(3, 19, 0)
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {
namespace {

// Throws LibraryError naming a PETSc call that failed outside a callback
// (creation), with PETSc's own message for the error.
[[noreturn]] void throw_petsc_error(PetscErrorCode code, const char* call, const char* file, int line) {
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  throw LibraryError(detail::concat(call, " failed with PETSc error ", static_cast<int>(code), " (",
                                    text ? text : "unknown", specific ? std::string(": ") + specific : "",
                                    ") at ", file, ":", line));
}

#define BLOCKEIGS_PETSC_CHECK(call)                                                  \
  do {                                                                               \
    const PetscErrorCode blockeigs_petsc_status_ = (call);                           \
    if (blockeigs_petsc_status_ != PETSC_SUCCESS)                                    \
      throw_petsc_error(blockeigs_petsc_status_, #call, __FILE__, __LINE__);         \
  } while (0)

// What the MATSHELL carries. Freed with the Mat.
struct ShellContext {
  static constexpr std::uint64_t expected_tag = 0x626c6b6569677321;  // tells our shells from others
  std::uint64_t tag = expected_tag;

  // A private duplicate of the user's communicator, so that our halo messages
  // can never match the caller's own point-to-point traffic. Freed last.
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<DistributedOperator<double>> op;

  // The Mat's numbering against the operator's (create_petsc_operator on
  // DistributedRows): Vec rows are the input's, moved to the operator's ranks
  // and back around each product. The identity otherwise.
  RowNumbering numbering;
  std::int64_t mat_rows = 0;  // the Mat's local rows (the Vecs' local size)

  std::int64_t block_applies = 0;
  std::string injected_failure;  // test_hooks::fail_next_petsc_callback

  // Row-major host blocks for MatProduct (PETSc's MATDENSE is column-major).
  std::vector<double> x_rows, y_rows;
  // Device copies of X and Y when the operator runs on the device.
  spmm::Buffer<double> x_device, y_device;

  ShellContext() = default;
  ShellContext(const ShellContext&) = delete;
  ShellContext& operator=(const ShellContext&) = delete;
  ~ShellContext() {
    op.reset();  // before the communicator it uses
    if (comm != MPI_COMM_NULL) BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_free(&comm));
  }

  std::int64_t local_rows() const { return op->local_rows(); }

  // Y = A X for host blocks of the Mat's rows, width k, row-major with ld k:
  // moved to the operator's numbering and back where the Mat has the input's.
  void apply_host_block(const double* x, double* y, std::int64_t k) {
    if (numbering.is_identity()) return apply_operator_rows(x, y, k);
    const std::vector<double> in(x, x + mat_rows * k);
    const std::vector<double> x_op = numbering.from_original_rows(comm, in, k);
    std::vector<double> y_op(static_cast<std::size_t>(local_rows() * k));
    apply_operator_rows(x_op.data(), y_op.data(), k);
    const std::vector<double> out = numbering.to_original_rows(comm, y_op, k);
    std::copy(out.begin(), out.end(), y);
  }

  // The same in the operator's numbering: in place on the host, else staged
  // through the device buffers.
  void apply_operator_rows(const double* x, double* y, std::int64_t k) {
    const std::int64_t m = local_rows();
    const spmm::Context& context = op->context();
    if (context.space() == Space::host) {
      op->apply(1.0, spmm::ConstDenseView<double>(Space::host, m, k, k, x), 0.0,
                spmm::DenseView<double>{Space::host, m, k, k, y});
      return;
    }
    const auto count = static_cast<std::size_t>(m * k);
    if (x_device.size() < count) {
      x_device = spmm::Buffer<double>(Space::device, count);
      y_device = spmm::Buffer<double>(Space::device, count);
    }
    spmm::copy_bytes(x_device.data(), Space::device, x, Space::host, count * sizeof(double));
    op->apply(1.0, spmm::ConstDenseView<double>(Space::device, m, k, k, x_device.data()), 0.0,
              spmm::DenseView<double>{Space::device, m, k, k, y_device.data()});
    context.synchronize();  // the apply is queued on the context's stream
    spmm::copy_bytes(y, Space::host, y_device.data(), Space::device, count * sizeof(double));
  }

  // C = A B for column-major blocks (m x k, leading dimensions ldb, ldc):
  // transposed into row-major buffers so that the whole block is ONE apply.
  void apply_column_major(const double* b, std::int64_t ldb, double* c, std::int64_t ldc, std::int64_t k) {
    const std::int64_t m = mat_rows;
    const auto count = static_cast<std::size_t>(m * k);
    if (x_rows.size() < count) {
      x_rows.resize(count);
      y_rows.resize(count);
    }
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < m; ++i) x_rows[i * k + j] = b[j * ldb + i];
    apply_host_block(x_rows.data(), y_rows.data(), k);
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < m; ++i) c[j * ldc + i] = y_rows[i * k + j];
    block_applies += 1;
  }

  // The diagonal in the Mat's numbering.
  void diagonal(double* out) {
    std::vector<double> d(static_cast<std::size_t>(local_rows()));
    const spmm::Context& context = op->context();
    if (context.space() == Space::host) {
      op->diagonal(d.data());
    } else {
      spmm::Buffer<double> staged(Space::device, d.size());
      op->diagonal(staged.data());
      spmm::copy_bytes(d.data(), Space::host, staged.data(), Space::device, d.size() * sizeof(double));
    }
    if (!numbering.is_identity()) d = numbering.to_original_rows(comm, d, 1);
    std::copy(d.begin(), d.end(), out);
  }
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

// y = A x. Vecs are host arrays of local_rows entries: a row-major block of width 1.
PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  ShellContext* ctx = nullptr;
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  const PetscErrorCode status = guarded(*ctx, [&] { ctx->apply_host_block(xa, ya, 1); });
  // Arrays go back to their Vecs before an error is passed up.
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode shell_get_diagonal(Mat A, Vec d) {
  ShellContext* ctx = nullptr;
  PetscScalar* da = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(VecGetArrayWrite(d, &da));
  const PetscErrorCode status = guarded(*ctx, [&] { ctx->diagonal(da); });
  PetscCall(VecRestoreArrayWrite(d, &da));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatProduct AB with a dense B (MatMatMult): C = A B in one apply. PETSc has
// created C (MATDENSE, local rows of A, all columns of B) and checked the layouts.
PetscErrorCode shell_product_numeric(Mat A, Mat B, Mat C, void* /*product_data*/) {
  ShellContext* ctx = nullptr;
  const PetscScalar* b = nullptr;
  PetscScalar* c = nullptr;
  PetscInt m = 0, k = 0, ldb = 0, ldc = 0;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(MatGetLocalSize(B, &m, nullptr));
  PetscCall(MatGetSize(B, nullptr, &k));
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(MatDenseGetArrayRead(B, &b));
  PetscCall(MatDenseGetArrayWrite(C, &c));
  const PetscErrorCode status = guarded(*ctx, [&] {
    if (m != ctx->mat_rows)
      throw Error(detail::concat("the dense block has ", m, " local rows, but the operator has ", ctx->mat_rows,
                                 " on this rank"));
    ctx->apply_column_major(b, ldb, c, ldc, k);
  });
  PetscCall(MatDenseRestoreArrayWrite(C, &c));
  PetscCall(MatDenseRestoreArrayRead(B, &b));
  PetscCall(status);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PETSC_VERSION_GE(3, 23, 0)
PetscErrorCode destroy_shell_context(void** pointer) {
  PetscFunctionBeginUser;
  delete static_cast<ShellContext*>(*pointer);
  *pointer = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
PetscErrorCode destroy_shell_context(void* pointer) {
  PetscFunctionBeginUser;
  delete static_cast<ShellContext*>(pointer);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

// MatShellSetOperation's function-pointer type: void (*)(void) up to 3.23,
// PetscErrorCodeFn * after; taken from the declaration to build with both.
template <class Setter>
struct OperationArgument;
template <class R, class M, class Op, class Fn>
struct OperationArgument<R(M, Op, Fn)> {
  using type = Fn;
};
using Operation = OperationArgument<decltype(MatShellSetOperation)>::type;

// The context of a Mat made here, or an Error.
ShellContext& context_of(Mat A) {
  PetscBool is_shell = PETSC_FALSE;
  BLOCKEIGS_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A), MATSHELL, &is_shell));
  ShellContext* ctx = nullptr;
  if (is_shell) BLOCKEIGS_PETSC_CHECK(MatShellGetContext(A, &ctx));
  if (!ctx || ctx->tag != ShellContext::expected_tag)
    throw Error("this Mat was not made by create_petsc_operator");
  return *ctx;
}

void check_fits_petsc_int(std::int64_t rows) {
  constexpr auto largest = static_cast<std::int64_t>(std::numeric_limits<PetscInt>::max());
  if (rows > largest)
    fail_input_everywhere("the matrix has ", rows, " rows, more than this PETSc's PetscInt holds (", largest,
                          "): use a PETSc configured --with-64-bit-indices");
}

}  // namespace

namespace {

// The MATSHELL over `rows` (the operator's numbering, distributed by
// `partition`), numbered as `numbering`'s input (or as `rows` where it is the identity).
Mat make_shell(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& rows, const RowPartition& partition,
               Algorithm algorithm, const RowNumbering& numbering) {
  int ranks = 1, rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (partition.ranks() != ranks)
    fail_input_everywhere("the row partition has ", partition.ranks(), " ranks, but the communicator has ",
                          ranks);
  check_fits_petsc_int(partition.global_rows());

  auto ctx = std::make_unique<ShellContext>();
  BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(comm, &ctx->comm));
  use_errors_return(ctx->comm);
  ctx->op = std::make_unique<DistributedOperator<double>>(ctx->comm, context, rows, partition, algorithm);
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
    // The operator is symmetric (this library's matrices are), so A^T x = A x.
    BLOCKEIGS_PETSC_CHECK(
        MatShellSetOperation(A, MATOP_MULT_TRANSPOSE, reinterpret_cast<Operation>(shell_mult)));
    BLOCKEIGS_PETSC_CHECK(
        MatShellSetOperation(A, MATOP_GET_DIAGONAL, reinterpret_cast<Operation>(shell_get_diagonal)));
    BLOCKEIGS_PETSC_CHECK(MatShellSetMatProductOperation(A, MATPRODUCT_AB, nullptr, shell_product_numeric,
                                                         nullptr, MATDENSE, MATDENSE));
    BLOCKEIGS_PETSC_CHECK(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
    BLOCKEIGS_PETSC_CHECK(MatSetOption(A, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  } catch (...) {
    MatDestroy(&A);
    throw;
  }
  return A;
}

}  // namespace

Mat create_petsc_operator(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& rows,
                          const RowPartition& partition, Algorithm algorithm) {
  return make_shell(comm, context, rows, partition, algorithm, RowNumbering());
}

Mat create_petsc_operator(MPI_Comm comm, const spmm::Context& context, const DistributedRows& rows,
                          Algorithm algorithm) {
  return make_shell(comm, context, rows.rows, rows.partition, algorithm, rows.numbering);
}

Mat create_petsc_operator_from_aij(Mat aij, const spmm::Context& context, Algorithm algorithm) {
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(aij));
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  PetscInt global_rows = 0, global_cols = 0;
  BLOCKEIGS_PETSC_CHECK(MatGetSize(aij, &global_rows, &global_cols));
  if (global_rows != global_cols)
    fail_input_everywhere("the PETSc matrix is ", global_rows, " x ", global_cols, ": the operator needs a square matrix");

  // Every rank's range, from PETSc's own layout (the same array on every rank).
  const PetscInt* ranges = nullptr;
  BLOCKEIGS_PETSC_CHECK(MatGetOwnershipRanges(aij, &ranges));
  RowPartition partition(std::vector<std::int64_t>(ranges, ranges + ranks + 1));

  io::CsrRows rows = collectively(comm, [&] {
    PetscInt local_rows = 0, local_cols = 0, begin = 0, end = 0;
    BLOCKEIGS_PETSC_CHECK(MatGetLocalSize(aij, &local_rows, &local_cols));
    if (local_rows != local_cols)
      fail_input("the PETSc matrix has ", local_rows, " local rows but ", local_cols,
                 " local columns on a rank: the operator needs rows and columns distributed alike");
    BLOCKEIGS_PETSC_CHECK(MatGetOwnershipRange(aij, &begin, &end));
    io::CsrRows out;
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
    io::sort_and_sum_duplicates(out);  // MatGetRow's order is the type's business
    io::validate(out, "the PETSc matrix");
    return out;
  });
  // MatMultTranspose reuses MatMult, and the solvers assume symmetry: refuse
  // a matrix that is not (one exchange of the entries, like our own readers).
  check_symmetric(comm, rows, partition, "the PETSc matrix");
  return create_petsc_operator(comm, context, rows, partition, algorithm);
}

namespace {

PetscPencil make_pencil(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& a, const io::CsrRows& b,
                        const RowPartition& partition, Algorithm algorithm, const RowNumbering& numbering) {
  collectively(comm, [&] {
    if (a.global_rows != b.global_rows || a.first_row != b.first_row || a.local_rows() != b.local_rows())
      fail_input("A x = lambda B x: B (", b.global_rows, " rows, this rank's from ", b.first_row, ", ",
                 b.local_rows(), " of them) is not on A's rows (", a.global_rows, " rows, this rank's from ",
                 a.first_row, ", ", a.local_rows(), "): load B with load_matrix_b");
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

PetscPencil create_petsc_pencil(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& a,
                                const io::CsrRows& b, const RowPartition& partition, Algorithm algorithm) {
  return make_pencil(comm, context, a, b, partition, algorithm, RowNumbering());
}

PetscPencil create_petsc_pencil(MPI_Comm comm, const spmm::Context& context, const DistributedRows& a,
                                const DistributedRows& b, Algorithm algorithm) {
  // load_matrix_b moved and renumbered B's rows as A's: A's numbering is B's.
  return make_pencil(comm, context, a.rows, b.rows, a.partition, algorithm, a.numbering);
}

std::int64_t petsc_operator_block_applies(Mat A) { return context_of(A).block_applies; }

namespace test_hooks {
void fail_next_petsc_callback(Mat A, const std::string& message) {
  context_of(A).injected_failure = message.empty() ? "injected failure" : message;
}
}  // namespace test_hooks

}  // namespace blockeigs::solver
