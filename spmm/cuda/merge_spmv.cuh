// The merge-based kernel's partition as its kernels see it, and the n = 1
// (SpMV) body for skewed rows (merge_spmv.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "spmm/cuda/spmm_group.cuh"

namespace blockeigs::spmm::cuda::detail {

struct MergeSegments {
  const std::int32_t* row;        // segments + 1 boundaries: first row ...
  const std::int32_t* nonzero;    // ... and first nonzero of each segment
  const std::int32_t* head_slot;  // carry slot of the segment's first row piece, or -1
  const std::int32_t* tail_slot;  // carry slot of the segment's last row piece, or -1
  std::int64_t segments;
};

// C = alpha * A * b + beta * C for one column, one warp per segment; pieces
// of cut rows go to their carry slots (merge_fixup_kernel adds them).
template <class T>
void launch_merge_spmv(const SpmmArgs<T>& args, const MergeSegments& segments, T* carry,
                       int multiprocessors, cudaStream_t stream);

}  // namespace blockeigs::spmm::cuda::detail
