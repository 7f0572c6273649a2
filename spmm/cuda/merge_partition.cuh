// Merge-path partition of a CSR matrix (Merrill and Garland, SC'16), shared
// by the host and the device, the host planning of the carry fix-up, and an
// order of the segments across rows.
//
// The merge path walks two sorted lists: the row end offsets
// row_offsets[1..rows] and the nonzero indices 0..nnz-1. From (row, nonzero)
// it consumes nonzero j while j < row_offsets[row + 1], else it finishes the
// row. Diagonal d is the point reached after d steps; cutting the path every
// L steps gives pieces of equal work (rows + nonzeros), however skewed the rows.
//
// Plain C++ when not compiled by nvcc, so the host tests include it with g++.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/host_device.hpp"

namespace blockeigs::spmm::cuda {

struct MergeCoordinate {
  std::int64_t row;      // rows finished
  std::int64_t nonzero;  // nonzeros consumed
};

// The point of the merge path on `diagonal` (0 <= diagonal <= rows + nnz):
// binary search along the diagonal, O(log min(rows, nnz)). Ties go to the row
// end, so an empty row is finished before the next row's first nonzero.
BLOCKEIGS_HOST_DEVICE inline MergeCoordinate merge_path_search(std::int64_t diagonal, const std::int32_t* row_offsets,
                                                               std::int64_t rows, std::int64_t nnz) {
  std::int64_t lo = diagonal > nnz ? diagonal - nnz : 0;
  std::int64_t hi = diagonal < rows ? diagonal : rows;
  while (lo < hi) {
    const std::int64_t pivot = lo + (hi - lo) / 2;
    // Is the end of row `pivot` before nonzero diagonal - pivot - 1 on the path?
    if (row_offsets[pivot + 1] <= diagonal - pivot - 1)
      lo = pivot + 1;
    else
      hi = pivot;
  }
  return {lo, diagonal - lo};
}

// Start of segment `segment` when the path is cut every `items` steps, moved
// back to the start of its row when that is at most `slack` nonzeros away:
// rows up to `slack` long are never split, and only long rows need carries.
// Boundaries are non-decreasing in both coordinates when slack < items.
// Segment rows + nnz / items (rounded up) ends at (rows, nnz).
BLOCKEIGS_HOST_DEVICE inline MergeCoordinate merge_segment_start(std::int64_t segment, std::int64_t items,
                                                                 std::int64_t slack, const std::int32_t* row_offsets,
                                                                 std::int64_t rows, std::int64_t nnz) {
  const std::int64_t total = rows + nnz;
  const std::int64_t diagonal = segment * items < total ? segment * items : total;
  MergeCoordinate c = merge_path_search(diagonal, row_offsets, rows, nnz);
  if (c.row < rows) {
    const std::int64_t row_start = row_offsets[c.row];
    if (c.nonzero - row_start <= slack) c.nonzero = row_start;
  }
  return c;
}

BLOCKEIGS_HOST_DEVICE inline std::int64_t merge_segment_count(std::int64_t rows, std::int64_t nnz, std::int64_t items) {
  return (rows + nnz + items - 1) / items;
}

// How the pieces of rows cut by segment boundaries are put back together.
// Segment s runs from boundary s to boundary s + 1. A row is split when a
// boundary falls inside it: after its first nonzero and before its end step.
// Its pieces, in order: the "tail" of the segment
// where it starts, then the "head" of every later segment up to the one where
// it ends. Each piece gets a carry slot; the slots of one row are consecutive,
// so the fix-up adds slots first..first+count-1 in order (deterministic).
struct MergeCarryPlan {
  std::vector<std::int32_t> head_slot;         // per segment; -1: starts at a row start
  std::vector<std::int32_t> tail_slot;         // per segment; -1: ends at a row start
  std::vector<std::int32_t> split_rows;        // rows cut by a boundary, ascending
  std::vector<std::int32_t> split_first_slot;  // split_rows.size() + 1 offsets into the slots
  std::int64_t slots() const { return split_first_slot.empty() ? 0 : split_first_slot.back(); }
};

// boundary_row / boundary_nonzero: segments + 1 boundaries (merge_segment_start);
// boundary_row_start[b] = row_offsets[boundary_row[b]] (nnz when it is `rows`).
inline MergeCarryPlan plan_merge_carries(const std::vector<std::int32_t>& boundary_row,
                                         const std::vector<std::int32_t>& boundary_nonzero,
                                         const std::vector<std::int32_t>& boundary_row_start, std::int64_t rows) {
  if (boundary_row.empty() || boundary_row.size() != boundary_nonzero.size() ||
      boundary_row.size() != boundary_row_start.size())
    throw std::invalid_argument("plan_merge_carries: boundary arrays of different lengths");
  const std::size_t segments = boundary_row.size() - 1;
  MergeCarryPlan plan;
  plan.head_slot.assign(segments, -1);
  plan.tail_slot.assign(segments, -1);
  plan.split_first_slot.push_back(0);
  std::int32_t next = 0;
  for (std::size_t s = 0; s < segments; ++s) {
    const std::int64_t rb = boundary_row[s], jb = boundary_nonzero[s];
    const std::int64_t re = boundary_row[s + 1], je = boundary_nonzero[s + 1];
    const bool head = rb < rows && jb > boundary_row_start[s];  // row rb started earlier
    if (head) {
      if (plan.split_rows.empty() || plan.split_rows.back() != rb)
        throw std::logic_error("plan_merge_carries: segment " + std::to_string(s) + " continues row " +
                               std::to_string(rb) + ", which no segment started");
      plan.head_slot[s] = next++;
      plan.split_first_slot.back() = next;
    }
    const bool middle = head && re == rb;                          // the whole segment lies inside one row
    if (!middle && re < rows && je > boundary_row_start[s + 1]) {  // row re goes on
      plan.split_rows.push_back(static_cast<std::int32_t>(re));
      plan.tail_slot[s] = next++;
      plan.split_first_slot.push_back(next);
    }
  }
  return plan;
}

// The fix-up (merge_fixup.cuh) adds a cut row of up to this many slots with
// one thread per column; rows of more take a block each.
inline constexpr int merge_fixup_flat_max_slots = 32;

// Indices into split_rows of the cut rows with more than merge_fixup_flat_max_slots slots.
inline std::vector<std::int32_t> merge_fixup_tree_rows(const MergeCarryPlan& plan) {
  std::vector<std::int32_t> rows;
  for (std::size_t i = 0; i < plan.split_rows.size(); ++i)
    if (plan.split_first_slot[i + 1] - plan.split_first_slot[i] > merge_fixup_flat_max_slots)
      rows.push_back(static_cast<std::int32_t>(i));
  return rows;
}

// An order of the segments that takes the k-th segment of every row before
// the (k+1)-th of any: for k = 0, 1, ...: the segments at position k of their
// row's run, rows ascending. A segment belongs to the row it starts in
// (boundary_row[s]). Where long rows share their columns (dense blocks),
// warps running at the same time then read the same rows of B, once from
// memory for all of them, instead of one row's warps sweeping all of B
// before the next row's start.
inline std::vector<std::int32_t> merge_order_across_rows(const std::vector<std::int32_t>& boundary_row) {
  const std::size_t segments = boundary_row.empty() ? 0 : boundary_row.size() - 1;
  std::vector<std::size_t> position(segments);  // in its row's run of segments
  for (std::size_t s = 1; s < segments; ++s)
    position[s] = boundary_row[s] == boundary_row[s - 1] ? position[s - 1] + 1 : 0;
  // Rows ascend along the path, so a stable sort by position keeps them ascending.
  std::vector<std::int32_t> order(segments);
  for (std::size_t s = 0; s < segments; ++s) order[s] = static_cast<std::int32_t>(s);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return position[std::size_t(a)] < position[std::size_t(b)]; });
  return order;
}

}  // namespace blockeigs::spmm::cuda
