// blocks_overlap, the O(1) aliasing test of LinearOperator::apply: exact for
// blocks with the same row pitch, conservative otherwise.
#include <gtest/gtest.h>

#include <vector>

#include "solver/base/linear_operator.hpp"

namespace blockeigs {
namespace {

using solver::BlockExtent;
using solver::blocks_overlap;

template <class T>
BlockExtent block(const std::vector<T>& v, std::int64_t offset, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return BlockExtent::of(dense::ConstDenseView<T>(Space::host, rows, cols, ld, v.data() + offset));
}

TEST(BlockOverlap, SamePitch) {
  std::vector<double> v(200);
  EXPECT_TRUE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 0, 10, 4, 8)));   // the same block
  EXPECT_FALSE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 4, 10, 4, 8)));  // side by side
  EXPECT_FALSE(blocks_overlap(block(v, 4, 10, 4, 8), block(v, 0, 10, 4, 8)));
  EXPECT_TRUE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 3, 10, 4, 8)));    // one column shared
  EXPECT_TRUE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 8, 10, 4, 8)));    // one row down
  EXPECT_FALSE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 80, 10, 4, 8)));  // rows after
  EXPECT_FALSE(blocks_overlap(block(v, 0, 10, 4, 8), block(v, 76, 10, 4, 8)));  // ends where the other begins
  // Rows that run past a grid row: columns 6-9 of pitch 8 wrap to 0-1.
  EXPECT_TRUE(blocks_overlap(block(v, 6, 10, 4, 8), block(v, 0, 10, 2, 8)));
  EXPECT_FALSE(blocks_overlap(block(v, 6, 10, 4, 8), block(v, 2, 10, 2, 8)));
  EXPECT_FALSE(blocks_overlap(block(v, 6, 9, 4, 8), block(v, 66, 1, 2, 8)));  // between the two pieces of row 8
  EXPECT_TRUE(blocks_overlap(block(v, 6, 9, 4, 8), block(v, 65, 1, 2, 8)));
}

TEST(BlockOverlap, SingleRowsEmptyBlocksAndMixedTypes) {
  std::vector<double> v(200);
  EXPECT_FALSE(blocks_overlap(block(v, 4, 1, 4, 4), block(v, 0, 10, 4, 8)));  // one row, in the gap
  EXPECT_TRUE(blocks_overlap(block(v, 3, 1, 2, 2), block(v, 0, 10, 4, 8)));
  EXPECT_FALSE(blocks_overlap(block(v, 0, 0, 4, 8), block(v, 0, 10, 4, 8)));  // empty
  EXPECT_FALSE(blocks_overlap(block(v, 0, 10, 0, 8), block(v, 0, 10, 4, 8)));
  // fp32 rows of 8 values are the bytes of 4 doubles.
  const auto* f = reinterpret_cast<const float*>(v.data());
  const auto floats = [&](std::int64_t offset, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return BlockExtent::of(dense::ConstDenseView<float>(Space::host, rows, cols, ld, f + offset));
  };
  EXPECT_TRUE(blocks_overlap(floats(0, 10, 8, 16), block(v, 0, 10, 4, 8)));
  EXPECT_FALSE(blocks_overlap(floats(0, 10, 8, 16), block(v, 4, 10, 4, 8)));
  // Different pitches whose byte ranges meet: taken to overlap.
  EXPECT_TRUE(blocks_overlap(block(v, 0, 10, 2, 8), block(v, 2, 10, 2, 12)));
  // Disjoint byte ranges never overlap.
  EXPECT_FALSE(blocks_overlap(block(v, 0, 5, 2, 8), block(v, 100, 5, 2, 12)));
}

}  // namespace
}  // namespace blockeigs
