// A stable counting sort of positions by small integer keys, in parallel:
// each thread counts its share of the keys, one pass turns the counts into
// every (bucket, thread) pair's first place, and each thread places its share.
// The result does not depend on the number of threads.
#pragma once

#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace blockeigs {

// order: the positions 0 .. n-1 by key[i] in [0, buckets), equal keys in
// position order; start: each bucket's first place in order, and n last.
inline void counting_sort(const std::int64_t* key, std::int64_t n, std::int64_t buckets,
                          std::vector<std::int64_t>& order, std::vector<std::int64_t>& start) {
#ifdef _OPENMP
  const int most = omp_get_max_threads();
#else
  const int most = 1;
#endif
  std::vector<std::int64_t> count(static_cast<std::size_t>(most * buckets), 0);
  order.resize(static_cast<std::size_t>(n));
  start.assign(static_cast<std::size_t>(buckets + 1), 0);
#pragma omp parallel num_threads(most)
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
#else
    const int t = 0, threads = 1;
#endif
    const std::int64_t first = n * t / threads, last = n * (t + 1) / threads;
    std::int64_t* mine = count.data() + t * buckets;
    for (std::int64_t i = first; i < last; ++i) ++mine[key[i]];
#pragma omp barrier
#pragma omp single
    {
      std::int64_t place = 0;
      for (std::int64_t b = 0; b < buckets; ++b) {
        start[b] = place;
        for (int u = 0; u < threads; ++u) {
          const std::int64_t c = count[u * buckets + b];
          count[u * buckets + b] = place;
          place += c;
        }
      }
      start[buckets] = place;
    }
    for (std::int64_t i = first; i < last; ++i) order[mine[key[i]]++] = i;
  }
}

}  // namespace blockeigs
