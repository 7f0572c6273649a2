// The merge kernels' fix-up: adds the carry slots of every row that segment
// boundaries cut (MergeCarryPlan) and applies alpha and beta to it. Each
// row's slots are added in slot order, the same way on every call for a
// given partition: deterministic.
//  - Rows of at most merge_fixup_flat_max_slots pieces (merge_partition.cuh;
//    all rows but the very long ones): a thread per (row, column) adds them
//    in a loop. Most cut rows have 2-4 pieces; a block of 256 threads a row
//    (the tree below) leaves most of its threads idle
//    (docs/benchmarks/spmm.md#kernel-notes).
//  - Longer rows (a row of 100k nonzeros in hundreds of pieces): a block per
//    (row, tile of columns) splits the slots over its threads and adds the
//    threads' sums by a fixed tree.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "spmm/cuda/merge_partition.cuh"

namespace blockeigs::spmm::cuda::detail {

// A partition's cut rows as the fix-up reads them (device pointers).
struct MergeFixupRows {
  const std::int32_t* split_rows;        // rows cut by a boundary
  const std::int32_t* split_first_slot;  // split + 1 offsets into the slots
  std::int64_t split;
  const std::int32_t* tree_rows;  // indices into split_rows: merge_fixup_tree_rows
  std::int64_t tree;
};

// C[row, :n] = alpha * (sum of the row's slots) + beta * C[row, :n] for every
// cut row; `carry` holds slots x n values.
template <class T>
void launch_merge_fixup(const MergeFixupRows& rows, const T* carry, int n, T* C, std::int64_t ldc, T alpha, T beta,
                        cudaStream_t stream);

}  // namespace blockeigs::spmm::cuda::detail
