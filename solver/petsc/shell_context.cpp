#include "solver/petsc/shell_context.hpp"

#include <algorithm>
#include <type_traits>

#include "core/checks.hpp"
#include "core/scalar.hpp"
#include "solver/petsc/petsc_device.hpp"

namespace blockeigs::solver {
namespace {

template <class F>
struct ThirdArgument;
template <class R, class A, class B, class C>
struct ThirdArgument<R(A, B, C)> {
  using type = C;
};
using SpecificArgument = ThirdArgument<decltype(PetscErrorMessage)>::type;

}  // namespace

ShellContext::~ShellContext() {
  op.reset();  // before the communicator it uses
  if (comm != MPI_COMM_NULL) BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_free(&comm));
}

void ShellContext::apply(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k) {
  stats.products += 1;
  run(x, xs, y, ys, k, product());
}

OperatorBody ShellContext::product() {
  return [this](dense::ConstDenseView<Scalar> X, dense::DenseView<Scalar> Y) { op->apply(Scalar(1), X, Scalar(0), Y); };
}

void ShellContext::reserve(std::size_t count) {
  if (x_stage_.size() >= count) return;
  x_stage_ = dense::Buffer<Scalar>(context().space(), count);
  y_stage_ = dense::Buffer<Scalar>(context().space(), count);
}

void ShellContext::copy(Scalar* dst, Space dst_space, const Scalar* src, Space src_space, std::size_t count) {
  if (count == 0) return;
  if (dst_space != src_space) stats.copies += 1;
  dense::copy_bytes(dst, dst_space, src, src_space, count * sizeof(Scalar));
}

void ShellContext::count_arrays(Space a, Space b) {
  for (const Space s : {a, b}) (s == Space::device ? stats.device_arrays : stats.host_arrays) += 1;
}

void ShellContext::run(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k, const OperatorBody& body) {
  count_arrays(xs, ys);
  run_uncounted(x, xs, y, ys, k, body);
}

void ShellContext::run_uncounted(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k,
                                 const OperatorBody& body) {
  if (!numbering.is_identity()) return run_renumbered(x, xs, y, ys, k, body);
  const Space space = context().space();
  const std::int64_t m = local_rows();
  const auto count = static_cast<std::size_t>(m * k);
  if (xs != space || ys != space) reserve(count);
  // PETSc's device arrays were written on its stream; ours reads them.
  petsc_device::wait_for_petsc(context());
  const Scalar* in = x;
  if (xs != space) {
    copy(x_stage_.data(), space, x, xs, count);
    in = x_stage_.data();
  }
  Scalar* out = ys == space ? y : y_stage_.data();
  body(dense::ConstDenseView<Scalar>(space, m, k, k, in), dense::DenseView<Scalar>{space, m, k, k, out});
  if (ys != space) {
    context().synchronize();  // the body is queued on the context's stream
    copy(y, ys, out, space, count);
  }
  petsc_device::petsc_waits_for(context());
}

void ShellContext::run_renumbered(const Scalar* x, Space xs, Scalar* y, Space ys, std::int64_t k,
                                  const OperatorBody& body) {
  // Rows move between ranks through host arrays (RowNumbering).
  petsc_device::wait_for_petsc(context());
  std::vector<Scalar> in(static_cast<std::size_t>(mat_rows * k));
  copy(in.data(), Space::host, x, xs, in.size());
  const std::vector<Scalar> x_op = numbering.from_original_rows(comm, in, k);
  std::vector<Scalar> y_op(static_cast<std::size_t>(local_rows() * k));
  const Space space = context().space();
  const std::int64_t m = local_rows();
  if (space == Space::host) {
    body(dense::ConstDenseView<Scalar>(space, m, k, k, x_op.data()),
         dense::DenseView<Scalar>{space, m, k, k, y_op.data()});
  } else {
    reserve(y_op.size());
    copy(x_stage_.data(), space, x_op.data(), Space::host, x_op.size());
    body(dense::ConstDenseView<Scalar>(space, m, k, k, x_stage_.data()),
         dense::DenseView<Scalar>{space, m, k, k, y_stage_.data()});
    context().synchronize();
    copy(y_op.data(), Space::host, y_stage_.data(), space, y_op.size());
  }
  const std::vector<Scalar> out = numbering.to_original_rows(comm, y_op, k);
  copy(y, ys, out.data(), Space::host, out.size());
  petsc_device::petsc_waits_for(context());
}

