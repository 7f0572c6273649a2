// The merge-based kernel's partition as its kernels see it, and the narrow
// (n = 1, 2, and 4 in fp32) body for skewed rows (merge_spmv.cu).
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
  const std::int32_t* order = nullptr;  // segment taken in place `i`, or none: in order
};

// One segment's bounds: rows rb .. re - 1 end in it; row re has a piece in
// it only when it goes on into the next segment (tail), or the segment lies
// inside it, so `last` is the last row the segment touches.
struct SegmentBounds {
  int rb, re, jb, je;  // first and end row, first and end nonzero
  int head, tail;      // carry slots of the first and last row pieces, or -1
  int last;
};

__device__ __forceinline__ SegmentBounds load_segment(const MergeSegments& m, std::int64_t seg) {
  SegmentBounds b;
  b.rb = __ldg(m.row + seg), b.re = __ldg(m.row + seg + 1);
  b.jb = __ldg(m.nonzero + seg), b.je = __ldg(m.nonzero + seg + 1);
  b.head = __ldg(m.head_slot + seg), b.tail = __ldg(m.tail_slot + seg);
  b.last = (b.tail >= 0 || (b.head >= 0 && b.re == b.rb)) ? b.re : b.re - 1;
  return b;
}

// C = alpha * A * B + beta * C for a block B of args.n columns, a width
// merge_spmv_takes accepts, one warp per segment; pieces of cut rows go to their carry slots,
// n values each (launch_merge_fixup adds them).
template <class T>
void launch_merge_spmv(const SpmmArgs<T>& args, const MergeSegments& segments, T* carry, int multiprocessors,
                       cudaStream_t stream);

}  // namespace blockeigs::spmm::cuda::detail
