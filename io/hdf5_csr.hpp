// HDF5 CSR matrices. Layout (ARCHITECTURE.md section 3): a group (default
// /A) with datasets indptr (int64, rows+1), indices (int32 or int64), data
// (float64 or float32, or complex: a compound of members r and i of one of
// them, as h5py and NumPy write complex128 and complex64) and an int64[2]
// attribute `shape`. Files written by
// h5sparse (attribute h5sparse_shape) and anndata (attribute shape,
// encoding-type csr_matrix) are read as well.
//
// Readers open the file independently on each rank (this works with serial
// and parallel HDF5 alike) and read only the rows asked for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"

namespace blockeigs::io {

struct Hdf5CsrInfo {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  bool complex = false;  // data holds complex values
};

// The entries (and offsets) of a read piece: small enough to stay in the
// CPU's L2 (docs/benchmarks/time-to-solution.md#read-pieces). Tests place
// their edge cases across piece boundaries.
inline constexpr std::int64_t hdf5_read_piece = std::int64_t{1} << 16;

// Reads the shape and checks that the datasets exist and agree with it
// (indptr has rows+1 entries, indices and data have the same length).
Hdf5CsrInfo read_hdf5_csr_info(const std::string& path, const std::string& group);

// The whole indptr (rows+1 entries), checked: starts at 0, monotone, ends at nnz.
std::vector<std::int64_t> read_hdf5_row_offsets(const std::string& path, const std::string& group);

// Rows [row_begin, row_end), checked: offsets monotone and within nnz, column
// indices in range, values finite. Errors name the file, dataset and row.
// Columns come back sorted within each row and repeated ones summed. Entries
// are read in pieces into staging that stays in cache while it is checked and
// appended (int32 indices and float32 values widened there), so the result's
// arrays are written once and the host holds little beyond them.
// The real reader refuses complex data (naming the dataset); the complex one
// reads real data with imaginary parts 0.
CsrRows read_hdf5_csr_rows(const std::string& path, const std::string& group, std::int64_t row_begin,
                           std::int64_t row_end);
ComplexCsrRows read_hdf5_complex_csr_rows(const std::string& path, const std::string& group, std::int64_t row_begin,
                                          std::int64_t row_end);

// What write_hdf5_csr does with a file that is already at its path.
enum class ExistingFile {
  replace,        // a new file replaces it
  add,            // the matrix is added to it as its group; a group already there is an InputError
  replace_group,  // the matrix is added to it, replacing only what was at its group's name
};

// Writes a whole matrix (first_row == 0) to `group` of the file at `path`:
// a new file, or with `add` / `replace_group` the existing one with the
// group added (its other contents kept). The file is written under a
// temporary name (a copy of the old file) and renamed, so a failure never
// leaves a partial file behind and the old file stays as it was. An existing
// file that is not HDF5 is refused unless `replace`.
// Complex values are written as h5py writes complex128.
void write_hdf5_csr(const std::string& path, const std::string& group, const CsrRows& whole,
                    ExistingFile mode = ExistingFile::replace);
void write_hdf5_csr(const std::string& path, const std::string& group, const ComplexCsrRows& whole,
                    ExistingFile mode = ExistingFile::replace);

// Whether the file at `path` exists and holds `group` (for "/": any of the
// CSR datasets at its root). An existing file that is not HDF5 is an InputError.
bool hdf5_file_holds(const std::string& path, const std::string& group);

}  // namespace blockeigs::io
