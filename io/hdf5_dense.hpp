// Dense row-major blocks in HDF5 (start blocks for LOBPCG, right-hand sides
// for block CG): a two-dimensional float dataset of rows x columns; each rank
// reads only its own rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blockeigs::io {

struct DenseRows {
  std::int64_t global_rows = 0;
  std::int64_t cols = 0;
  std::vector<double> values;  // (row_end - row_begin) x cols, row-major
};

// Rows [row_begin, row_end) of `dataset` in `path`. Throws InputError naming
// the file and dataset when it is missing, not 2-D floating point, has other
// than `expected_rows` rows (when expected_rows >= 0), or holds NaN/Inf.
DenseRows read_hdf5_dense_rows(const std::string& path, const std::string& dataset, std::int64_t row_begin,
                               std::int64_t row_end, std::int64_t expected_rows = -1);

}  // namespace blockeigs::io
