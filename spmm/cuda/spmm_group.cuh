// Device building blocks shared by the row-split and merge-based SpMM kernels.
//
// A warp is cut into groups of G = GC * GK lanes; each group owns one row (or,
// in the merge kernel, one clipped piece of a row) at a time:
//   - GC "column lanes" (a template parameter) split the n columns: lane c owns
//     P vectors of V elements at columns (p * GC + c) * V, so consecutive lanes
//     touch consecutive 16-byte pieces of a row of B or C (coalesced);
//   - GK "nonzero lanes" (chosen at run time from the mean row length) split
//     the row's nonzeros; their partial sums are added by a butterfly at the end.
// The group loads the row's column indices and values coalesced, G at a time,
// and broadcasts each to the lanes that need it with __shfl_sync. Each lane
// keeps the accumulators of all its columns, so A is read once for all n.
//
// Every loop whose body shuffles runs the same number of times on all 32 lanes
// (trip counts are warp maxima), so full-warp masks are always valid.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "spmm/cuda/device_complex.cuh"

namespace blockeigs::spmm::cuda::detail {

using complex_values::DeviceComplex;

inline constexpr int warp_size = 32;
inline constexpr int block_threads = 256;
inline constexpr unsigned full_mask = 0xffffffffu;
// Widest block one launch covers; wider blocks are done in slabs of this width.
// Complex double values (16 bytes) take half: the same bytes a row as fp64's.
inline constexpr int max_launch_width = 256;
template <class T>
inline constexpr int launch_columns = sizeof(T) == 16 ? max_launch_width / 2 : max_launch_width;

template <class T>
struct SpmmArgs {
  const std::int32_t* row_offsets;
  const std::int32_t* col_indices;
  const T* values;
  const T* B;
  std::int64_t ldb;
  std::uint32_t ldb_bytes;  // ldb * sizeof(T) (b_row), 0 for a B of one row
  T* C;
  std::int64_t ldc;
  std::int64_t rows;
  int n;
  T alpha;
  T beta;
};

// Nonzeros whose B rows are loaded before any of them is used: enough loads in
// flight per thread to cover memory latency, few enough registers to keep
// occupancy: U * P * V elements of B live at once, about 64 bytes. A power of
// two from 2 to 8, so that U divides the GC steps of a batch (GC >= U) or GC
// divides U (GC < U).
//
// Wide: 128 bytes (U = 8) under a larger register budget, for the shapes that
// have_wide_unroll (fp64 at n = 16 and 32: 16-byte vectors, 8 or 16 column
// lanes). A 7-point Laplacian row is then one lane's 8 loads instead of two
// lanes' 4 and a butterfly, so a warp holds twice the rows and an SM ~1.5x
// the loads in flight at 3 blocks instead of 4; whether a matrix gains is
// decided at plan build (wide_unroll_pays).
template <class T, int V, int P, int GC>
inline constexpr bool has_wide_unroll = sizeof(T) == 8 && V == 2 && P == 1 && (GC == 8 || GC == 16);

template <class T, int V, int P, bool Wide = false>
inline constexpr int nonzero_unroll = [] {
  int u = 8;
  const int budget = Wide ? 128 : 64;
  while (u > 2 && u * int(sizeof(T)) * P * V > budget) u /= 2;
  return u;
}();

// Blocks per SM the register budget must allow (__launch_bounds__): narrow
// shapes rely on many resident warps to hide latency (<= 64 registers, half
// occupancy); wide shapes keep U * P vector loads in flight per thread and
// need up to 128 (a quarter); Wide ones and the three-vector shapes of
// narrower groups (9-12 or 17-24 vectors) up to 80 (3 blocks). The Wide
// shapes fit 4 to 6 blocks without spills (62 to 40 registers) but keep
// fewer loads in flight and were slower (docs/benchmarks/spmm.md);
// the compile definition BLOCKEIGS_WIDE_BLOCKS sets their count.
template <int P, int GC>
inline constexpr bool several_vectors_a_lane = GC == warp_size&& P > 1;  // fp64 n > 64, fp32 n > 128
#ifndef BLOCKEIGS_WIDE_BLOCKS
#define BLOCKEIGS_WIDE_BLOCKS 3
#endif
template <int P, int GC, bool Wide = false>
inline constexpr int min_blocks_per_sm = several_vectors_a_lane<P, GC> ? 2
                                         : P > 1                       ? 3
                                         : Wide                        ? BLOCKEIGS_WIDE_BLOCKS
                                                                       : 4;

// ---- 4-, 8- and 16-byte vector access ---------------------------------------

template <class T, int V>
struct VectorType;
template <>
struct VectorType<float, 1> {
  using type = float;
};
template <>
struct VectorType<float, 2> {
  using type = float2;
};
template <>
struct VectorType<float, 4> {
  using type = float4;
};
template <>
struct VectorType<double, 1> {
  using type = double;
};
template <>
struct VectorType<double, 2> {
  using type = double2;
};
template <>
struct VectorType<DeviceComplex<float>, 1> {
  using type = float2;
};
template <>
struct VectorType<DeviceComplex<float>, 2> {
  using type = float4;
};
template <>
struct VectorType<DeviceComplex<double>, 1> {
  using type = double2;
};

__device__ __forceinline__ void unpack(float v, float (&o)[1]) { o[0] = v; }
__device__ __forceinline__ void unpack(float2 v, float (&o)[2]) {
  o[0] = v.x;
  o[1] = v.y;
}
__device__ __forceinline__ void unpack(float4 v, float (&o)[4]) {
  o[0] = v.x;
  o[1] = v.y;
  o[2] = v.z;
  o[3] = v.w;
}
__device__ __forceinline__ void unpack(double v, double (&o)[1]) { o[0] = v; }
__device__ __forceinline__ void unpack(double2 v, double (&o)[2]) {
  o[0] = v.x;
  o[1] = v.y;
}
__device__ __forceinline__ void unpack(float2 v, DeviceComplex<float> (&o)[1]) { o[0] = {v.x, v.y}; }
__device__ __forceinline__ void unpack(float4 v, DeviceComplex<float> (&o)[2]) {
  o[0] = {v.x, v.y};
  o[1] = {v.z, v.w};
}
__device__ __forceinline__ void unpack(double2 v, DeviceComplex<double> (&o)[1]) { o[0] = {v.x, v.y}; }
__device__ __forceinline__ float pack(const float (&o)[1]) { return o[0]; }
__device__ __forceinline__ float2 pack(const float (&o)[2]) { return make_float2(o[0], o[1]); }
__device__ __forceinline__ float4 pack(const float (&o)[4]) { return make_float4(o[0], o[1], o[2], o[3]); }
__device__ __forceinline__ double pack(const double (&o)[1]) { return o[0]; }
__device__ __forceinline__ double2 pack(const double (&o)[2]) { return make_double2(o[0], o[1]); }
__device__ __forceinline__ float2 pack(const DeviceComplex<float> (&o)[1]) { return make_float2(o[0].re, o[0].im); }
__device__ __forceinline__ float4 pack(const DeviceComplex<float> (&o)[2]) {
  return make_float4(o[0].re, o[0].im, o[1].re, o[1].im);
}
__device__ __forceinline__ double2 pack(const DeviceComplex<double> (&o)[1]) { return make_double2(o[0].re, o[0].im); }

// B: read-only for the whole kernel, reused across rows -> non-coherent cache.
template <class T, int V>
__device__ __forceinline__ void load_readonly(const T* p, T (&out)[V]) {
  using Vec = typename VectorType<T, V>::type;
  unpack(__ldg(reinterpret_cast<const Vec*>(p)), out);
}
// C (beta != 0): each element is read once, just before it is overwritten.
template <class T, int V>
__device__ __forceinline__ void load_last_use(const T* p, T (&out)[V]) {
  using Vec = typename VectorType<T, V>::type;
  unpack(__ldcs(reinterpret_cast<const Vec*>(p)), out);
}
// C: written once, never re-read by this kernel -> streaming (evict-first) store.
template <class T, int V>
__device__ __forceinline__ void store_streaming(T* p, const T (&in)[V]) {
  using Vec = typename VectorType<T, V>::type;
  __stcs(reinterpret_cast<Vec*>(p), pack(in));
}
// Carry slots: re-read by the fix-up kernel -> keep in L2, skip L1.
template <class T, int V>
__device__ __forceinline__ void store_global(T* p, const T (&in)[V]) {
  using Vec = typename VectorType<T, V>::type;
  __stcg(reinterpret_cast<Vec*>(p), pack(in));
}

// Row `col` of B, offset from `base` (a lane's first column in row 0). One
// 32 x 32 -> 64-bit multiply-add (IMAD.WIDE.U32): a 64-bit col * ldb cost
// ~10 instructions per nonzero and lane, about half of an issue-bound u-step
// (docs/benchmarks/spmm.md). check_operands refuses strides of 4 GiB and more.
template <class T>
__device__ __forceinline__ const T* b_row(const T* base, int col, std::uint32_t ldb_bytes) {
  return reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) +
                                    static_cast<std::uint64_t>(static_cast<std::uint32_t>(col)) * ldb_bytes);
}

