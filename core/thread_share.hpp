// Work split into contiguous shares, one per thread of an OpenMP parallel
// region, in thread order: for loops whose threads each keep a cursor or
// write one contiguous range.
#pragma once

#include <omp.h>

#include <cstdint>
#include <utility>

namespace blockeigs {

// The calling thread's share [first, last) of n items (inside a parallel region; all of them outside one).
inline std::pair<std::int64_t, std::int64_t> thread_share(std::int64_t n) {
  const std::int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
  return {n * t / threads, n * (t + 1) / threads};
}

}  // namespace blockeigs
