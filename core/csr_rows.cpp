#include "core/csr_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>

#include "core/error.hpp"

namespace blockeigs {

namespace {

bool finite(double x) { return std::isfinite(x); }
bool finite(std::complex<double> x) { return std::isfinite(x.real()) && std::isfinite(x.imag()); }

}  // namespace

template <class T>
CsrRowsOf<T> slice_rows(const CsrRowsOf<T>& whole, std::int64_t row_begin, std::int64_t row_end) {
  if (whole.first_row != 0)
    fail_input("slice_rows: the matrix holds rows from ", whole.first_row, ", not a whole matrix");
  if (row_begin < 0 || row_begin > row_end || row_end > whole.local_rows())
    fail_input("slice_rows: rows [", row_begin, ", ", row_end, ") are outside the matrix's ", whole.local_rows(),
               " rows");

  CsrRowsOf<T> part;
  part.global_rows = whole.global_rows;
  part.global_cols = whole.global_cols;
  part.first_row = row_begin;
  const std::int64_t base = whole.row_offsets.empty() ? 0 : whole.row_offsets[row_begin];
  const std::int64_t stop = whole.row_offsets.empty() ? 0 : whole.row_offsets[row_end];
  part.row_offsets.reserve(static_cast<std::size_t>(row_end - row_begin + 1));
  for (std::int64_t r = row_begin; r <= row_end; ++r)
    part.row_offsets.push_back(whole.row_offsets.empty() ? 0 : whole.row_offsets[r] - base);
  part.col_indices.assign(whole.col_indices.begin() + base, whole.col_indices.begin() + stop);
  part.values.assign(whole.values.begin() + base, whole.values.begin() + stop);
  return part;
}

template <class T>
void sort_and_sum_duplicates(CsrRowsOf<T>& rows, std::int64_t from_row) {
  if (from_row > 0 && from_row >= rows.local_rows()) return;  // every row is canonical already
  auto* col = rows.col_indices.data();
  auto* val = rows.values.data();
  std::vector<std::pair<std::int64_t, T>> scratch;                     // reused across rows
  std::int64_t write = from_row > 0 ? rows.row_offsets[from_row] : 0;  // rows before stay as they are
  for (std::int64_t r = from_row; r < rows.local_rows(); ++r) {
    const std::int64_t begin = rows.row_offsets[r], end = rows.row_offsets[r + 1];
    // Most rows arrive sorted (SuiteSparse files are column-major); only the others pay.
    if (!std::is_sorted(col + begin, col + end)) {
      scratch.assign(end - begin, {});
      for (std::int64_t p = begin; p < end; ++p) scratch[p - begin] = {col[p], val[p]};
      std::stable_sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::int64_t p = begin; p < end; ++p) std::tie(col[p], val[p]) = scratch[p - begin];
    }
    // Compact in place: `write` never passes `p`, and offset r is no longer read.
    rows.row_offsets[r] = write;
    for (std::int64_t p = begin; p < end; ++p) {
      if (write > rows.row_offsets[r] && col[write - 1] == col[p]) {
        val[write - 1] += val[p];
      } else {
        col[write] = col[p];
        val[write] = val[p];
        ++write;
      }
    }
  }
  if (!rows.row_offsets.empty()) rows.row_offsets.back() = write;
  rows.col_indices.resize(static_cast<std::size_t>(write));
  rows.values.resize(static_cast<std::size_t>(write));
}

template <class T>
void validate(const CsrRowsOf<T>& rows, const std::string& source) {
  if (rows.global_rows < 0 || rows.global_cols < 0)
    fail_input(source, ": the matrix size ", rows.global_rows, " x ", rows.global_cols, " is negative");
  const std::int64_t local = rows.local_rows();
  if (rows.first_row < 0 || rows.first_row + local > rows.global_rows)
    fail_input(source, ": rows [", rows.first_row, ", ", rows.first_row + local, ") are outside the matrix's ",
               rows.global_rows, " rows");
  if (rows.values.size() != rows.col_indices.size())
    fail_input(source, ": ", rows.col_indices.size(), " column indices but ", rows.values.size(), " values");

  const auto& offsets = rows.row_offsets;
  if (offsets.empty()) {
    // No offsets at all is how an empty block of rows may look; it must hold nothing.
    if (rows.nnz() != 0) fail_input(source, ": no row offsets, but ", rows.nnz(), " entries");
    return;
  }
  if (offsets.front() != 0) fail_input(source, ": row offsets start at ", offsets.front(), ", not 0");
  if (offsets.back() != rows.nnz())
    fail_input(source, ": row offsets end at ", offsets.back(), " but there are ", rows.nnz(), " entries");
  // Offsets first: once they are monotone from 0 to nnz, every entry access is in bounds.
  for (std::int64_t r = 0; r < local; ++r)
    if (offsets[r + 1] < offsets[r])
      fail_input(source, ": row offsets decrease at row ", rows.first_row + r, " (", offsets[r], " then ",
                 offsets[r + 1], ")");
  for (std::int64_t r = 0; r < local; ++r) {
    const std::int64_t global_row = rows.first_row + r;
    const std::int64_t begin = offsets[r], end = offsets[r + 1];
    for (std::int64_t p = begin; p < end; ++p) {
      const std::int64_t col = rows.col_indices[p];
      if (col < 0 || col >= rows.global_cols)
        fail_input(source, ": row ", global_row, " has column ", col, ", but the matrix has ", rows.global_cols,
                   " columns");
      if (p > begin && col <= rows.col_indices[p - 1])
        fail_input(source, ": row ", global_row, " has columns out of order or repeated (", rows.col_indices[p - 1],
                   " then ", col, ")");
      if (!finite(rows.values[p]))
        fail_input(source, ": row ", global_row, ", column ", col, " holds ", rows.values[p]);
    }
  }
}

CsrRows magnitudes(const ComplexCsrRows& rows) {
  CsrRows out;
  out.global_rows = rows.global_rows;
  out.global_cols = rows.global_cols;
  out.first_row = rows.first_row;
  out.row_offsets = rows.row_offsets;
  out.col_indices = rows.col_indices;
  out.values.resize(rows.values.size());
  for (std::size_t k = 0; k < rows.values.size(); ++k) out.values[k] = std::abs(rows.values[k]);
  return out;
}

template CsrRows slice_rows(const CsrRows&, std::int64_t, std::int64_t);
template ComplexCsrRows slice_rows(const ComplexCsrRows&, std::int64_t, std::int64_t);
template void sort_and_sum_duplicates(CsrRows&, std::int64_t);
template void sort_and_sum_duplicates(ComplexCsrRows&, std::int64_t);
template void validate(const CsrRows&, const std::string&);
template void validate(const ComplexCsrRows&, const std::string&);

}  // namespace blockeigs
