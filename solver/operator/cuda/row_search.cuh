// Shared by the device split and the symmetry check's lookups: a grid for a
// thread per item, and the search in a row's ascending columns.
#pragma once

#include <algorithm>
#include <cstdint>

namespace blockeigs::solver::row_search {

constexpr int threads = 256;

// Blocks of `threads` for one thread per item (grid-stride loops take the rest).
inline int blocks_for(std::int64_t work) {
  return static_cast<int>(std::clamp<std::int64_t>((work + threads - 1) / threads, 1, 1 << 16));
}

// The first position in [lo, hi) whose column is >= value (int32 or int64 columns).
template <class Index>
__device__ inline std::int64_t first_at_least(const Index* col, std::int64_t lo, std::int64_t hi, std::int64_t value) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (col[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace blockeigs::solver::row_search
