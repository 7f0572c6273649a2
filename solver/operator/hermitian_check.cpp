// The distributed Hermitian check (symmetry_check.hpp's check_hermitian): A =
// A^H exactly when Re A is symmetric, Im A antisymmetric and the diagonal
// real, so two passes of the symmetric check (on the device where it has
// room) over real rows with A's pattern decide it.
#include <mpi.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs::solver {
namespace {

// Rows with A's pattern and part(A(i, j), i, j) as values.
template <class Part>
CsrRows real_rows(const ComplexCsrRows& rows, Part part) {
  CsrRows out{rows.global_rows, rows.global_cols, rows.first_row, rows.row_offsets, rows.col_indices, {}};
  out.values.resize(rows.values.size());
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t p = rows.row_offsets[i]; p < rows.row_offsets[i + 1]; ++p)
      out.values[p] = part(rows.values[p], rows.first_row + i, rows.col_indices[p]);
  return out;
}

std::string not_hermitian(const std::string& what, const std::string& detail) {
  return what + ": the matrix is not Hermitian: " + detail +
         " (zero-based indices); block-eigs and block-cg need a Hermitian matrix";
}

}  // namespace

std::string imaginary_diagonal_message(const std::string& what, std::int64_t row, double imaginary,
                                       const std::string& symbol) {
  std::ostringstream text;
  text << symbol << "(" << row << ", " << row << ") has the imaginary part " << imaginary;
  return not_hermitian(what, text.str());
}

std::string real_part_message(const std::string& what, std::int64_t row, std::int64_t col, double value,
                              double transpose, const std::string& symbol) {
  std::ostringstream text;
  text << "Re " << symbol << "(" << row << ", " << col << ") = " << value << " but Re " << symbol << "(" << col << ", "
       << row << ") = " << transpose;
  return not_hermitian(what, text.str());
}

std::string imaginary_part_message(const std::string& what, std::int64_t row, std::int64_t col, double value,
                                   double transpose, const std::string& symbol) {
  std::ostringstream text;  // + 0.0: a missing partner's 0, negated, prints as 0, not -0
  text << "Im " << symbol << "(" << row << ", " << col << ") = " << value + 0.0 << " and Im " << symbol << "(" << col
       << ", " << row << ") = " << transpose + 0.0 << " are not opposite";
  return not_hermitian(what, text.str());
}

void check_hermitian(MPI_Comm comm, const ComplexCsrRows& rows, const RowPartition& partition, const std::string& what,
                     const dense::Context* device, const std::string& symbol) {
  // The diagonal: the smallest row whose entry has an imaginary part.
  std::int64_t mine = std::numeric_limits<std::int64_t>::max(), first = mine;
  double imaginary = 0;
  for (std::int64_t i = 0; i < rows.local_rows() && mine == first; ++i)
    for (std::int64_t p = rows.row_offsets[i]; p < rows.row_offsets[i + 1]; ++p)
      if (rows.col_indices[p] == rows.first_row + i && rows.values[p].imag() != 0) {
        mine = rows.first_row + i;
        imaginary = rows.values[p].imag();
      }
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT64_T, MPI_MIN, comm));
  collectively(comm, [&] {
    if (first != std::numeric_limits<std::int64_t>::max() && mine == first)
      throw InputError(imaginary_diagonal_message(what, first, imaginary, symbol));
  });
  check_symmetric(comm, real_rows(rows, [](std::complex<double> a, auto, auto) { return a.real(); }), partition, what,
                  "Re " + symbol, nullptr, device, [&](std::int64_t r, std::int64_t c, double v, double t) {
                    return real_part_message(what, r, c, v, t, symbol);
                  });
  // sign(j - i) Im A(i, j) is symmetric exactly where Im A is antisymmetric.
  const auto signed_imaginary = [](std::complex<double> a, std::int64_t i, std::int64_t j) {
    return j > i ? a.imag() : -a.imag();
  };
  check_symmetric(comm, real_rows(rows, signed_imaginary), partition, what, "Im " + symbol, nullptr, device,
                  [&](std::int64_t r, std::int64_t c, double v, double t) {
                    return imaginary_part_message(what, r, c, c > r ? v : -v, r > c ? t : -t, symbol);
                  });
}

}  // namespace blockeigs::solver
