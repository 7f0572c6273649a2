// Narrow body of the merge-based kernel (n = 1, 2, and 4 in fp32), for skewed rows
// (after Merrill and Garland's merge-path SpMV, SC'16): a product below is
// the n values A(i,j) * B(j, :). Each warp takes one segment of the merge path
// (merge_partition.cuh) and walks it in chunks of 32 * K merge items (row
// ends + nonzeros). Per chunk:
//   1. the warp loads a window of row ends and the products A(i,j) * b(j) of
//      the next 32 * K nonzeros into shared memory: coalesced, every load of
//      a lane independent of the others, so 2K loads are in flight at once;
//   2. each lane finds its own K items by a merge-path search in shared
//      memory and walks them alone: a running sum, no shuffles;
//   3. one segmented scan of the lanes' partial sums (by row, 10 shuffles)
//      completes the rows that lanes share; finished rows are written from
//      shared memory, coalesced, and the last row's sum carries on.
// K is odd so that the lanes' reads in shared memory spread over the banks,
// and the loads are not issued a chunk ahead: the body is bound by its
// instructions more than by load latency, and 80 registers a lane (3 blocks
// an SM) made it slower (docs/benchmarks/spmm.md#tried-not-kept).
//
// Every row of the segment, empty or not, is finished by exactly one lane,
// so empty rows need no pass of their own. Pieces of rows cut by a segment
// boundary go to carry slots, as merge_kernel's (the body has a partition of
// its own, of longer segments: merge_based.cu), added by the same fix-up
// kernel. The order of the additions depends only on the partition and K:
// deterministic.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/cuda/merge_spmv.cuh"

