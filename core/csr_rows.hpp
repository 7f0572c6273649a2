// A contiguous block of rows of a global sparse matrix, held on the host with
// global (int64) column indices. This is what the readers and generators
// produce and what the distributed operator is built from: CsrRows holds
// real values, ComplexCsrRows complex ones (Hermitian problems).
#pragma once

#include <cstddef>
#include <cstdint>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/scalar.hpp"

namespace blockeigs {

template <class T>
struct CsrRowsOf {
  std::int64_t global_rows = 0;
  std::int64_t global_cols = 0;
  std::int64_t first_row = 0;             // global index of local row 0
  std::vector<std::int64_t> row_offsets;  // local_rows() + 1 entries, starting at 0
  std::vector<std::int64_t> col_indices;  // global column indices, sorted within a row
  std::vector<T> values;

  std::int64_t local_rows() const {
    return row_offsets.empty() ? 0 : static_cast<std::int64_t>(row_offsets.size()) - 1;
  }
  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
};

using CsrRows = CsrRowsOf<double>;
using ComplexCsrRows = CsrRowsOf<std::complex<double>>;

// The rows an operator or block of element type T is built from: fp64 rows
// for float and double (fp32 operators round them), complex double rows for
// the complex types.
template <class T>
using RowsFor = CsrRowsOf<std::conditional_t<is_complex_v<T>, std::complex<double>, double>>;

// Rows [row_begin, row_end) of a matrix that holds all rows (first_row == 0).
template <class T>
CsrRowsOf<T> slice_rows(const CsrRowsOf<T>& whole, std::int64_t row_begin, std::int64_t row_end);

// Complex rows as real ones of the same pattern, each entry's magnitude its value: what the readers of a
// pattern (the graph partitioner, the band order, a halo's columns; they skip explicit zeros) take of complex
// rows, which are then moved by the same numbering.
CsrRows magnitudes(const ComplexCsrRows& rows);

// Sorts the columns within each row and sums repeated columns, in place.
// Readers call it so that files with unsorted or repeated entries (which
// Matrix Market and scipy allow) still meet the invariants below. Rows before
// `from_row` must already hold strictly ascending columns (a reader that
// checked them while reading skips them).
template <class T>
void sort_and_sum_duplicates(CsrRowsOf<T>& rows, std::int64_t from_row = 0);

// Checks the invariants every consumer relies on and throws InputError naming
// `source` (a file name, a generator) when one fails: offsets start at 0, are
// monotone and end at nnz; column indices lie in [0, global_cols); values are
// finite (both parts of a complex one).
template <class T>
void validate(const CsrRowsOf<T>& rows, const std::string& source);

}  // namespace blockeigs
