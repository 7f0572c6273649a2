#include "io/renumbering.hpp"

namespace blockeigs::io {
namespace {

constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// A balanced Feistel network on the smallest domain of 2 * half_bits_ bits
// that holds n, made a bijection of [0, n) by cycle walking: values that land
// at or past n are encrypted again until they fall inside. The domain is
// under 4n, so a walk takes fewer than 4 steps on average.
RandomPermutation::RandomPermutation(std::int64_t n, std::uint64_t seed) : n_(n) {
  while (half_bits_ < 31 && (std::uint64_t{1} << (2 * half_bits_)) < static_cast<std::uint64_t>(n)) ++half_bits_;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t key = mix(seed ^ 0xA0761D6478BD642Full);
  for (std::uint64_t& k : keys_) k = key = mix(key);
}

std::uint64_t RandomPermutation::round_function(std::uint64_t half, int round) const {
  return mix(half ^ keys_[round]) & half_mask_;
}

std::uint64_t RandomPermutation::encrypt(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    const std::uint64_t next = left ^ round_function(right, r);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint64_t RandomPermutation::decrypt(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    const std::uint64_t previous = right ^ round_function(left, r);
    right = left;
    left = previous;
  }
  return (left << half_bits_) | right;
}

std::int64_t RandomPermutation::natural_of(std::int64_t renumbered) const {
  auto x = static_cast<std::uint64_t>(renumbered);
  do x = encrypt(x);
  while (x >= static_cast<std::uint64_t>(n_));
  return static_cast<std::int64_t>(x);
}

std::int64_t RandomPermutation::renumbered_of(std::int64_t natural) const {
  auto x = static_cast<std::uint64_t>(natural);
  do x = decrypt(x);
  while (x >= static_cast<std::uint64_t>(n_));
  return static_cast<std::int64_t>(x);
}

}  // namespace blockeigs::io
