#include "solver/blocks/host_blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace blockeigs::solver {

std::string host_blas_kernels() {
  const char* name = openblas_get_corename();
  return name ? std::string(name) : std::string("unknown");
}

bool cpu_has_avx2_fma() {
#if defined(__GNUC__) && defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool blas_kernels_older_than_cpu(const std::string& kernels, bool cpu_avx2_fma) {
  if (!cpu_avx2_fma) return false;
  // OpenBLAS's x86-64 targets that predate AVX2 (its TargetList.txt).
  static constexpr std::array<std::string_view, 20> pre_avx2 = {
      "katmai",    "coppermine", "northwood", "prescott",    "banias",      "atom",    "core2",
      "penryn",    "dunnington", "nehalem",   "sandybridge", "athlon",      "opteron", "opteron_sse3",
      "barcelona", "bobcat",     "bulldozer", "piledriver",  "steamroller", "nano"};
  std::string lower(kernels);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::find(pre_avx2.begin(), pre_avx2.end(), lower) != pre_avx2.end();
}

}  // namespace blockeigs::solver