// ---- lane layout ----------------------------------------------------------------

struct GroupLayout {
  int gk;             // nonzero lanes per group
  int size;           // lanes per group, GC * gk (a power of two <= 32)
  int group;          // group index within the warp
  int group_base;     // first lane of the group
  int lane_in_group;  // 0 .. size-1
  int lane_c;         // column lane, 0 .. GC-1
  int lane_k;         // nonzero lane, 0 .. gk-1
};

template <int GC>
__device__ __forceinline__ GroupLayout make_group_layout(int gk) {
  GroupLayout g;
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  g.gk = gk;
  g.size = GC * gk;
  g.group = lane / g.size;
  g.group_base = g.group * g.size;
  g.lane_in_group = lane - g.group_base;
  g.lane_c = g.lane_in_group % GC;
  g.lane_k = g.lane_in_group / GC;
  return g;
}

// The P vectors of columns one lane owns.
template <int V, int P, int GC>
struct LaneColumns {
  int first[P];
  bool valid[P];
  __device__ __forceinline__ LaneColumns(int lane_c, int n) {
#pragma unroll
    for (int p = 0; p < P; ++p) {
      first[p] = (p * GC + lane_c) * V;
      valid[p] = first[p] < n;  // n is a multiple of V: a vector is all in or all out
    }
  }
};

