// Matrix Market reader: coordinate format; real, integer, pattern and complex
// fields; general, symmetric and Hermitian symmetry; 1-based indices; plain or
// gzip-compressed (.mtx.gz). Symmetric and Hermitian files store one triangle:
// the reader expands both (a Hermitian file's other one conjugated). Complex
// files are read only as complex matrices.
#pragma once

#include <optional>
#include <string>

#include "core/csr_rows.hpp"

namespace blockeigs::io {

enum class MatrixMarketField { real, integer, pattern, complex };
enum class MatrixMarketSymmetry { general, symmetric, hermitian };

struct MatrixMarketFile {
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  CsrRows matrix;  // all rows, duplicates summed, columns sorted within rows
};

struct ComplexMatrixMarketFile {
  MatrixMarketField field = MatrixMarketField::complex;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  ComplexCsrRows matrix;  // all rows, duplicates summed, columns sorted within rows
};

// Reads the whole file. Pattern entries get the value 1. Throws InputError
// naming the file and line for header errors, bad sizes, out-of-range
// indices, too few or too many entries, NaN/Inf values, and (the real
// reader) a complex field; a Hermitian file's diagonal entry with an
// imaginary part. The complex reader takes every field (real values with
// imaginary part 0).
MatrixMarketFile read_matrix_market(const std::string& path);
ComplexMatrixMarketFile read_complex_matrix_market(const std::string& path);

// Throws InputError naming `source` and the first entry (i, j) whose partner
// (j, i) is not its conjugate (beyond 1e-12 of the largest entry); `whole`
// holds every row of a square matrix.
void check_hermitian(const ComplexCsrRows& whole, const std::string& source);

// What the banner and the size line say, read without the entries (for the
// memory plan): nullopt where the file cannot be opened or its header is
// not what read_matrix_market accepts, which then says why.
struct MatrixMarketSize {
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;     // as declared; a symmetric file stores one triangle
  std::int64_t file_bytes = 0;  // on disk (compressed for .gz)
  bool symmetric = false;       // symmetric or Hermitian
  bool complex = false;         // field complex
  bool compressed = false;
};
std::optional<MatrixMarketSize> read_matrix_market_size(const std::string& path);

// Writes a general real coordinate file (used by tests and tools).
void write_matrix_market(const std::string& path, const CsrRows& whole);

}  // namespace blockeigs::io
