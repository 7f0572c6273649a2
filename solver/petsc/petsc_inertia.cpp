// make_inertia_counter (solver/window/inertia.hpp) in builds whose PETSc has
// MUMPS (petsc_inertia_stub.cpp says what is missing otherwise): A as
// PETSc's AIJ once (with every diagonal entry in its pattern), and for each
// shift A - sigma I factored by MUMPS as LDL^T (its analysis depends on
// the values, so it is redone a shift), its inertia from MUMPS' pivot counts
// where a solve with the factor shows it stable:
// ICNTL(13) = 1 keeps the root on one process, so that the count of negative
// pivots is the global one at any rank count, and ICNTL(24) = 1 detects null
// pivots (an eigenvalue at sigma) instead of dividing by them.
#include <petscmat.h>
#include <petscversion.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/petsc/petsc_session.hpp"
#include "solver/window/inertia.hpp"

#ifndef PETSC_SUCCESS  // PETSc before 3.19
#define PETSC_SUCCESS 0
#endif

namespace blockeigs::solver {
namespace {

void check(PetscErrorCode code, const char* call) {
  if (code == PETSC_SUCCESS) return;
  const char* text = nullptr;
  PetscErrorMessage(code, &text, nullptr);
  throw LibraryError(detail::concat("eigensolver.count: inertia: ", call, " failed with PETSc error ",
                                    static_cast<int>(code), text ? ": " : "", text ? text : ""));
}
#define BLOCKEIGS_INERTIA_CHECK(call) check((call), #call)

std::string petsc_version() {
  return std::to_string(PETSC_VERSION_MAJOR) + "." + std::to_string(PETSC_VERSION_MINOR) + "." +
         std::to_string(PETSC_VERSION_SUBMINOR);
}

// This rank's rows with the diagonal entry in each row's pattern (zero where the input has none), so that
// MatShift changes values only.
void with_diagonal(const CsrRows& rows, std::int64_t first, std::vector<PetscInt>& offsets,
                   std::vector<PetscInt>& columns, std::vector<PetscScalar>& values) {
  offsets.assign(1, 0);
  for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
    const std::int64_t g = first + i;
    bool diagonal = false;
    for (std::int64_t q = rows.row_offsets[i]; q < rows.row_offsets[i + 1]; ++q) {
      const std::int64_t c = rows.col_indices[q];
      if (!diagonal && c > g) {
        columns.push_back(static_cast<PetscInt>(g));
        values.push_back(0);
        diagonal = true;
      }
      diagonal = diagonal || c == g;
      columns.push_back(static_cast<PetscInt>(c));
      values.push_back(rows.values[q]);
    }
    if (!diagonal) {
      columns.push_back(static_cast<PetscInt>(g));
      values.push_back(0);
    }
    offsets.push_back(static_cast<PetscInt>(columns.size()));
  }
}

class MumpsInertia final : public InertiaCounter {
 public:
  MumpsInertia(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition) : session_(comm), comm_(comm) {
    try {
      collectively(comm, [&] { set_up(rows, partition); });
    } catch (...) {
      release();
      throw;
    }
  }
  ~MumpsInertia() override { release(); }

  Inertia at(double sigma) override {
    const double t = MPI_Wtime();
    Inertia out;
    collectively(comm_, [&] {
      // Where the factorization at sigma is unstable (a backward error above kTrusted: MUMPS' pivot counts
      // are then wrong), more workspace for delayed pivots (MUMPS 5.5 ran short without an error on shifts
      // near 6 of the 3D Laplacian, whose diagonal they zero), then nearby shifts.
      for (const int workspace : {0, 100, 400})
        if (factor(sigma, workspace, out)) {
          out.shift = sigma;
          return;
        }
      const double delta = 1e-10 * norm_;
      for (const double offset : {-delta, delta, -16 * delta, 16 * delta}) {
        if (factor(sigma + offset, 400, out)) {
          out.shift = sigma + offset;
          return;
        }
      }
      throw LibraryError(detail::concat("eigensolver.count: inertia: MUMPS' LDL^T factorization of A - sigma I at ",
                                        sigma, " (up to 400% more workspace) and four shifts within ", 16 * delta,
                                        " of it had backward errors above ", kTrusted));
    });
    ++factorizations;
    seconds += MPI_Wtime() - t;
    return out;
  }

  std::string name() const override { return "MUMPS (PETSc " + petsc_version() + ")"; }

