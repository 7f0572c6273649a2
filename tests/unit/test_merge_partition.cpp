// Host tests of the merge-path partition (spmm/cuda/merge_partition.cuh,
// compiled here by the host compiler): the search against a step-by-step walk
// of the path, the snapped segment boundaries, and the carry plan, by running
// the merge kernel's bookkeeping on the host with exact integer sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "spmm/cuda/merge_partition.cuh"

namespace {

using blockeigs::spmm::cuda::merge_fixup_flat_max_slots;
using blockeigs::spmm::cuda::merge_fixup_tree_rows;
using blockeigs::spmm::cuda::merge_order_across_rows;
using blockeigs::spmm::cuda::merge_path_search;
using blockeigs::spmm::cuda::merge_segment_count;
using blockeigs::spmm::cuda::merge_segment_start;
using blockeigs::spmm::cuda::MergeCarryPlan;
using blockeigs::spmm::cuda::plan_merge_carries;

std::vector<std::int32_t> offsets_from_lengths(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> offsets(lengths.size() + 1, 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) offsets[i + 1] = offsets[i] + lengths[i];
  return offsets;
}

// Row lengths with empty rows, short rows and a few long ones.
std::vector<std::int32_t> skewed_lengths(int rows, std::uint64_t seed, int long_length) {
  std::mt19937_64 engine(seed);
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(rows));
  for (auto& l : lengths) {
    const int kind = static_cast<int>(engine() % 10);
    l = kind < 2 ? 0 : kind < 8 ? static_cast<std::int32_t>(engine() % 12) : static_cast<std::int32_t>(engine() % 200);
  }
  if (rows > 3) lengths[static_cast<std::size_t>(rows / 3)] = long_length;
  return lengths;
}

// Every point of the merge path, in order: (rows finished, nonzeros consumed).
std::vector<std::pair<std::int64_t, std::int64_t>> walk_path(const std::vector<std::int32_t>& offsets) {
  const std::int64_t rows = static_cast<std::int64_t>(offsets.size()) - 1, nnz = offsets.back();
  std::vector<std::pair<std::int64_t, std::int64_t>> path{{0, 0}};
  std::int64_t i = 0, j = 0;
  while (i < rows || j < nnz) {
    if (i < rows && offsets[static_cast<std::size_t>(i) + 1] <= j)
      ++i;  // the row's nonzeros are all consumed: finish it
    else
      ++j;
    path.emplace_back(i, j);
  }
  return path;
}

TEST(MergePathSearch, MatchesAStepByStepWalkOnEveryDiagonal) {
  const std::vector<std::vector<std::int32_t>> cases = {
      {},                     // no rows
      {0, 0, 0},              // only empty rows
      {1, 1, 1, 1},           // rows of length 1
      {5},                    // one row
      {0, 3, 0, 0, 7, 1, 0},  // empty rows between others
      skewed_lengths(300, 1, 900),
  };
  for (const auto& lengths : cases) {
    const auto offsets = offsets_from_lengths(lengths);
    const std::int64_t rows = static_cast<std::int64_t>(lengths.size()), nnz = offsets.back();
    const auto path = walk_path(offsets);
    ASSERT_EQ(static_cast<std::int64_t>(path.size()), rows + nnz + 1);
    for (std::int64_t d = 0; d <= rows + nnz; ++d) {
      const auto c = merge_path_search(d, offsets.data(), rows, nnz);
      EXPECT_EQ(c.row, path[static_cast<std::size_t>(d)].first) << "diagonal " << d;
      EXPECT_EQ(c.nonzero, path[static_cast<std::size_t>(d)].second) << "diagonal " << d;
    }
  }
}

struct Partition {
  std::vector<std::int32_t> row, nonzero, row_start;
};

