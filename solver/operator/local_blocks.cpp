#include "solver/operator/local_blocks.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace blockeigs::solver {

template <class T>
LocalBlocks<T> split_local_rows(const io::CsrRows& rows) {
  const std::int64_t m = rows.local_rows();
  const std::int64_t begin = rows.first_row, end = rows.first_row + m;
  constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
  if (rows.nnz() > int32_max)
    fail_input("one rank holds ", rows.nnz(), " nonzeros; local blocks are limited to 2^31 - 1: ",
               "run with more ranks");

  LocalBlocks<T> out;
  // Pass 1: the halo columns, sorted and unique.
  for (std::int64_t c : rows.col_indices)
    if (c < begin || c >= end) out.halo_columns.push_back(c);
  std::sort(out.halo_columns.begin(), out.halo_columns.end());
  out.halo_columns.erase(std::unique(out.halo_columns.begin(), out.halo_columns.end()),
                         out.halo_columns.end());

  // Pass 2: fill both blocks row by row; columns stay sorted within a row
  // because the renumbering is monotone in each block.
  auto& D = out.diagonal;
  auto& O = out.off_diagonal;
  D.rows = m;
  D.cols = m;
  O.cols = static_cast<std::int64_t>(out.halo_columns.size());
  D.row_offsets.assign(1, 0);
  O.row_offsets.assign(1, 0);
  D.row_offsets.reserve(m + 1);
  out.diagonal_entries.assign(static_cast<std::size_t>(m), T(0));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t c = rows.col_indices[k];
      const T v = static_cast<T>(rows.values[k]);
      if (c >= begin && c < end) {
        D.col_indices.push_back(static_cast<std::int32_t>(c - begin));
        D.values.push_back(v);
        if (c - begin == i) out.diagonal_entries[i] += v;
      } else {
        const auto at = std::lower_bound(out.halo_columns.begin(), out.halo_columns.end(), c);
        O.col_indices.push_back(static_cast<std::int32_t>(at - out.halo_columns.begin()));
        O.values.push_back(v);
      }
    }
    D.row_offsets.push_back(static_cast<std::int32_t>(D.col_indices.size()));
    if (static_cast<std::int32_t>(O.col_indices.size()) != O.row_offsets.back()) {
      O.row_offsets.push_back(static_cast<std::int32_t>(O.col_indices.size()));
      out.off_diagonal_rows.push_back(static_cast<std::int32_t>(i));
    }
  }
  O.rows = static_cast<std::int64_t>(out.off_diagonal_rows.size());
  return out;
}

template LocalBlocks<float> split_local_rows(const io::CsrRows&);
template LocalBlocks<double> split_local_rows(const io::CsrRows&);

}  // namespace blockeigs::solver
