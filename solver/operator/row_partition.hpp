// Row partition of a global matrix over ranks: contiguous row blocks balanced
// by nonzeros plus rows (so both the SpMM's nonzero traffic and its per-row
// dense traffic are spread evenly). A rank may own zero rows.
#pragma once

#include <cstdint>
#include <vector>

namespace blockeigs::solver {

class RowPartition {
 public:
  RowPartition() = default;
  // first_rows has ranks + 1 entries, non-decreasing, from 0 to the row count.
  explicit RowPartition(std::vector<std::int64_t> first_rows);

  // Balanced by cost(row) = nnz(row) + 1, from the global row offsets (rows + 1 entries).
  static RowPartition balanced(const std::vector<std::int64_t>& row_offsets, int ranks);
  // Equal row counts (for dense blocks without a matrix).
  static RowPartition uniform(std::int64_t rows, int ranks);

  int ranks() const { return static_cast<int>(first_rows_.size()) - 1; }
  std::int64_t global_rows() const { return first_rows_.back(); }
  std::int64_t begin(int rank) const { return first_rows_[rank]; }
  std::int64_t end(int rank) const { return first_rows_[rank + 1]; }
  std::int64_t rows(int rank) const { return end(rank) - begin(rank); }
  // The rank that owns a global row (the last rank with begin <= row when empty ranks share a boundary).
  int owner(std::int64_t row) const;
  const std::vector<std::int64_t>& first_rows() const { return first_rows_; }

 private:
  std::vector<std::int64_t> first_rows_{0};
};

}  // namespace blockeigs::solver
