// Distributed check that a matrix given by row blocks is symmetric: every
// entry (i, j) is compared with A(j, i), by a binary search in row j where
// this rank owns it, else on row j's owner, to which it is sent (only those
// entries travel). O(nnz log(row length)) time; memory beyond the matrix is
// the entries sent and received. Used for inputs not symmetric by
// construction (general Matrix Market files, HDF5 files). Collective.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/csr_rows.hpp"
#include "dense/context.hpp"
#include "solver/operator/row_numbering.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// Throws InputError (agreed on by all ranks) naming the mismatching entry
// with the smallest (row, column), e.g. "the matrix is not symmetric:
// A(4, 17) = 2.5 but A(17, 4) = 0" (`symbol` names the matrix there: "B" for
// B of A x = lambda B x). Entries match when |a_ij - a_ji| <= 1e-12 *
// max(|a_ij|, |a_ji|); an entry not stored counts as 0, so a stored zero
// needs no partner. Rows must meet CsrRows' invariants (columns sorted
// and unique within a row, in range). Rows already moved and renumbered (a
// saved distribution: most transposed entries are then on their own rank)
// take their `numbering`: the entry is named in the input's numbering, the
// smallest in the operator's. With a `device` context whose device has room
// for the rows, the lookups run there (symmetry_check_device.hpp); the message
// is the same.
// `message`, where given, words the error from the mismatch found (row, col, A(row, col), A(col, row)).
using AsymmetryMessage = std::function<std::string(std::int64_t, std::int64_t, double, double)>;
void check_symmetric(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition, const std::string& what,
                     const std::string& symbol = "A", const RowNumbering* numbering = nullptr,
                     const dense::Context* device = nullptr, const AsymmetryMessage& message = {});

// The same for complex rows and A = A^H: Re A symmetric (check_symmetric),
// Im A antisymmetric (the symmetric check of sign(j - i) Im A(i, j)) and the
// diagonal real; the message names the first entry whose partner is not its
// conjugate, as `symbol`(row, col) ("A", or "B" for a pencil's B). Collective.
void check_hermitian(MPI_Comm comm, const ComplexCsrRows& rows, const RowPartition& partition, const std::string& what,
                     const dense::Context* device = nullptr, const std::string& symbol = "A");

// check_hermitian's messages: A(row, row) with the imaginary part `imaginary`; Re A(row, col) = value but
// Re A(col, row) = transpose; Im A(row, col) = value and Im A(col, row) = transpose not opposite.
std::string imaginary_diagonal_message(const std::string& what, std::int64_t row, double imaginary,
                                       const std::string& symbol = "A");
std::string real_part_message(const std::string& what, std::int64_t row, std::int64_t col, double value,
                              double transpose, const std::string& symbol = "A");
std::string imaginary_part_message(const std::string& what, std::int64_t row, std::int64_t col, double value,
                                   double transpose, const std::string& symbol = "A");

// check_symmetric's message for the entry (row, col) = value whose transpose holds `transpose`.
std::string asymmetry_message(const std::string& what, const std::string& symbol, std::int64_t row, std::int64_t col,
                              double value, double transpose);

// Test-only: the entries sent to other ranks carry int64 indices even where
// int32 would do (the path of matrices past 2^31 rows, on small data). Every
// rank must set the same; false goes back to the default.
void set_symmetry_check_wide_indices_for_tests(bool wide);

}  // namespace blockeigs::solver