 private:
  void set_up(const CsrRows& rows, const RowPartition& partition) {
    std::vector<PetscInt> offsets, columns;
    std::vector<PetscScalar> values;
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    with_diagonal(rows, partition.begin(rank), offsets, columns, values);
    const auto m = static_cast<PetscInt>(rows.local_rows()), n = static_cast<PetscInt>(partition.global_rows());
    BLOCKEIGS_INERTIA_CHECK(MatCreate(comm_, &original_));
    BLOCKEIGS_INERTIA_CHECK(MatSetSizes(original_, m, m, n, n));
    BLOCKEIGS_INERTIA_CHECK(MatSetType(original_, MATAIJ));
    // Only the call matching the type acts (SEQ on one rank, MPI otherwise).
    BLOCKEIGS_INERTIA_CHECK(MatSeqAIJSetPreallocationCSR(original_, offsets.data(), columns.data(), values.data()));
    BLOCKEIGS_INERTIA_CHECK(MatMPIAIJSetPreallocationCSR(original_, offsets.data(), columns.data(), values.data()));
    BLOCKEIGS_INERTIA_CHECK(MatSetOption(original_, MAT_SYMMETRIC, PETSC_TRUE));
    BLOCKEIGS_INERTIA_CHECK(MatDuplicate(original_, MAT_COPY_VALUES, &shifted_));
    BLOCKEIGS_INERTIA_CHECK(MatNorm(original_, NORM_INFINITY, &norm_));
    // A fixed right-hand side for the backward-error check: the same at every rank count.
    BLOCKEIGS_INERTIA_CHECK(MatCreateVecs(original_, &x_, &b_));
    BLOCKEIGS_INERTIA_CHECK(VecDuplicate(b_, &r_));
    PetscInt first = 0, last = 0;
    BLOCKEIGS_INERTIA_CHECK(VecGetOwnershipRange(b_, &first, &last));
    PetscScalar* b = nullptr;
    BLOCKEIGS_INERTIA_CHECK(VecGetArray(b_, &b));
    for (PetscInt i = first; i < last; ++i) b[i - first] = 1.0 + 0.5 * std::sin(0.7 * static_cast<double>(i));
    BLOCKEIGS_INERTIA_CHECK(VecRestoreArray(b_, &b));
    IS column_order = nullptr;
    BLOCKEIGS_INERTIA_CHECK(MatGetOrdering(shifted_, MATORDERINGNATURAL, &order_, &column_order));
    ISDestroy(&column_order);
  }

  // A - sigma I factored afresh (MUMPS' analysis depends on the values), its inertia into `out`; false where
  // a solve with the factor has a backward error above kTrusted (or not finite). workspace: MUMPS' ICNTL(14),
  // the percentage its workspace may grow by for delayed pivots (0: PETSc's default).
  bool factor(double sigma, int workspace, Inertia& out) {
    Mat factor = nullptr;
    const auto done = [&](bool trusted) {
      MatDestroy(&factor);
      return trusted;
    };
    try {
      BLOCKEIGS_INERTIA_CHECK(MatCopy(original_, shifted_, SAME_NONZERO_PATTERN));
      BLOCKEIGS_INERTIA_CHECK(MatShift(shifted_, -sigma));
      BLOCKEIGS_INERTIA_CHECK(MatGetFactor(shifted_, MATSOLVERMUMPS, MAT_FACTOR_CHOLESKY, &factor));
      BLOCKEIGS_INERTIA_CHECK(MatMumpsSetIcntl(factor, 13, 1));
      BLOCKEIGS_INERTIA_CHECK(MatMumpsSetIcntl(factor, 24, 1));
      if (workspace > 0) BLOCKEIGS_INERTIA_CHECK(MatMumpsSetIcntl(factor, 14, workspace));
      MatFactorInfo info;
      BLOCKEIGS_INERTIA_CHECK(MatFactorInfoInitialize(&info));
      BLOCKEIGS_INERTIA_CHECK(MatCholeskyFactorSymbolic(factor, shifted_, order_, &info));
      BLOCKEIGS_INERTIA_CHECK(MatCholeskyFactorNumeric(factor, shifted_, &info));
      // x = (A - sigma I)^-1 b; the backward error ||(A - sigma I) x - b|| / (||A - sigma I|| ||x|| + ||b||).
      BLOCKEIGS_INERTIA_CHECK(MatSolve(factor, b_, x_));
      BLOCKEIGS_INERTIA_CHECK(MatMult(shifted_, x_, r_));
      BLOCKEIGS_INERTIA_CHECK(VecAXPY(r_, -1.0, b_));
      PetscReal r = 0, x = 0, b = 0;
      BLOCKEIGS_INERTIA_CHECK(VecNorm(r_, NORM_2, &r));
      BLOCKEIGS_INERTIA_CHECK(VecNorm(x_, NORM_2, &x));
      BLOCKEIGS_INERTIA_CHECK(VecNorm(b_, NORM_2, &b));
      const double backward = r / ((norm_ + std::abs(sigma)) * x + b);
      if (!(backward <= kTrusted)) return done(false);
      PetscInt negative = 0, zero = 0, positive = 0;
      BLOCKEIGS_INERTIA_CHECK(MatGetInertia(factor, &negative, &zero, &positive));
      out.negative = negative;
      out.zero = zero;
      out.positive = positive;
      return done(true);
    } catch (...) {
      MatDestroy(&factor);
      throw;
    }
  }

  void release() {
    ISDestroy(&order_);
    VecDestroy(&b_);
    VecDestroy(&x_);
    VecDestroy(&r_);
    MatDestroy(&shifted_);
    MatDestroy(&original_);
  }

  static constexpr double kTrusted = 1e-8;
  PetscSession session_;
  MPI_Comm comm_;
  Mat original_ = nullptr, shifted_ = nullptr;
  Vec b_ = nullptr, x_ = nullptr, r_ = nullptr;
  IS order_ = nullptr;
  PetscReal norm_ = 0;
};

}  // namespace

bool inertia_available(std::string* why) {
  (void)why;
  return true;
}

std::unique_ptr<InertiaCounter> make_inertia_counter(MPI_Comm comm, const CsrRows& rows,
                                                     const RowPartition& partition) {
  return std::make_unique<MumpsInertia>(comm, rows, partition);
}

}  // namespace blockeigs::solver
