// Dense-block values for spmm-bench as a pure function of (seed, row,
// column), so the device fills any layout and the host recomputes any entry
// for the reference check without copying blocks back. Never zero in practice.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace blockeigs::spmm::bench {

// Uniform in [-1, 1).
BLOCKEIGS_HOST_DEVICE inline double bench_value(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(row) * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(col) * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
}

// The imaginary part of a complex block's entry (row, col): another stream.
BLOCKEIGS_HOST_DEVICE inline double bench_value_im(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  return bench_value(seed ^ 0x1D872B41A33C7F5Bull, row, col);
}

}  // namespace blockeigs::spmm::bench
