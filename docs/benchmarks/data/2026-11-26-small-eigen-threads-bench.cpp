// Bench for data/2026-11-26-symmetric-eigen-threads.patch (not kept). Built on the GPU machine against the cuda
// build: g++ -O3 -std=c++20 -fopenmp -DOMPI_SKIP_MPICXX -I. -I/usr/lib/x86_64-linux-gnu/openmpi/include THIS.cpp
//   build/cuda/solver/libblockeigs_solver.a build/cuda/core/libblockeigs_core.a -lmpi_cxx -lmpi
// symmetric_eigen at LOBPCG's projected sizes (3 x block), on 1 to 16 host threads: median of reps, ms.
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "solver/symmetric_eigen.hpp"
using namespace blockeigs::solver;
int main() {
  for (int n : {60, 90, 120, 150, 240, 375, 480}) {
    const int count = n / 3;
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nd;
    HostMatrix M(n, n);
    for (int i = 0; i < n; ++i) for (int j = 0; j <= i; ++j) M(i, j) = M(j, i) = nd(rng);
    std::printf("n %4d count %4d:", n, count);
    SymmetricEigen ref;
    for (int t : {1, 2, 4, 8, 16}) {
      omp_set_num_threads(t);
      SymmetricEigen e = symmetric_eigen(M, 0, count);
      if (t == 1) ref = e;
      const bool same = std::memcmp(ref.vectors.data(), e.vectors.data(), sizeof(double) * n * count) == 0;
      std::vector<double> times;
      const int reps = n <= 150 ? 200 : 20;
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        SymmetricEigen x = symmetric_eigen(M, 0, count);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
      }
      std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
      std::printf("  t%-2d %8.3f%s", t, times[reps / 2], same ? "" : " (bits differ!)");
    }
    std::printf("\n");
  }
}
