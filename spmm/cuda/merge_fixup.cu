// The merge kernels' fix-up (see merge_fixup.cuh).
#include <cstdint>

#include "core/error.hpp"

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/kernel_dispatch.cuh"
#include "spmm/cuda/merge_fixup.cuh"

namespace blockeigs::spmm::cuda::detail {
namespace {

inline constexpr int fixup_threads = 256;

template <class T>
__device__ __forceinline__ void store_fixed(T* C, std::int64_t ldc, int row, int col, T sum, T alpha, T beta) {
  T* c = C + std::int64_t(row) * ldc + col;
  *c = beta == T(0) ? alpha * sum : fma(alpha, sum, beta * *c);
}

// A thread per (cut row, column), columns fastest; rows of more slots than
// merge_fixup_flat_max_slots are left to the tree blocks.
template <class T>
__device__ __forceinline__ void fix_up_flat(const MergeFixupRows& rows, const T* carry, int n, T* C, std::int64_t ldc,
                                            T alpha, T beta, std::int64_t block) {
  const std::int64_t t = block * fixup_threads + threadIdx.x;
  if (t >= rows.split * n) return;
  const std::int64_t i = t / n;
  const int col = static_cast<int>(t - i * n);
  const int first = __ldg(rows.split_first_slot + i), end = __ldg(rows.split_first_slot + i + 1);
  if (end - first > merge_fixup_flat_max_slots) return;
  const T* slot = carry + col;
  T sum = T(0);
  int s = first;
  for (; s + 4 <= end; s += 4) {  // four loads in flight, added in slot order
    const T v0 = slot[std::int64_t(s) * n], v1 = slot[std::int64_t(s + 1) * n];
    const T v2 = slot[std::int64_t(s + 2) * n], v3 = slot[std::int64_t(s + 3) * n];
    sum += v0;
    sum += v1;
    sum += v2;
    sum += v3;
  }
  for (; s < end; ++s) sum += slot[std::int64_t(s) * n];
  store_fixed(C, ldc, __ldg(rows.split_rows + i), col, sum, alpha, beta);
}

// One block per (long cut row, tile of `column_lanes` columns). Its 256
// threads are column lanes x slot lanes (column_lanes = n rounded up to a
// power of two, at most 32, so a narrow block still has up to 256 slot lanes
// for a row cut into thousands of pieces). Slot lane q adds slots q,
// q + slot_lanes, ... in order; a fixed tree in shared memory adds the slot lanes.
template <class T>
__device__ __forceinline__ void fix_up_tree(const MergeFixupRows& rows, const T* carry, int n, int column_lanes, T* C,
                                            std::int64_t ldc, T alpha, T beta, std::int64_t block) {
  __shared__ T partial[fixup_threads];
  const auto tiles = static_cast<unsigned>((n + column_lanes - 1) / column_lanes);
  const auto tile_block = static_cast<unsigned>(block);  // < 2^31: checked at launch
  const int slot_lanes = fixup_threads / column_lanes;
  const int lane = threadIdx.x % column_lanes, q = threadIdx.x / column_lanes;
  const int col = static_cast<int>(tile_block % tiles) * column_lanes + lane;
  const int tree_row = static_cast<int>(tile_block / tiles);
  const int i = rows.tree_rows ? rows.tree_rows[tree_row] : tree_row;  // null: every cut row is a tree row
  const int first = rows.split_first_slot[i], end = rows.split_first_slot[i + 1];
  T sum = T(0);
  if (col < n) {
#pragma unroll 8
    for (int s = first + q; s < end; s += slot_lanes) sum += carry[std::int64_t(s) * n + col];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = slot_lanes / 2; half > 0; half /= 2) {
    if (q < half) partial[threadIdx.x] += partial[threadIdx.x + half * column_lanes];
    __syncthreads();
  }
  if (q != 0 || col >= n) return;
  store_fixed(C, ldc, rows.split_rows[i], col, partial[lane], alpha, beta);
}

// Blocks [0, flat_blocks) run the flat fix-up, the rest the tree fix-up (one
// launch for both: a second launch cost more than the flat part on matrices
// of few long rows).
template <class T>
__global__ void __launch_bounds__(fixup_threads)
    merge_fixup_kernel(const MergeFixupRows rows, const T* carry, int n, int column_lanes, T* C, std::int64_t ldc,
                       T alpha, T beta, std::int64_t flat_blocks) {
  const std::int64_t block = blockIdx.x;  // block-uniform branch
  if (block < flat_blocks)
    fix_up_flat(rows, carry, n, C, ldc, alpha, beta, block);
  else
    fix_up_tree(rows, carry, n, column_lanes, C, ldc, alpha, beta, block - flat_blocks);
}

}  // namespace

template <class T>
void launch_merge_fixup(const MergeFixupRows& rows, const T* carry, int n, T* C, std::int64_t ldc, T alpha, T beta,
                        cudaStream_t stream) {
  if (rows.split == 0 || n == 0) return;
  // Where every cut row takes the tree (dense blocks of few rows): no flat
  // blocks, and no index to load.
  const bool all_tree = rows.tree == rows.split;
  MergeFixupRows launched = rows;
  if (all_tree) launched.tree_rows = nullptr;
  const std::int64_t flat_blocks = all_tree ? 0 : (rows.split * n + fixup_threads - 1) / fixup_threads;
  const int column_lanes = column_lanes_for(n);  // <= 32
  const std::int64_t blocks = flat_blocks + rows.tree * ((n + column_lanes - 1) / column_lanes);
  if (blocks > std::int64_t(INT32_MAX)) throw Error("merge fix-up: too many cut rows for one launch");
  merge_fixup_kernel<T><<<static_cast<unsigned>(blocks), fixup_threads, 0, stream>>>(launched, carry, n, column_lanes,
                                                                                     C, ldc, alpha, beta, flat_blocks);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                               \
  template void launch_merge_fixup(const MergeFixupRows&, const device_t<T>*, int, device_t<T>*, std::int64_t, \
                                   device_t<T>, device_t<T>, cudaStream_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm::cuda::detail
