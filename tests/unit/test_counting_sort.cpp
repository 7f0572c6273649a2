#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/counting_sort.hpp"

namespace blockeigs {
namespace {

// The positions stably sorted by key, and each bucket's start: the reference.
void reference(const std::vector<std::int64_t>& key, std::int64_t buckets, std::vector<std::int64_t>& order,
               std::vector<std::int64_t>& start) {
  order.resize(key.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
  start.assign(static_cast<std::size_t>(buckets + 1), 0);
  for (const std::int64_t k : key) ++start[k + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
}

TEST(CountingSort, MatchesAStableSortForAnyThreadCount) {
  std::mt19937_64 random(7);
  const int before = omp_get_max_threads();
  for (const std::int64_t n : {0, 1, 2, 7, 1000, 100003})
    for (const std::int64_t buckets : {1, 2, 5, 128, 4099}) {
      std::vector<std::int64_t> key(static_cast<std::size_t>(n));
      // Skewed keys: most in a few buckets, many buckets empty.
      for (auto& k : key)
        k = static_cast<std::int64_t>(random() % 3 == 0 ? random() % buckets : random() % 2 % buckets);
      std::vector<std::int64_t> want_order, want_start;
      reference(key, buckets, want_order, want_start);
      for (const int threads : {1, 3, 8}) {
        omp_set_num_threads(threads);
        std::vector<std::int64_t> order{42}, start{42};  // stale contents are replaced
        counting_sort(key.data(), n, buckets, order, start);
        EXPECT_EQ(order, want_order) << "n " << n << ", buckets " << buckets << ", threads " << threads;
        EXPECT_EQ(start, want_start) << "n " << n << ", buckets " << buckets << ", threads " << threads;
      }
    }
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace blockeigs
