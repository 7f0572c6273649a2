// make_petsc_preconditioner (solver/precond/petsc_pc.hpp) in PETSc builds.
// The user's options go into PETSc's global database under a prefix of
// their own ("-pc_type gamg" becomes "-blockeigs_pc_1_pc_type gamg"), so
// that sub-solvers (GAMG's levels, hypre) find them as PETSc users expect,
// and they are removed again with the PC. Where PETSc has CUDA and our
// blocks are on the device (petsc_device_arrays()), PETSc gets the matrix as
// MATAIJCUSPARSE and the blocks as MATDENSECUDA, transposed on the device:
// no host round trip where the PC runs on the device (GAMG, Jacobi, ...).
#include <petscksp.h>

#include <atomic>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/scalar.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/petsc/petsc_device.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "solver/petsc/petsc_session.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "dense/memory.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {
namespace {

// The preconditioner takes PetscScalar blocks: real ones from a real PETSc, complex ones from a complex PETSc.

// The first (most specific) message of the error being raised, which the
// return codes alone do not carry.
thread_local std::string petsc_message;

PetscErrorCode record_message(MPI_Comm, int, const char*, const char*, PetscErrorCode code, PetscErrorType type,
                              const char* message, void*) {
  if (type == PETSC_ERROR_INITIAL) petsc_message = message ? message : "";
  return code;
}

// Throws InputError naming the call and PETSc's message (errors in the
// set-up come from the user's options).
void input_check(PetscErrorCode code, const char* what) {
  if (code == PETSC_SUCCESS) return;
  const char* text = nullptr;
  PetscErrorMessage(code, &text, nullptr);
  fail_input("preconditioner type petsc: PETSc rejected the options while ", what, ": ",
             petsc_message.empty() ? (text ? text : "unknown error") : petsc_message);
}

void library_check(PetscErrorCode code, const char* call) {
  if (code == PETSC_SUCCESS) return;
  throw LibraryError(detail::concat("preconditioner type petsc: ", call, " failed with PETSc error ",
                                    static_cast<int>(code), petsc_message.empty() ? "" : ": ", petsc_message));
}
#define BLOCKEIGS_PC_CHECK(call) library_check((call), #call)

// "-pc_type gamg -pc_gamg_threshold 0.02" with each option name moved under `prefix`.
std::vector<std::string> prefixed_names(const std::string& options, const std::string& prefix, std::string& out) {
  std::istringstream words(options);
  std::vector<std::string> names;
  for (std::string word; words >> word;) {
    const bool name = word.size() > 1 && word[0] == '-' && (std::isalpha(static_cast<unsigned char>(word[1])) != 0);
    if (name) {
      names.push_back("-" + prefix + word.substr(1));
      word = names.back();
    }
    out += (out.empty() ? "" : " ") + word;
  }
  return names;
}

class PetscPreconditioner final : public Preconditioner<PetscScalar> {
 public:
  PetscPreconditioner(MPI_Comm comm, const dense::Context& context, const PetscRows& rows,
                      const RowPartition& partition, const std::string& options);
  ~PetscPreconditioner() override;
  void apply(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W) override;

 private:
  void set_up(const PetscRows& rows, const std::string& options);
  void release();  // PETSc's objects and our options
  // The two ways to and from PETSc's column-major blocks X_ and Y_.
  void apply_through_host(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W);
  void apply_on_device(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W);