namespace blockeigs::spmm::cuda::detail {
namespace {

template <int K>
struct SpmvTile {
  static constexpr int items = warp_size * K;  // merge items per chunk
  // Row window: a chunk stops early when its rows run past it (runs of empty
  // rows); half the items or more leaves room for rows of mean length 1.
  static constexpr int row_loads = (K + 1) / 2;
  static constexpr int rows = warp_size * row_loads;
};

// The n values of one B row, or of one product or row sum: one vector load
// or store where B's rows allow it.
template <class T, int N>
struct alignas(N * sizeof(T)) Columns {
  T v[N];
};

template <class T, int N, int K>
struct SpmvShared {                           // one warp's
  Columns<T, N> product[SpmvTile<K>::items];  // A(i,j) * B(j,:), by nonzero in the chunk
  Columns<T, N> row_sum[SpmvTile<K>::rows];   // sums of the rows the chunk finishes
  int end[SpmvTile<K>::rows];                 // row ends, relative to the chunk's first nonzero
};

// One chunk's loads, held in registers until they reach shared memory.
template <class T, int N, int K>
struct ChunkLoads {
  int end[SpmvTile<K>::row_loads];
  int col[K];
  T value[K];
  Columns<T, N> x[K];
};

// The segment as its warp sees it: rows rb .. rb + rows - 1, each clipped to
// the segment's nonzeros jb .. jb + nonzeros - 1.
struct SegmentView {
  int rb, jb, je, rows, nonzeros;
};

// Row ends (clipped to the segment, relative to nonzero k0, capped above at
// items + 1) of rows i0 .. i0 + rows - 1, and column and value of nonzeros
// k0 .. k0 + items - 1, all relative to the segment.
template <class T, int N, int K>
__device__ __forceinline__ void load_chunk(const SpmmArgs<T>& a, const SegmentView& s, int i0, int k0, int lane,
                                           ChunkLoads<T, N, K>& c) {
  using Tile = SpmvTile<K>;
#pragma unroll
  for (int q = 0; q < Tile::row_loads; ++q) {
    const int i = i0 + q * warp_size + lane;
    int e = Tile::items + 1;
    if (i < s.rows) e = min(min(__ldg(a.row_offsets + s.rb + i + 1), s.je) - s.jb - k0, Tile::items + 1);
    c.end[q] = e;
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const int k = k0 + q * warp_size + lane;
    const bool valid = k < s.nonzeros;
    c.col[q] = valid ? __ldg(a.col_indices + s.jb + k) : -1;
    c.value[q] = valid ? __ldg(a.values + s.jb + k) : T(0);
  }
}

// Elements of B's rows one vector load takes (at most 16 bytes).
template <class T, int N>
inline constexpr int gather_vector = N * sizeof(T) <= 16 ? N : 16 / int(sizeof(T));

// B's rows, in vector loads when `Vector` (B's rows aligned to
// gather_vector elements), else N scalar loads of the same bytes.
template <class T, int N, int K, bool Vector>
__device__ __forceinline__ void gather_chunk(const SpmmArgs<T>& a, ChunkLoads<T, N, K>& c) {
  constexpr int V = gather_vector<T, N>;
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const T* b = b_row(a.B, max(c.col[q], 0), a.ldb_bytes);
    if (c.col[q] < 0) {
#pragma unroll
      for (int e = 0; e < N; ++e) c.x[q].v[e] = T(0);
    } else if constexpr (Vector && V == N) {
      load_readonly<T, N>(b, c.x[q].v);
    } else if constexpr (Vector) {
#pragma unroll
      for (int e = 0; e < N; e += V) {
        T piece[V];
        load_readonly<T, V>(b + e, piece);
#pragma unroll
        for (int f = 0; f < V; ++f) c.x[q].v[e + f] = piece[f];
      }
    } else {
#pragma unroll
      for (int e = 0; e < N; ++e) c.x[q].v[e] = __ldg(b + e);
    }
  }
}

template <class T, int N, int K>
__device__ __forceinline__ void store_chunk(const ChunkLoads<T, N, K>& c, int lane, SpmvShared<T, N, K>& s) {
#pragma unroll
  for (int q = 0; q < SpmvTile<K>::row_loads; ++q) s.end[q * warp_size + lane] = c.end[q];
#pragma unroll
  for (int q = 0; q < K; ++q) {
    Columns<T, N> p;
#pragma unroll
    for (int e = 0; e < N; ++e) p.v[e] = c.value[q] * c.x[q].v[e];
    s.product[q * warp_size + lane] = p;
  }
}

// Rows finished at diagonal d (0 <= d <= items) of the chunk's merge path,
// valid while the path stays inside the row window (the chunk's length sees
// to it): the number of rows p with end[p] <= d - p - 1, a prefix. Fixed
// steps, unrolled.
template <int K>
__device__ __forceinline__ int rows_before(const int* end, int d) {
  constexpr int rows = SpmvTile<K>::rows;
  constexpr int top = rows >= 128 ? 128 : rows >= 64 ? 64 : 32;  // largest power of two <= rows
  static_assert(2 * top > rows, "row window too wide for the steps");
  const int hi = min(d, rows);
  int found = 0;
#pragma unroll
  for (int step = top; step > 0; step /= 2) {
    const int probe = found + step - 1;  // is row `probe` finished?
    if (probe < hi && end[probe] <= d - probe - 1) found += step;
  }
  return found;
}

template <class T, int N>
__device__ __forceinline__ void add_to(Columns<T, N>& sum, const Columns<T, N>& x) {
#pragma unroll
  for (int e = 0; e < N; ++e) sum.v[e] += x.v[e];
}

template <class T, int N>
__device__ __forceinline__ Columns<T, N> zeros() {
  Columns<T, N> z;
#pragma unroll
  for (int e = 0; e < N; ++e) z.v[e] = T(0);
  return z;
}

template <class T, int N>
__device__ __forceinline__ Columns<T, N> shfl_up(const Columns<T, N>& x, int d) {
  Columns<T, N> y;
#pragma unroll
  for (int e = 0; e < N; ++e) y.v[e] = __shfl_up_sync(full_mask, x.v[e], d);
  return y;
}

// 64 registers, 4 blocks of 256 per SM at n = 1: 5 blocks (48 registers)
// spill in fp64 and gain little in fp32 (docs/benchmarks/spmm.md#kernel-notes).
template <class T, int N, int K, bool Vector, int MinBlocks>
__global__ void __launch_bounds__(block_threads, MinBlocks)
    merge_spmv_kernel(const SpmmArgs<T> a, const MergeSegments m, T* const carry) {
  using Tile = SpmvTile<K>;
  using Sum = Columns<T, N>;
  __shared__ SpmvShared<T, N, K> shared[block_threads / warp_size];
  SpmvShared<T, N, K>& sh = shared[threadIdx.x / warp_size];
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_size;
  for (std::int64_t seg = warp; seg < m.segments; seg += warps) {  // warp-uniform
    const auto [rb, re, jb, je, head, tail, last] = load_segment(m, seg);
    const SegmentView s{rb, jb, je, last - rb + 1, je - jb};
    const int total = s.rows + s.nonzeros;  // merge items: the last row ends at je
    ChunkLoads<T, N, K> loads;
    int i0 = 0, k0 = 0;              // rows finished and nonzeros consumed before this chunk
    Sum carry_in = zeros<T, N>();    // partial sum of row i0 from earlier chunks
    for (int d0 = 0; d0 < total;) {  // warp-uniform
      load_chunk<T, N, K>(a, s, i0, k0, lane, loads);
      gather_chunk<T, N, K, Vector>(a, loads);
      __syncwarp();  // the last chunk's readers are done
      store_chunk<T, N, K>(loads, lane, sh);
      __syncwarp();
      // The chunk: `items` steps, fewer at the segment's end or where the
      // path leaves the row window (after finishing its last row).
      const int length = min(min(Tile::items, total - d0), Tile::rows + sh.end[Tile::rows - 1]);

      // This lane's items: diagonals lane * K .. lane * K + K - 1 of the chunk.
      const int first = min(lane * K, length), steps = min(lane * K + K, length) - first;
      int row = rows_before<K>(sh.end, first), nz = first - row;
      Sum sum = lane == 0 ? carry_in : zeros<T, N>();
      int first_row = -1;  // the first row this lane finishes gets the earlier lanes' sums
      Sum first_sum = zeros<T, N>();
      // The open row's end stays in a register: a shared load per finished
      // row instead of per step (docs/benchmarks/spmm.md#kernel-notes).
      int row_end = sh.end[min(row, Tile::rows - 1)];
#pragma unroll
      for (int step = 0; step < K; ++step) {
        if (step < steps) {
          if (nz < row_end) {
            add_to(sum, sh.product[nz]);
            ++nz;
          } else {
            if (first_row < 0) {
              first_row = row;
              first_sum = sum;
            } else {
              sh.row_sum[row] = sum;
            }
            sum = zeros<T, N>();
            ++row;
            row_end = sh.end[min(row, Tile::rows - 1)];
          }
        }
      }
      const int rows_done = __shfl_sync(full_mask, row, warp_size - 1);  // by the chunk (lane 31 ends it)
      // Inclusive sums of the lanes' open pieces by row (rows ascend with lanes).
      Sum v = sum;
#pragma unroll
      for (int d = 1; d < warp_size; d *= 2) {
        const Sum other = shfl_up(v, d);
        const int other_row = __shfl_up_sync(full_mask, row, d);
        if (lane >= d && other_row == row) add_to(v, other);
      }
      // Lane l - 1's open row is the row lane l starts in.
      const Sum before = shfl_up(v, 1);
      if (first_row >= 0) {
        if (lane != 0) add_to(first_sum, before);
        sh.row_sum[first_row] = first_sum;
      }
#pragma unroll
      for (int e = 0; e < N; ++e) carry_in.v[e] = __shfl_sync(full_mask, v.v[e], warp_size - 1);
      __syncwarp();
      // Finished rows, one value a lane: lanes run along a row's n values
      // and on to the next row (coalesced where C's rows are adjacent).
      for (int t = lane; t < rows_done * N; t += warp_size) {
        const int r = t / N, e = t % N;
        const int global_row = rb + i0 + r;
        const T value = sh.row_sum[r].v[e];
        if (global_row == rb && head >= 0) {
          carry[std::int64_t(head) * N + e] = value;
        } else if (global_row == re && tail >= 0) {
          carry[std::int64_t(tail) * N + e] = value;
        } else {
          T* c = a.C + std::int64_t(global_row) * a.ldc + e;
          *c = a.beta == T(0) ? a.alpha * value : fma(a.alpha, value, a.beta * *c);
        }
      }
      i0 += rows_done;
      k0 += length - rows_done;
      d0 += length;
    }
  }
}

template <class T, int N, int K, bool Vector, int MinBlocks = 4>
void launch(const SpmmArgs<T>& args, const MergeSegments& segments, T* carry, int multiprocessors,
            cudaStream_t stream) {
  const std::int64_t warps_per_block = block_threads / warp_size;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>(
      (segments.segments + warps_per_block - 1) / warps_per_block, 1, std::int64_t(multiprocessors) * 2048));
  merge_spmv_kernel<T, N, K, Vector, MinBlocks><<<blocks, block_threads, 0, stream>>>(args, segments, carry);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// Vector loads of B where every row starts on a vector boundary.
template <class T, int N, int K, int MinBlocks = 4>
void launch_width(const SpmmArgs<T>& args, const MergeSegments& segments, T* carry, int multiprocessors,
                  cudaStream_t stream) {
  constexpr int v = gather_vector<T, N>;
  const bool aligned = reinterpret_cast<std::uintptr_t>(args.B) % (v * sizeof(T)) == 0 && args.ldb % v == 0;
  if constexpr (v > 1)
    if (aligned) return launch<T, N, K, true, MinBlocks>(args, segments, carry, multiprocessors, stream);
  launch<T, N, K, false, MinBlocks>(args, segments, carry, multiprocessors, stream);
}

}  // namespace

