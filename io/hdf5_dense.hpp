// Dense row-major blocks in HDF5 (start blocks for LOBPCG, right-hand sides
// for block CG, constraint blocks, checkpoints): a two-dimensional float
// dataset of rows x columns, or a vector (one column); each rank reads only
// its own rows. And the root attributes that
// say what a result or checkpoint file holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blockeigs::io {

struct DenseRows {
  std::int64_t global_rows = 0;
  std::int64_t cols = 0;
  // (row_end - row_begin) x cols, row-major; complex values as (real, imaginary) pairs, 2 cols doubles a row.
  std::vector<double> values;
  bool complex = false;
  std::int64_t doubles_per_row() const { return complex ? 2 * cols : cols; }
};

// Which values a caller takes from a dense dataset: real ones only (a complex dataset refused, naming it), or
// complex ones too (the compound of `r` and `i` that h5py and NumPy write for complex64 and complex128).
enum class DenseValues { real_only, real_or_complex };

// Rows [row_begin, row_end) of `dataset` in `path`. Throws InputError naming
// the file and dataset when it is missing, not 2-D floating point (or complex, where `values` allows it), has
// other than `expected_rows` rows (when expected_rows >= 0), or holds NaN/Inf.
DenseRows read_hdf5_dense_rows(const std::string& path, const std::string& dataset, std::int64_t row_begin,
                               std::int64_t row_end, std::int64_t expected_rows = -1,
                               DenseValues values = DenseValues::real_only);

// A scalar attribute of the file's root group (what result files and
// checkpoints record about a run). Throws InputError naming the file and the
// attribute when it is missing or of another kind.
std::int64_t read_root_integer(const std::string& path, const std::string& name);
std::string read_root_string(const std::string& path, const std::string& name);
// The same, empty where the attribute is not there (files written before it was).
std::optional<std::string> read_root_string_if_present(const std::string& path, const std::string& name);

}  // namespace blockeigs::io
