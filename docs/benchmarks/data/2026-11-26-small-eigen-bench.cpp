// Bench for data/2026-11-26-symmetric-eigen-threads.patch and -team.patch (neither kept; call 8 ran a first version
// with the sizes 60-480 and no hashes). Built on the GPU machine against the cuda build:
//   g++ -O3 -std=c++20 -fopenmp -DOMPI_SKIP_MPICXX -I. -I/usr/lib/x86_64-linux-gnu/openmpi/include THIS.cpp
//   build/cuda/solver/libblockeigs_solver.a build/cuda/core/libblockeigs_core.a -lmpi_cxx -lmpi
// symmetric_eigen at LOBPCG's projected sizes on 1 to 16 host threads (median ms), and a hash of the output bits
// per size and thread count (the same on every thread count, and against the base library for the serial sizes).
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "solver/symmetric_eigen.hpp"
using namespace blockeigs::solver;
static std::uint64_t hash_bits(const SymmetricEigen& e) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const double* p, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) { std::uint64_t b; std::memcpy(&b, p + i, 8); h = (h ^ b) * 1099511628211ull; }
  };
  mix(e.values.data(), e.values.size());
  mix(e.vectors.data(), std::size_t(e.vectors.rows() * e.vectors.cols()));
  return h;
}
int main(int argc, char** argv) {
  const bool hashes_only = argc > 1;
  for (int n : {20, 53, 60, 90, 120, 150, 160, 200, 240, 300, 375, 480}) {
    const int count = n / 3;
    std::mt19937_64 rng(n);
    std::normal_distribution<double> nd;
    HostMatrix M(n, n);
    for (int i = 0; i < n; ++i) for (int j = 0; j <= i; ++j) M(i, j) = M(j, i) = nd(rng);
    if (hashes_only) { omp_set_num_threads(1); std::printf("n %d hash %016llx\n", n, (unsigned long long)hash_bits(symmetric_eigen(M, 0, count))); continue; }
    std::printf("n %4d count %4d:", n, count);
    std::uint64_t first_hash = 0;
    for (int t : {1, 2, 4, 8, 16}) {
      omp_set_num_threads(t);
      const std::uint64_t h = hash_bits(symmetric_eigen(M, 0, count));
      if (t == 1) first_hash = h;
      std::vector<double> times;
      const int reps = n <= 150 ? 200 : 30;
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        SymmetricEigen x = symmetric_eigen(M, 0, count);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
      }
      std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
      std::printf("  t%-2d %8.3f%s", t, times[reps / 2], h == first_hash ? "" : " (bits differ!)");
    }
    std::printf("\n");
  }
}
