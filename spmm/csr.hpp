// Local CSR matrices: zero-based, int32 row offsets and column indices (so a
// rank's block holds fewer than 2^31 nonzeros), values float or double.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dense/memory.hpp"

namespace blockeigs::spmm {

template <class T>
struct CsrView {
  Space space = Space::host;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const std::int32_t* row_offsets = nullptr;  // rows + 1
  const std::int32_t* col_indices = nullptr;  // nnz
  const T* values = nullptr;                  // nnz

  double mean_row_length() const { return rows > 0 ? double(nnz) / double(rows) : 0.0; }
};

// Host-side CSR arrays, the form in which local matrices are assembled.
template <class T>
struct HostCsr {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int32_t> row_offsets{0};
  std::vector<std::int32_t> col_indices;
  std::vector<T> values;

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
  CsrView<T> view() const {
    return {Space::host, rows, cols, nnz(), row_offsets.data(), col_indices.data(), values.data()};
  }
};

// A CSR matrix owned in one memory space.
template <class T>
class CsrMatrix {
 public:
  CsrMatrix() = default;
  CsrMatrix(Space space, const HostCsr<T>& host)
      : rows_(host.rows),
        cols_(host.cols),
        nnz_(host.nnz()),
        row_offsets_(space, host.row_offsets),
        col_indices_(space, host.col_indices),
        values_(space, host.values) {}
  // Adopts arrays already filled (rows + 1 offsets, nnz columns and values, one space).
  CsrMatrix(std::int64_t rows, std::int64_t cols, dense::Buffer<std::int32_t> row_offsets,
            dense::Buffer<std::int32_t> col_indices, dense::Buffer<T> values)
      : rows_(rows),
        cols_(cols),
        nnz_(static_cast<std::int64_t>(col_indices.size())),
        row_offsets_(std::move(row_offsets)),
        col_indices_(std::move(col_indices)),
        values_(std::move(values)) {}
  // The matrix in `space`: itself where it is there already, else a copy.
  CsrMatrix to_space(Space space) && {
    CsrMatrix out;
    out.rows_ = rows_;
    out.cols_ = cols_;
    out.nnz_ = nnz_;
    out.row_offsets_ = dense::in_space(std::move(row_offsets_), space);
    out.col_indices_ = dense::in_space(std::move(col_indices_), space);
    out.values_ = dense::in_space(std::move(values_), space);
    return out;
  }
  Space space() const { return row_offsets_.space(); }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t nnz() const { return nnz_; }

  CsrView<T> view() const {
    return {space(), rows_, cols_, nnz_, row_offsets_.data(), col_indices_.data(), values_.data()};
  }
  // The values, writable in place (a plan built on the matrix reads them at each product).
  T* values() { return values_.data(); }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t nnz_ = 0;
  dense::Buffer<std::int32_t> row_offsets_;
  dense::Buffer<std::int32_t> col_indices_;
  dense::Buffer<T> values_;
};

}  // namespace blockeigs::spmm