Partition partition(const std::vector<std::int32_t>& offsets, std::int64_t items, std::int64_t slack) {
  const std::int64_t rows = static_cast<std::int64_t>(offsets.size()) - 1, nnz = offsets.back();
  Partition p;
  for (std::int64_t s = 0; s <= merge_segment_count(rows, nnz, items); ++s) {
    const auto c = merge_segment_start(s, items, slack, offsets.data(), rows, nnz);
    p.row.push_back(static_cast<std::int32_t>(c.row));
    p.nonzero.push_back(static_cast<std::int32_t>(c.nonzero));
    p.row_start.push_back(c.row < rows ? offsets[static_cast<std::size_t>(c.row)] : static_cast<std::int32_t>(nnz));
  }
  return p;
}

TEST(MergeSegmentStart, BoundariesAreOnThePathMonotoneAndCutOnlyLongRows) {
  const auto lengths = skewed_lengths(2000, 7, 5000);
  const auto offsets = offsets_from_lengths(lengths);
  const std::int64_t rows = static_cast<std::int64_t>(lengths.size()), nnz = offsets.back();
  for (std::int64_t items : {32, 64, 256}) {
    const std::int64_t slack = items / 2;
    const Partition p = partition(offsets, items, slack);
    ASSERT_EQ(p.row.front(), 0);
    ASSERT_EQ(p.nonzero.front(), 0);
    ASSERT_EQ(p.row.back(), rows);
    ASSERT_EQ(p.nonzero.back(), nnz);
    for (std::size_t b = 0; b < p.row.size(); ++b) {
      const std::int64_t r = p.row[b], j = p.nonzero[b];
      if (b > 0) {
        EXPECT_LE(p.row[b - 1], r);
        EXPECT_LE(p.nonzero[b - 1], j);
        // A segment holds at most items + slack steps.
        EXPECT_LE((r + j) - (p.row[b - 1] + p.nonzero[b - 1]), items + slack);
      }
      if (r < rows) {
        const std::int64_t start = offsets[static_cast<std::size_t>(r)];
        const std::int64_t end = offsets[static_cast<std::size_t>(r) + 1];
        EXPECT_GE(j, start);
        EXPECT_LE(j, end);
        // Cut inside a row only deeper than `slack` into it.
        EXPECT_TRUE(j == start || j - start > slack) << "boundary " << b;
      }
    }
  }
}

// The merge kernel's bookkeeping, on the host: each segment sums the pieces of
// its rows (clipped to the segment) and writes finished rows directly, the
// first and last pieces of cut rows to their carry slots; the fix-up adds the
// slots. Integer values: the sums must be exact. Every row is written once.
std::vector<std::int64_t> merge_spmv(const std::vector<std::int32_t>& offsets, std::int64_t items,
                                     const std::vector<std::int64_t>& values) {
  const std::int64_t rows = static_cast<std::int64_t>(offsets.size()) - 1;
  const Partition p = partition(offsets, items, items / 2);
  const MergeCarryPlan plan = plan_merge_carries(p.row, p.nonzero, p.row_start, rows);
  EXPECT_EQ(plan.head_slot.size() + 1, p.row.size());
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows), 0), carry(static_cast<std::size_t>(plan.slots()), 0);
  std::vector<int> writes(static_cast<std::size_t>(rows), 0), slot_writes(carry.size(), 0);
  for (std::size_t s = 0; s + 1 < p.row.size(); ++s) {
    const std::int64_t rb = p.row[s], re = p.row[s + 1], jb = p.nonzero[s], je = p.nonzero[s + 1];
    const int head = plan.head_slot[s], tail = plan.tail_slot[s];
    const std::int64_t last = (tail >= 0 || (head >= 0 && re == rb)) ? re : re - 1;
    for (std::int64_t row = rb; row <= last; ++row) {
      const std::int64_t begin = std::max<std::int64_t>(offsets[static_cast<std::size_t>(row)], jb);
      const std::int64_t end = std::min<std::int64_t>(offsets[static_cast<std::size_t>(row) + 1], je);
      std::int64_t sum = 0;
      for (std::int64_t k = begin; k < end; ++k) sum += values[static_cast<std::size_t>(k)];
      if (row == rb && head >= 0) {
        carry[static_cast<std::size_t>(head)] = sum, ++slot_writes[static_cast<std::size_t>(head)];
      } else if (row == re && tail >= 0) {
        carry[static_cast<std::size_t>(tail)] = sum, ++slot_writes[static_cast<std::size_t>(tail)];
      } else {
        y[static_cast<std::size_t>(row)] = sum, ++writes[static_cast<std::size_t>(row)];
      }
    }
  }
  for (std::size_t r = 0; r < plan.split_rows.size(); ++r) {
    std::int64_t sum = 0;
    for (std::int32_t k = plan.split_first_slot[r]; k < plan.split_first_slot[r + 1]; ++k)
      sum += carry[static_cast<std::size_t>(k)];
    y[static_cast<std::size_t>(plan.split_rows[r])] = sum;
    ++writes[static_cast<std::size_t>(plan.split_rows[r])];
  }
  for (std::size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], 1) << "row " << i;
  for (std::size_t k = 0; k < slot_writes.size(); ++k) EXPECT_EQ(slot_writes[k], 1) << "slot " << k;
  return y;
}

