// A random permutation of [0, n) that any rank can evaluate at any index in
// O(1) memory, in both directions: the generators' `renumber` option uses it
// to number a matrix arbitrarily while each rank still builds only its own
// rows (no O(n) or O(nnz) table, the same permutation on every rank count).
#pragma once

#include <cstdint>

namespace blockeigs::io {

class RandomPermutation {
 public:
  RandomPermutation(std::int64_t n, std::uint64_t seed);

  // perm[i]: the natural index of renumbered index i.
  std::int64_t natural_of(std::int64_t renumbered) const;
  // The inverse: the renumbered index of natural index j.
  std::int64_t renumbered_of(std::int64_t natural) const;

 private:
  static constexpr int kRounds = 6;
  std::uint64_t encrypt(std::uint64_t x) const;
  std::uint64_t decrypt(std::uint64_t x) const;
  std::uint64_t round_function(std::uint64_t half, int round) const;

  std::int64_t n_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::uint64_t keys_[kRounds] = {};
};

}  // namespace blockeigs::io
