// A SuiteSparse matrix from ../shared/data/matrices with its eigenvalues by
// LAPACK's dense solver (dsyevd), for the tests that check a sparse method
// against a dense reference. Tests including it link blockeigs_lapack.
#pragma once

#include <lapacke.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/matrix_market.hpp"
#include "tests/support/lobpcg_problems.hpp"

namespace blockeigs::test {

// `name` (a file of BLOCKEIGS_DATA_DIR) with every eigenvalue, ascending; none where the file is not here.
inline std::optional<lobpcg_problems::Problem> with_dense_eigenvalues(const std::string& name) {
  const std::filesystem::path file = std::filesystem::path(BLOCKEIGS_DATA_DIR) / name;
  if (!std::filesystem::exists(file)) return std::nullopt;
  lobpcg_problems::Problem p;
  p.whole = io::read_matrix_market(file.string()).matrix;
  const auto n = static_cast<lapack_int>(p.whole.global_rows);
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0), values(n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t q = p.whole.row_offsets[i]; q < p.whole.row_offsets[i + 1]; ++q)
      dense[i * n + p.whole.col_indices[q]] = p.whole.values[q];
  if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', n, dense.data(), n, values.data()) != 0)
    throw std::runtime_error("LAPACKE_dsyevd failed on " + name);
  p.exact = values;
  return p;
}

}  // namespace blockeigs::test