// ---- rows -----------------------------------------------------------------------

struct RowRange {
  int begin;
  int end;
};

// Nonzeros [begin, end) of `row`, or an empty range for a lane without a row.
__device__ __forceinline__ RowRange load_row_range(const std::int32_t* row_offsets, std::int64_t row, bool active) {
  RowRange r{0, 0};
  if (active) {
    r.begin = __ldg(row_offsets + row);
    r.end = __ldg(row_offsets + row + 1);
  }
  return r;
}

// ---- the inner product of one group ----------------------------------------------

// Coalesced index loads per batch of a group: R column indices and values per
// lane, so that one batch covers S = R * GC broadcast steps (a multiple of U).
template <class T, int V, int P, int GC, bool Wide = false>
inline constexpr int index_loads = GC >= nonzero_unroll<T, V, P, Wide> ? 1 : nonzero_unroll<T, V, P, Wide> / GC;

// One batch of a row's column indices and values: lane l of the group holds
// nonzeros base + r * size + l (zero past the row's end).
template <class T, int R>
struct IndexBatch {
  int col[R];
  T val[R];
};

template <class T, int R>
__device__ __forceinline__ IndexBatch<T, R> load_index_batch(const SpmmArgs<T>& a, const GroupLayout& g, int begin,
                                                             int length, int base) {
  IndexBatch<T, R> b;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int offset = base + r * g.size + g.lane_in_group;
    const bool ok = offset < length;
    b.col[r] = ok ? __ldg(a.col_indices + begin + offset) : 0;
    b.val[r] = ok ? __ldg(a.values + begin + offset) : T(0);
  }
  return b;
}

