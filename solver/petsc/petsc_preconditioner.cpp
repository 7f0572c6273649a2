// make_petsc_preconditioner (solver/precond/petsc_pc.hpp) in PETSc builds.
// The user's options go into PETSc's global database under a prefix of
// their own ("-pc_type gamg" becomes "-blockeigs_pc_1_pc_type gamg"), so
// that sub-solvers (GAMG's levels, hypre) find them as PETSc users expect,
// and they are removed again with the PC.
#include <petscksp.h>

#include <atomic>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/precond/petsc_pc.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {
namespace {

static_assert(std::is_same_v<PetscScalar, double>, "PETSc with real double scalars");

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

// PETSc stays initialised while any of our PCs lives, if we initialised it.
std::atomic<int> live_pcs{0};
bool we_initialised = false;

class PetscPreconditioner final : public Preconditioner<double> {
 public:
  PetscPreconditioner(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& rows,
                      const RowPartition& partition, const std::string& options);
  ~PetscPreconditioner() override;
  void apply(spmm::ConstDenseView<double> R, spmm::DenseView<double> W) override;

 private:
  void set_up(const io::CsrRows& rows, const std::string& options);
  void release();  // PETSc's objects, our options, and PETSc itself where we initialised it

  MPI_Comm comm_;
  const spmm::Context& context_;
  std::int64_t local_rows_ = 0, global_rows_ = 0;
  std::vector<std::string> option_names_;
  Mat A_ = nullptr, X_ = nullptr, Y_ = nullptr;
  PC pc_ = nullptr;
};

PetscPreconditioner::PetscPreconditioner(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& rows,
                                         const RowPartition& partition, const std::string& options)
    : comm_(comm), context_(context), local_rows_(rows.local_rows()), global_rows_(partition.global_rows()) {
  if (live_pcs++ == 0) {
    PetscBool initialised = PETSC_FALSE;
    PetscInitialized(&initialised);
    if (!initialised) {
      PETSC_COMM_WORLD = comm;
      if (PetscInitializeNoArguments() != PETSC_SUCCESS) throw LibraryError("PetscInitializeNoArguments failed");
      we_initialised = true;
    }
  }
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

void PetscPreconditioner::set_up(const io::CsrRows& rows, const std::string& options) {
  static std::atomic<int> serial{0};
  const std::string prefix = "blockeigs_pc_" + std::to_string(++serial) + "_";
  std::string prefixed;
  option_names_ = prefixed_names(options, prefix, prefixed);
  input_check(PetscOptionsInsertString(nullptr, prefixed.c_str()), "reading them");

  // Our rows as AIJ, copied (PETSc owns its arrays).
  std::vector<PetscInt> offsets(rows.row_offsets.begin(), rows.row_offsets.end());
  std::vector<PetscInt> columns(rows.col_indices.begin(), rows.col_indices.end());
  BLOCKEIGS_PC_CHECK(MatCreateMPIAIJWithArrays(comm_, static_cast<PetscInt>(local_rows_),
                                               static_cast<PetscInt>(local_rows_), static_cast<PetscInt>(global_rows_),
                                               static_cast<PetscInt>(global_rows_), offsets.data(), columns.data(),
                                               rows.values.data(), &A_));
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
  if (--live_pcs == 0 && we_initialised) {
    PetscFinalize();
    we_initialised = false;
  }
}

void PetscPreconditioner::apply(spmm::ConstDenseView<double> R, spmm::DenseView<double> W) {
  check_apply_arguments("PETSc preconditioner", local_rows_, context_.space(), BlockExtent::of(R),
                        BlockExtent::of(spmm::ConstDenseView<double>(W)));
  const std::int64_t m = local_rows_, k = R.cols;
  PetscInt width = 0;
  if (X_) BLOCKEIGS_PC_CHECK(MatGetSize(X_, nullptr, &width));
  if (width != k) {
    MatDestroy(&X_);
    MatDestroy(&Y_);
    BLOCKEIGS_PC_CHECK(MatCreateDense(comm_, static_cast<PetscInt>(m), PETSC_DECIDE, static_cast<PetscInt>(global_rows_),
                                      static_cast<PetscInt>(k), nullptr, &X_));
    BLOCKEIGS_PC_CHECK(MatDuplicate(X_, MAT_DO_NOT_COPY_VALUES, &Y_));
  }
  // Row-major block to PETSc's column-major one, staged through the host
  // where the block is on the device.
  spmm::DenseBlock<double> host(Space::host, m, k);
  copy_block(context_, R, host.view());
  context_.synchronize();
  PetscScalar* x = nullptr;
  BLOCKEIGS_PC_CHECK(MatDenseGetArrayWrite(X_, &x));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) x[j * m + i] = host.view()(i, j);
  BLOCKEIGS_PC_CHECK(MatDenseRestoreArrayWrite(X_, &x));
  BLOCKEIGS_PC_CHECK(PCMatApply(pc_, X_, Y_));
  const PetscScalar* y = nullptr;
  BLOCKEIGS_PC_CHECK(MatDenseGetArrayRead(Y_, &y));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) host.view()(i, j) = y[j * m + i];
  BLOCKEIGS_PC_CHECK(MatDenseRestoreArrayRead(Y_, &y));
  copy_block(context_, host.cview(), W);
}

}  // namespace

bool petsc_available() { return true; }

std::unique_ptr<Preconditioner<double>> make_petsc_preconditioner(MPI_Comm comm, const spmm::Context& context,
                                                                  const io::CsrRows& rows,
                                                                  const RowPartition& partition,
                                                                  const std::string& options) {
  return std::make_unique<PetscPreconditioner>(comm, context, rows, partition, options);
}

}  // namespace blockeigs::solver