template <class T>
void launch_merge_spmv(const SpmmArgs<T>& args, const MergeSegments& segments, T* carry, int multiprocessors,
                       cudaStream_t stream) {
  constexpr bool fp32 = sizeof(T) == 4;
  if (!merge_spmv_takes(args.n, precision_of<T>()))
    throw Error("merge SpMV body: no variant for n = " + std::to_string(args.n) + " in this precision");
  if (args.n == 1)
    return launch_width < T, 1,
           fp32 ? merge_spmv_items_per_lane_fp32
                : merge_spmv_items_per_lane_fp64 > (args, segments, carry, multiprocessors, stream);
  if constexpr (fp32) {
    if (args.n == 2)
      return launch_width<T, 2, merge_spmv2_items_per_lane_fp32>(args, segments, carry, multiprocessors, stream);
    return launch_width<T, 4, merge_spmv4_items_per_lane_fp32>(args, segments, carry, multiprocessors, stream);
  } else {  // n = 2: 5 items need 72 registers (64 spilled), so 3 blocks per SM
    return launch_width<T, 2, merge_spmv2_items_per_lane_fp64, 3>(args, segments, carry, multiprocessors, stream);
  }
}

template void launch_merge_spmv(const SpmmArgs<float>&, const MergeSegments&, float*, int, cudaStream_t);
template void launch_merge_spmv(const SpmmArgs<double>&, const MergeSegments&, double*, int, cudaStream_t);

}  // namespace blockeigs::spmm::cuda::detail