std::vector<std::int64_t> direct_spmv(const std::vector<std::int32_t>& offsets,
                                      const std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> y(offsets.size() - 1, 0);
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) y[i] += values[static_cast<std::size_t>(k)];
  return y;
}

void check_merge_spmv(const std::vector<std::int32_t>& lengths, std::int64_t items) {
  const auto offsets = offsets_from_lengths(lengths);
  std::vector<std::int64_t> values(static_cast<std::size_t>(offsets.back()));
  std::mt19937_64 engine(42);
  for (auto& v : values) v = static_cast<std::int64_t>(engine() % 2001) - 1000;
  EXPECT_EQ(merge_spmv(offsets, items, values), direct_spmv(offsets, values)) << "items " << items;
}

TEST(MergeCarryPlan, ReassemblesSkewedRows) {
  for (std::int64_t items : {32, 64, 128, 1024}) check_merge_spmv(skewed_lengths(3000, 3, 20000), items);
}

TEST(MergeCarryPlan, ReassemblesOneRowOf100kNonzeros) {
  for (std::int64_t items : {32, 1024}) check_merge_spmv({100000}, items);
  check_merge_spmv({0, 0, 100000, 0, 3}, 64);
}

TEST(MergeCarryPlan, HandlesEmptyRowsAndRowsOfLengthOne) {
  check_merge_spmv(std::vector<std::int32_t>(5000, 0), 32);
  check_merge_spmv(std::vector<std::int32_t>(5000, 1), 32);
  std::vector<std::int32_t> alternating(4001, 0);
  for (std::size_t i = 0; i < alternating.size(); i += 2) alternating[i] = 40;  // cut at 32/16
  check_merge_spmv(alternating, 32);
}

TEST(MergeCarryPlan, CountsSlotsOnlyForCutRows) {
  // Rows of 10 nonzeros, segments of 64 steps, slack 32: no row is ever cut.
  const auto offsets = offsets_from_lengths(std::vector<std::int32_t>(1000, 10));
  const Partition p = partition(offsets, 64, 32);
  const MergeCarryPlan plan = plan_merge_carries(p.row, p.nonzero, p.row_start, 1000);
  EXPECT_EQ(plan.slots(), 0);
  EXPECT_TRUE(plan.split_rows.empty());
  // One row of 1000 in segments of 64: cut into about 1000 / 64 pieces.
  const auto one = offsets_from_lengths({1000});
  const Partition q = partition(one, 64, 32);
  const MergeCarryPlan cut = plan_merge_carries(q.row, q.nonzero, q.row_start, 1);
  ASSERT_EQ(cut.split_rows.size(), 1u);
  EXPECT_EQ(cut.split_rows[0], 0);
  EXPECT_GE(cut.slots(), 1000 / 64);
  EXPECT_LE(cut.slots(), 1001 / 64 + 1);
}