void ShellContext::apply_column_major(const Scalar* b, std::int64_t ldb, Scalar* c, std::int64_t ldc, std::int64_t k,
                                      Space space) {
  stats.block_applies += 1;
  // The operator takes column-major blocks itself in real fp64 only; complex ones go through row-major blocks.
  if (!is_complex_v<Scalar> && space == context().space() && numbering.is_identity()) {
    // In place: the operator takes column-major blocks itself.
    count_arrays(space, space);
    const std::int64_t m = local_rows();
    petsc_device::wait_for_petsc(context());
    op->apply_column_major(Scalar(1), {space, m, k, ldb, b}, Scalar(0), {space, m, k, ldc, c});
    petsc_device::petsc_waits_for(context());
    return;
  }
  run_column_major(b, ldb, c, ldc, k, space, product());
}

void ShellContext::run_column_major(const Scalar* b, std::int64_t ldb, Scalar* c, std::int64_t ldc, std::int64_t k,
                                    Space space, const OperatorBody& body) {
  count_arrays(space, space);
  const std::int64_t m = mat_rows;
  const auto count = static_cast<std::size_t>(m * k);
  if (space == Space::device && context().space() == Space::device && numbering.is_identity()) {
    // On the device throughout: B transposed into a row-major block, the
    // body on the whole block, the result transposed into C.
    reserve(count);
    petsc_device::wait_for_petsc(context());
    petsc_device::transpose(context(), m, k, b, ldb, x_stage_.data(), k);
    body(dense::ConstDenseView<Scalar>(Space::device, m, k, k, x_stage_.data()),
         dense::DenseView<Scalar>{Space::device, m, k, k, y_stage_.data()});
    petsc_device::transpose(context(), k, m, y_stage_.data(), k, c, ldc);
    petsc_device::petsc_waits_for(context());
    return;
  }
  // Otherwise through row-major host blocks (PETSc's dense blocks are column-major).
  if (x_host_.size() < count) {
    x_host_.resize(count);
    y_host_.resize(count);
  }
  std::vector<Scalar> columns;
  const Scalar* bh = b;
  if (space != Space::host) {
    petsc_device::wait_for_petsc(context());
    columns.resize(static_cast<std::size_t>(ldb * std::max<std::int64_t>(k - 1, 0) + m));
    copy(columns.data(), Space::host, b, space, columns.size());
    bh = columns.data();
  }
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < m; ++i) x_host_[i * k + j] = bh[j * ldb + i];
  run_uncounted(x_host_.data(), Space::host, y_host_.data(), Space::host, k, body);
  if (space == Space::host) {
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < m; ++i) c[j * ldc + i] = y_host_[i * k + j];
    return;
  }
  std::vector<Scalar> out(static_cast<std::size_t>(ldc * std::max<std::int64_t>(k - 1, 0) + m));
  if (ldc != m) copy(out.data(), Space::host, c, space, out.size());  // keep what lies between the columns
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < m; ++i) out[j * ldc + i] = y_host_[i * k + j];
  copy(c, space, out.data(), Space::host, out.size());
  petsc_device::petsc_waits_for(context());
}

void ShellContext::diagonal(Scalar* out, Space space) {
  (space == Space::device ? stats.device_arrays : stats.host_arrays) += 1;  // one array
  const Space op_space = context().space();
  const auto count = static_cast<std::size_t>(local_rows());
  if (numbering.is_identity() && space == op_space) {
    petsc_device::wait_for_petsc(context());
    op->diagonal(out);
    petsc_device::petsc_waits_for(context());
    return;
  }
  std::vector<Scalar> d(count);
  if (op_space == Space::host) {
    op->diagonal(d.data());
  } else {
    reserve(count);
    op->diagonal(x_stage_.data());
    copy(d.data(), Space::host, x_stage_.data(), op_space, count);
  }
  if (!numbering.is_identity()) d = numbering.to_original_rows(comm, d, 1);
  copy(out, space, d.data(), Space::host, d.size());
  petsc_device::petsc_waits_for(context());
}

ShellContext& shell_context_of(Mat A) {
  PetscBool is_shell = PETSC_FALSE;
  BLOCKEIGS_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A), MATSHELL, &is_shell));
  ShellContext* ctx = nullptr;
  if (is_shell) BLOCKEIGS_PETSC_CHECK(MatShellGetContext(A, &ctx));
  if (!ctx || ctx->tag != ShellContext::expected_tag) throw Error("this Mat was not made by create_petsc_operator");
  return *ctx;
}

void throw_petsc_error(PetscErrorCode code, const char* call, const char* file, int line) {
  // The specific message is char * up to 3.18, const char * later.
  const char* text = nullptr;
  std::remove_pointer_t<SpecificArgument> specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  throw LibraryError(detail::concat(call, " failed with PETSc error ", static_cast<int>(code), " (",
                                    text ? text : "unknown", specific ? std::string(": ") + specific : "", ") at ",
                                    file, ":", line));
}

}  // namespace blockeigs::solver
