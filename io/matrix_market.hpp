// Matrix Market reader: coordinate format; real, integer and pattern fields;
// general and symmetric symmetry; 1-based indices; plain or gzip-compressed
// (.mtx.gz). Symmetric files store one triangle: the reader expands both.
#pragma once

#include <string>

#include "io/csr_rows.hpp"

namespace blockeigs::io {

enum class MatrixMarketField { real, integer, pattern };
enum class MatrixMarketSymmetry { general, symmetric };

struct MatrixMarketFile {
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  CsrRows matrix;  // all rows, duplicates summed, columns sorted within rows
};

// Reads the whole file. Pattern entries get the value 1. Throws InputError
// naming the file and line for header errors, bad sizes, out-of-range
// indices, too few or too many entries, NaN/Inf values.
MatrixMarketFile read_matrix_market(const std::string& path);

// Writes a general real coordinate file (used by tests and tools).
void write_matrix_market(const std::string& path, const CsrRows& whole);

}  // namespace blockeigs::io