  PetscSession session_;
  MPI_Comm comm_;
  const dense::Context& context_;
  std::int64_t local_rows_ = 0, global_rows_ = 0;
  std::vector<std::string> option_names_;
  bool device_ = false;  // PETSc's objects on the device (its CUDA types)
  Mat A_ = nullptr, X_ = nullptr, Y_ = nullptr;
  PC pc_ = nullptr;
};

PetscPreconditioner::PetscPreconditioner(MPI_Comm comm, const dense::Context& context, const PetscRows& rows,
                                         const RowPartition& partition, const std::string& options)
    : session_(comm),
      comm_(comm),
      context_(context),
      local_rows_(rows.local_rows()),
      global_rows_(partition.global_rows()),
      device_(context.space() == Space::device && petsc_device_arrays()) {
  try {
    collectively(comm, [&] {
      PetscPushErrorHandler(record_message, nullptr);
      try {
        set_up(rows, options);
      } catch (...) {
        PetscPopErrorHandler();
        throw;
      }
      PetscPopErrorHandler();
    });
  } catch (...) {
    release();  // no destructor runs for a constructor that throws
    throw;
  }
}

void PetscPreconditioner::set_up(const PetscRows& rows, const std::string& options) {
  static std::atomic<int> serial{0};
  const std::string prefix = "blockeigs_pc_" + std::to_string(++serial) + "_";
  std::string prefixed;
  option_names_ = prefixed_names(options, prefix, prefixed);
  input_check(PetscOptionsInsertString(nullptr, prefixed.c_str()), "reading them");

  // Our rows as AIJ, copied (PETSc owns its arrays).
  std::vector<PetscInt> offsets(rows.row_offsets.begin(), rows.row_offsets.end());
  std::vector<PetscInt> columns(rows.col_indices.begin(), rows.col_indices.end());
  const auto m = static_cast<PetscInt>(local_rows_), n = static_cast<PetscInt>(global_rows_);
  BLOCKEIGS_PC_CHECK(MatCreate(comm_, &A_));
  BLOCKEIGS_PC_CHECK(MatSetSizes(A_, m, m, n, n));
  BLOCKEIGS_PC_CHECK(MatSetType(A_, device_ ? MATAIJCUSPARSE : MATAIJ));
  // Only the call matching the type acts (SEQ on one rank, MPI otherwise).
  BLOCKEIGS_PC_CHECK(MatSeqAIJSetPreallocationCSR(A_, offsets.data(), columns.data(), rows.values.data()));
  BLOCKEIGS_PC_CHECK(MatMPIAIJSetPreallocationCSR(A_, offsets.data(), columns.data(), rows.values.data()));
  BLOCKEIGS_PC_CHECK(PCCreate(comm_, &pc_));
  BLOCKEIGS_PC_CHECK(PCSetOptionsPrefix(pc_, prefix.c_str()));
  BLOCKEIGS_PC_CHECK(PCSetOperators(pc_, A_, A_));
  input_check(PCSetFromOptions(pc_), "setting the PC from them");
  input_check(PCSetUp(pc_), "setting up the PC");

  // Options PETSc never read are misspelt or belong to no part of this PC.
  std::string unused;
  for (const std::string& name : option_names_) {
    PetscBool used = PETSC_FALSE;
    BLOCKEIGS_PC_CHECK(PetscOptionsUsed(nullptr, name.c_str() + 1, &used));  // the name without its dash
    if (!used) unused += (unused.empty() ? "-" : ", -") + name.substr(prefix.size() + 1);
  }
  if (!unused.empty())
    fail_input("preconditioner type petsc: PETSc did not use the option(s) ", unused, " of \"", options,
               "\" (misspelt, or not an option of this PC)");
}

PetscPreconditioner::~PetscPreconditioner() { release(); }

void PetscPreconditioner::release() {
  MatDestroy(&X_);
  MatDestroy(&Y_);
  PCDestroy(&pc_);
  MatDestroy(&A_);
  for (const std::string& name : option_names_) PetscOptionsClearValue(nullptr, name.c_str());
}

void PetscPreconditioner::apply(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W) {
  check_apply_arguments("PETSc preconditioner", local_rows_, context_.space(), BlockExtent::of(R),
                        BlockExtent::of(dense::ConstDenseView<PetscScalar>(W)));
  const std::int64_t k = R.cols;
  PetscInt width = 0;
  if (X_) BLOCKEIGS_PC_CHECK(MatGetSize(X_, nullptr, &width));
  if (width != k) {
    MatDestroy(&X_);
    MatDestroy(&Y_);
    BLOCKEIGS_PC_CHECK(MatCreate(comm_, &X_));
    BLOCKEIGS_PC_CHECK(MatSetSizes(X_, static_cast<PetscInt>(local_rows_), PETSC_DECIDE,
                                   static_cast<PetscInt>(global_rows_), static_cast<PetscInt>(k)));
    BLOCKEIGS_PC_CHECK(MatSetType(X_, device_ ? MATDENSECUDA : MATDENSE));
    BLOCKEIGS_PC_CHECK(MatSetUp(X_));
    BLOCKEIGS_PC_CHECK(MatDuplicate(X_, MAT_DO_NOT_COPY_VALUES, &Y_));
  }
  if (device_)
    apply_on_device(R, W);
  else
    apply_through_host(R, W);
}

// Row-major block to PETSc's column-major one, staged through the host
// where the block is on the device.
void PetscPreconditioner::apply_through_host(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W) {
  const std::int64_t m = local_rows_, k = R.cols;
  PetscInt ld = 0;
  dense::DenseBlock<PetscScalar> host(Space::host, m, k);
  copy_block(context_, R, host.view());
  context_.synchronize();
  PetscScalar* x = nullptr;
  BLOCKEIGS_PC_CHECK(MatDenseGetLDA(X_, &ld));
  BLOCKEIGS_PC_CHECK(MatDenseGetArrayWrite(X_, &x));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) x[j * ld + i] = host.view()(i, j);
  BLOCKEIGS_PC_CHECK(MatDenseRestoreArrayWrite(X_, &x));
  BLOCKEIGS_PC_CHECK(PCMatApply(pc_, X_, Y_));
  const PetscScalar* y = nullptr;
  BLOCKEIGS_PC_CHECK(MatDenseGetLDA(Y_, &ld));
  BLOCKEIGS_PC_CHECK(MatDenseGetArrayRead(Y_, &y));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) host.view()(i, j) = y[j * ld + i];
  BLOCKEIGS_PC_CHECK(MatDenseRestoreArrayRead(Y_, &y));
  copy_block(context_, host.cview(), W);
}

