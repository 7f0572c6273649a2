#include "solver/operator/row_partition.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace blockeigs::solver {

RowPartition::RowPartition(std::vector<std::int64_t> first_rows) : first_rows_(std::move(first_rows)) {
  BLOCKEIGS_ASSERT(first_rows_.size() >= 2 && first_rows_.front() == 0);
  BLOCKEIGS_ASSERT(std::is_sorted(first_rows_.begin(), first_rows_.end()));
}

RowPartition RowPartition::balanced(const std::vector<std::int64_t>& row_offsets, int ranks) {
  BLOCKEIGS_ASSERT(ranks >= 1 && !row_offsets.empty());
  const std::int64_t rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  // cost(r) = row_offsets[r] + r is the cost of rows [0, r): monotone, so each
  // boundary is a binary search for the first row whose prefix cost reaches
  // the rank's share.
  const std::int64_t total = row_offsets[rows] + rows;
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, rows);
  first[0] = 0;
  for (int p = 1; p < ranks; ++p) {
    const long double target = static_cast<long double>(total) * p / ranks;
    std::int64_t lo = first[p - 1], hi = rows;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<long double>(row_offsets[mid] + mid) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    // Take the boundary on whichever side of the target is closer.
    if (lo > first[p - 1]) {
      const long double below = target - (row_offsets[lo - 1] + (lo - 1));
      const long double above = (row_offsets[lo] + lo) - target;
      if (below < above) --lo;
    }
    first[p] = lo;
  }
  return RowPartition(std::move(first));
}

RowPartition RowPartition::uniform(std::int64_t rows, int ranks) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int p = 0; p <= ranks; ++p) first[p] = rows * p / ranks;
  return RowPartition(std::move(first));
}

int RowPartition::owner(std::int64_t row) const {
  BLOCKEIGS_ASSERT(row >= 0 && row < global_rows());
  auto it = std::upper_bound(first_rows_.begin(), first_rows_.end(), row);
  return static_cast<int>(it - first_rows_.begin()) - 1;
}

}  // namespace blockeigs::solver
