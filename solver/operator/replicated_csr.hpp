// A CSR matrix that every rank holds whole, in the caller's arrays (host or
// device memory, int32 or int64 indices, fp64 or complex128 values), of which each rank
// takes rows [begin, end): a CuPy or SciPy matrix passed to the Python module.
// The arrays are read where they are, never copied whole: the checks and the
// operator's split (local_blocks.hpp) run on them in place, on the device for
// device arrays (cuda/replicated_csr_device.cu) with this file's host loops
// as their twin.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "core/backend_lists.hpp"
#include "core/enums.hpp"
#include "dense/context.hpp"
#include "core/csr_rows.hpp"

namespace blockeigs::solver {

struct ReplicatedCsr {
  Space space = Space::host;
  int device = -1;                  // the device that holds the arrays (space device)
  std::int64_t n = 0, nnz = 0;      // n x n, nnz entries in all
  const void* offsets = nullptr;    // n + 1 entries
  const void* columns = nullptr;    // nnz entries, global column indices
  bool wide = false;                // int64 offsets and columns (else int32)
  const double* values = nullptr;   // nnz values, or nnz (re, im) pairs where complex (NumPy's complex128)
  bool complex = false;             // a Hermitian matrix's complex values
  std::int64_t begin = 0, end = 0;  // this rank's rows
  std::int64_t local_rows() const { return end - begin; }
};

// What is wrong with a replicated matrix, found by one pass of each kind
// (host or device); `message` builds the text. Each kind's finding is the
// first one the host checks (validate, check_symmetric) would name.
struct CsrProblem {
  // imaginary_diagonal, real_part and imaginary_part: complex values, not Hermitian (check_hermitian's three
  // findings: a diagonal entry with an imaginary part, Re A not symmetric, Im A not antisymmetric).
  enum class Kind {
    none,
    offsets_start,
    offsets_end,
    offsets_decrease,
    entry,
    asymmetric,
    imaginary_diagonal,
    real_part,
    imaginary_part
  };
  Kind kind = Kind::none;
  std::int64_t row = 0;             // offsets_decrease: offsets[row + 1] < offsets[row]; entry: the row holding it
  std::int64_t position = 0;        // entry, asymmetric: the entry's index in columns / values
  std::int64_t column = 0;          // asymmetric: the entry (row, column)
  double value = 0, transpose = 0;  // asymmetric: A(row, column) and A(column, row) (their parts where complex)
};

// Which Hermitian test a pass of find_hermitian_problem makes (complex values).
enum class HermitianPart { diagonal, real, imaginary };

// The three passes, each over the whole offsets or this rank's rows; a pass
// assumes the ones before it found nothing. Host arrays: these loops; device
// arrays: the kernels of cuda/replicated_csr_device.cu (a stub that throws
// where the build has no CUDA), on `context`'s stream.
CsrProblem find_offsets_problem(const ReplicatedCsr& a, const dense::Context* context = nullptr);
// The first entry of this rank's rows (in storage order) whose column is out
// of range or not above the one before it in its row, or whose value is not finite.
CsrProblem find_entry_problem(const ReplicatedCsr& a, const dense::Context* context = nullptr);
// The first entry (i, j), i != j, of this rank's rows with |a_ij - a_ji| >
// 1e-12 max(|a_ij|, |a_ji|), a_ji looked up in row j (any rank's: the matrix
// is whole here); columns sorted within rows (the entry pass found nothing).
CsrProblem find_asymmetry(const ReplicatedCsr& a, const dense::Context* context = nullptr);
// Complex values: the first entry of this rank's rows that fails `part`'s
// test, as check_hermitian's passes find it (a diagonal entry with an
// imaginary part; Re A(i, j) against Re A(j, i), and Im A(i, j) against
// -Im A(j, i), within 1e-12 relative as find_asymmetry).
CsrProblem find_hermitian_problem(const ReplicatedCsr& a, HermitianPart part, const dense::Context* context = nullptr);

// Their device passes (cuda/replicated_csr_device.cu, or a stub that throws where the build has no CUDA),
// each as OP(signature, name) (core/backend_lists.hpp).
#define BLOCKEIGS_REPLICATED_CSR_DEVICE_PASSES(OP)                                                     \
  OP(CsrProblem find_offsets_problem_on_device(const ReplicatedCsr& a, const dense::Context& context), \
     "find_offsets_problem_on_device")                                                                 \
  OP(CsrProblem find_entry_problem_on_device(const ReplicatedCsr& a, const dense::Context& context),   \
     "find_entry_problem_on_device")                                                                   \
  OP(CsrProblem find_asymmetry_on_device(const ReplicatedCsr& a, const dense::Context& context),       \
     "find_asymmetry_on_device")                                                                       \
  OP(CsrProblem find_hermitian_problem_on_device(const ReplicatedCsr& a, HermitianPart part,           \
                                                 const dense::Context& context),                       \
     "find_hermitian_problem_on_device")
BLOCKEIGS_REPLICATED_CSR_DEVICE_PASSES(BLOCKEIGS_BACKEND_DECLARE)

// The message the host checks give for `problem` (validate's for the
// offsets and the entries, check_symmetric's for an asymmetry, check_hermitian's
// for complex values), naming
// `description`; empty for none. Reads the offending row from the arrays.
std::string problem_message(const ReplicatedCsr& a, const CsrProblem& problem, const std::string& description);

// The checks in order, each agreed on by the ranks (the lowest rank's
// message, which names the first offending row): InputError on every rank.
// Complex values: the Hermitian passes in check_hermitian's order.
// Collective. `context` is needed for device arrays.
void check_replicated(MPI_Comm comm, const ReplicatedCsr& a, const dense::Context* context,
                      const std::string& description);

// This rank's rows as host rows (int64 columns): the path for what the
// device operator does not take (a graph partition, a band order, the CPU
// backend). One copy of the rank's rows.
CsrRows host_rows(const ReplicatedCsr& a);
ComplexCsrRows host_complex_rows(const ReplicatedCsr& a);  // the same for complex values

}  // namespace blockeigs::solver