// R (row-major, on the device) transposed into X_'s device array, PCMatApply,
// Y_'s device array transposed into W; the streams ordered by events.
void PetscPreconditioner::apply_on_device(dense::ConstDenseView<PetscScalar> R, dense::DenseView<PetscScalar> W) {
  const std::int64_t m = local_rows_, k = R.cols;
  PetscInt ldx = 0, ldy = 0;
  Space space = Space::host;
  BLOCKEIGS_PC_CHECK(MatDenseGetLDA(X_, &ldx));
  BLOCKEIGS_PC_CHECK(MatDenseGetLDA(Y_, &ldy));
  PetscScalar* x = nullptr;
  BLOCKEIGS_PC_CHECK(petsc_device::dense_get_write(X_, &x, &space));
  if (space != Space::device) {
    (void)petsc_device::dense_restore_write(X_, &x);
    throw LibraryError("preconditioner type petsc: PETSc gave a host array for a MATDENSECUDA block");
  }
  petsc_device::wait_for_petsc(context_);
  // X (column-major m x k) = R^T of R as column-major k x m with leading dimension R.ld.
  petsc_device::transpose(context_, k, m, R.data, R.ld, x, ldx);
  petsc_device::petsc_waits_for(context_);
  BLOCKEIGS_PC_CHECK(petsc_device::dense_restore_write(X_, &x));
  BLOCKEIGS_PC_CHECK(PCMatApply(pc_, X_, Y_));
  const PetscScalar* y = nullptr;
  BLOCKEIGS_PC_CHECK(petsc_device::dense_get_read(Y_, &y, &space));
  if (space != Space::device) {
    (void)petsc_device::dense_restore_read(Y_, &y);
    throw LibraryError("preconditioner type petsc: PETSc gave a host array for a MATDENSECUDA block");
  }
  petsc_device::wait_for_petsc(context_);
  petsc_device::transpose(context_, m, k, y, ldy, W.data, W.ld);
  petsc_device::petsc_waits_for(context_);
  BLOCKEIGS_PC_CHECK(petsc_device::dense_restore_read(Y_, &y));
}

// The overload for the other kind of values: refused, naming both.
template <class T>
[[noreturn]] void other_scalar() {
  fail_input_everywhere("preconditioner type petsc: the matrix has ", is_complex_v<T> ? "complex" : "real",
                        " values, but this build's PETSc has ", is_complex_v<PetscScalar> ? "complex" : "real",
                        " scalars: build block-eigs with a ", is_complex_v<T> ? "complex" : "real",
                        " PETSc (docs/petsc.md#complex-petsc), or choose chebyshev, jacobi or none");
}

// Built for PETSc's scalar, refused for the other.
template <class T>
std::unique_ptr<Preconditioner<T>> make_for(MPI_Comm comm, const dense::Context& context, const CsrRowsOf<T>& rows,
                                            const RowPartition& partition, const std::string& options) {
  if constexpr (std::is_same_v<T, PetscScalar>)
    return std::make_unique<PetscPreconditioner>(comm, context, rows, partition, options);
  else
    other_scalar<T>();
}

}  // namespace

bool petsc_available() { return true; }
bool petsc_is_complex() { return is_complex_v<PetscScalar>; }

std::unique_ptr<Preconditioner<double>> make_petsc_preconditioner(MPI_Comm comm, const dense::Context& context,
                                                                  const CsrRows& rows, const RowPartition& partition,
                                                                  const std::string& options) {
  return make_for(comm, context, rows, partition, options);
}

std::unique_ptr<Preconditioner<std::complex<double>>> make_petsc_preconditioner(MPI_Comm comm,
                                                                                const dense::Context& context,
                                                                                const ComplexCsrRows& rows,
                                                                                const RowPartition& partition,
                                                                                const std::string& options) {
  return make_for(comm, context, rows, partition, options);
}

}  // namespace blockeigs::solver