TEST(MergeCarryPlan, OnlyRowsOfManyPiecesTakeTheTreeFixup) {
  // Segments of 32 steps, slack 16: a row of L nonzeros is cut into about L / 32
  // pieces. Lengths 900-1200 give rows on both sides of the flat kernel's limit,
  // and rows of 40 give two pieces.
  std::vector<std::int32_t> lengths;
  for (std::int32_t l = 900; l <= 1200; l += 7) lengths.insert(lengths.end(), {l, 40, 0});
  const auto offsets = offsets_from_lengths(lengths);
  const Partition p = partition(offsets, 32, 16);
  const MergeCarryPlan plan = plan_merge_carries(p.row, p.nonzero, p.row_start, std::int64_t(lengths.size()));
  const std::vector<std::int32_t> tree = merge_fixup_tree_rows(plan);
  std::size_t next = 0, flat_limit = 0, beyond = 0;
  for (std::size_t i = 0; i < plan.split_rows.size(); ++i) {
    const std::int32_t slots = plan.split_first_slot[i + 1] - plan.split_first_slot[i];
    flat_limit += slots == merge_fixup_flat_max_slots;
    beyond += slots == merge_fixup_flat_max_slots + 1;
    if (slots > merge_fixup_flat_max_slots) {
      ASSERT_LT(next, tree.size());
      EXPECT_EQ(tree[next++], std::int32_t(i));
    }
  }
  EXPECT_EQ(next, tree.size());
  EXPECT_GT(flat_limit, 0u);  // the test reaches both sides of the limit
  EXPECT_GT(beyond, 0u);
  EXPECT_LT(tree.size(), plan.split_rows.size());
}

TEST(MergeCarryPlan, RejectsInconsistentBoundaries) {
  EXPECT_THROW(plan_merge_carries({0, 1}, {0}, {0, 0}, 1), std::invalid_argument);
  // A segment that continues a row no earlier segment started.
  EXPECT_THROW(plan_merge_carries({0, 0, 1}, {5, 8, 10}, {0, 0, 10}, 1), std::logic_error);
}

TEST(MergeOrderAcrossRows, TakesTheKthSegmentOfEveryRowBeforeTheNext) {
  // Segment starts (boundary rows): row 0 spans segments 0-2, row 1 3-5, row 2
  // 6-7, row 3 segment 8; the last boundary closes the path.
  const std::vector<std::int32_t> boundary_row{0, 0, 0, 1, 1, 1, 2, 2, 3, 4};
  EXPECT_EQ(merge_order_across_rows(boundary_row), (std::vector<std::int32_t>{0, 3, 6, 8, 1, 4, 7, 2, 5}));
  EXPECT_TRUE(merge_order_across_rows({}).empty());
  EXPECT_EQ(merge_order_across_rows({0, 5}), (std::vector<std::int32_t>{0}));
}

TEST(MergeOrderAcrossRows, IsAPermutationOfARealPartition) {
  // 40 rows of 3000-5000 nonzeros and a few short and empty ones, in
  // segments of 256: every segment exactly once, and the segments of each
  // row still in path order.
  std::mt19937_64 engine(5);
  std::vector<std::int32_t> lengths;
  for (int i = 0; i < 40; ++i)
    lengths.push_back(i % 7 == 3 ? std::int32_t(engine() % 3) : 3000 + std::int32_t(engine() % 2000));
  const auto offsets = offsets_from_lengths(lengths);
  const Partition p = partition(offsets, 256, 128);
  const auto order = merge_order_across_rows(p.row);
  ASSERT_EQ(order.size(), p.row.size() - 1);
  std::vector<std::int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t s = 0; s < sorted.size(); ++s) EXPECT_EQ(sorted[s], static_cast<std::int32_t>(s));
  std::vector<std::int32_t> last_of_row(lengths.size() + 1, -1);
  for (const std::int32_t s : order) {
    const auto r = static_cast<std::size_t>(p.row[static_cast<std::size_t>(s)]);
    EXPECT_LT(last_of_row[r], s) << "segment " << s;
    last_of_row[r] = s;
  }
  // Rows that span several segments are interleaved: the first places hold
  // the first segment of every row that starts one.
  EXPECT_EQ(p.row[static_cast<std::size_t>(order[1])], p.row[static_cast<std::size_t>(order[0])] + 1);
}

}  // namespace