// acc += the batch's nonzeros times B(cols, lane's columns). `remaining` is
// the longest row of the warp less `base` (warp-uniform).
template <class T, int V, int P, int GC, bool Wide>
__device__ __forceinline__ void accumulate_batch(const SpmmArgs<T>& a, const GroupLayout& g,
                                                 const LaneColumns<V, P, GC>& cols, int length, int base, int remaining,
                                                 const IndexBatch<T, index_loads<T, V, P, GC, Wide>>& batch,
                                                 T (&acc)[P][V]) {
  constexpr int U = nonzero_unroll<T, V, P, Wide>;
  constexpr int R = index_loads<T, V, P, GC, Wide>;
  constexpr int S = R * GC;  // broadcast steps per batch (a multiple of U)
  static_assert(S % U == 0 && (U & (U - 1)) == 0, "steps of a batch must split into passes of U");
  const T* lane_b = a.B + cols.first[0];
  // Not unrolled: when GC < U there is one pass (S == U, so s / GC is known
  // at compile time); when GC >= U, s / GC == 0. Stops at the longest row.
#pragma unroll 1
  for (int s0 = 0; s0 < S && s0 * g.gk < remaining; s0 += U) {  // warp-uniform
    // Step s: nonzero lane k takes the batch's nonzero s * gk + k, which lane
    // (s % GC) * gk + k of the group loaded as col[s / GC].
    int c[U];
    T v[U];
    bool ok[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int s = s0 + u;
      constexpr int no_pass = 0;
      const int r = R == 1 ? no_pass : u / GC;  // compile-time register index
      ok[u] = base + s * g.gk + g.lane_k < length;
      if constexpr (GC == 1) {
        c[u] = batch.col[r];
        v[u] = batch.val[r];
      } else {
        const int source = g.group_base + (s % GC) * g.gk + g.lane_k;
        c[u] = __shfl_sync(full_mask, batch.col[r], source);
        v[u] = __shfl_sync(full_mask, batch.val[r], source);
      }
    }
    // All U * P loads are issued before the first multiply.
    T b[U][P][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const T* row = b_row(lane_b, c[u], a.ldb_bytes);
#pragma unroll
      for (int p = 0; p < P; ++p) {
        if (ok[u] && cols.valid[p]) {
          load_readonly<T, V>(row + p * GC * V, b[u][p]);  // cols.first[p] - cols.first[0]
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) b[u][p][e] = T(0);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[p][e] = fma(v[u], b[u][p][e], acc[p][e]);
  }
}

// acc += A(row, begin:end) * B(cols, lane's columns), for this lane's nonzero
// lane (nonzeros begin + lane_k, begin + lane_k + gk, ...). Lanes without work
// pass begin == end. `first` is the row's batch at base 0, loaded by the caller
// (early, so that it arrives while the previous row computes). Called by all
// 32 lanes.
template <class T, int V, int P, int GC, bool Wide>
__device__ __forceinline__ void accumulate_nonzeros(const SpmmArgs<T>& a, const GroupLayout& g,
                                                    const LaneColumns<V, P, GC>& cols, int begin, int end,
                                                    const IndexBatch<T, index_loads<T, V, P, GC, Wide>>& first,
                                                    T (&acc)[P][V]) {
  constexpr int R = index_loads<T, V, P, GC, Wide>;
  const int length = end - begin;
  const int longest = __reduce_max_sync(full_mask, length);
  const int batch = R * g.size;
  if (longest > 0) accumulate_batch<T, V, P, GC, Wide>(a, g, cols, length, 0, longest, first, acc);
  for (int base = batch; base < longest; base += batch)
    accumulate_batch<T, V, P, GC, Wide>(a, g, cols, length, base, longest - base,
                                        load_index_batch<T, R>(a, g, begin, length, base), acc);
}

// The same, loading the first batch itself.
template <class T, int V, int P, int GC, bool Wide>
__device__ __forceinline__ void accumulate_nonzeros(const SpmmArgs<T>& a, const GroupLayout& g,
                                                    const LaneColumns<V, P, GC>& cols, int begin, int end,
                                                    T (&acc)[P][V]) {
  accumulate_nonzeros<T, V, P, GC, Wide>(
      a, g, cols, begin, end, load_index_batch<T, index_loads<T, V, P, GC, Wide>>(a, g, begin, end - begin, 0), acc);
}

// Adds the partial sums of the group's nonzero lanes (fixed butterfly order:
// deterministic). Afterwards lane_k == 0 holds the group's sums.
template <class T, int V, int P, int GC>
__device__ __forceinline__ void reduce_nonzero_lanes(const GroupLayout& g, T (&acc)[P][V]) {
  for (int offset = GC; offset < g.size; offset <<= 1)
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[p][e] += __shfl_xor_sync(full_mask, acc[p][e], offset);
}

// C(row, lane's columns) = alpha * acc + beta * C; beta == 0 never reads C.
template <class T, int V, int P, int GC>
__device__ __forceinline__ void store_result(const SpmmArgs<T>& a, const LaneColumns<V, P, GC>& cols, std::int64_t row,
                                             const T (&acc)[P][V]) {
  T* c = a.C + row * a.ldc;
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (!cols.valid[p]) continue;
    T out[V];
    if (a.beta == T(0)) {
#pragma unroll
      for (int e = 0; e < V; ++e) out[e] = a.alpha * acc[p][e];
    } else {
      T old[V];
      load_last_use<T, V>(c + cols.first[p], old);
#pragma unroll
      for (int e = 0; e < V; ++e) out[e] = fma(a.alpha, acc[p][e], a.beta * old[e]);
    }
    store_streaming<T, V>(c + cols.first[p], out);
  }
}

// Raw partial sums of a row piece, for the merge kernel's fix-up.
template <class T, int V, int P, int GC>
__device__ __forceinline__ void store_carry(T* slot, const LaneColumns<V, P, GC>& cols, const T (&acc)[P][V]) {
#pragma unroll
  for (int p = 0; p < P; ++p)
    if (cols.valid[p]) store_global<T, V>(slot + cols.first[p], acc[p]);
}

}  // namespace blockeigs::spmm::cuda::detail
