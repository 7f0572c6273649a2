// G = X^T [Y1 Y2] on tall row-major fp64 blocks (X up to 96 columns,
// [Y1 Y2] up to 64) in one pass, on the tensor cores (DMMA, m16n8k8).
//
// Why not cuBLAS: a Gram matrix over millions of rows is a product with
// k = rows. block_reductions_cuda.cu cuts it into chunks for a batched gemm,
// which reaches the copy rate for one product, but LOBPCG wants two with the
// same left side ([X P Z]^T Z and [X P Z]^T A Z), which apart read [X P Z]
// twice. Here [X P Z] is read once, at about the copy rate
// (docs/benchmarks/solvers.md#gram-pair).
//
// A block streams its rows through shared memory in stages of 16 rows
// (cp.async, `stages` in flight, so the loads in flight cost no registers),
// each row laid out as [X, zeros to a multiple of 16 | Y1 Y2, zeros]. The
// product's K dimension is the rows: per 8 rows r0..r0+7 it is one
// m16n8k8 MMA (Hopper's fp64 shape, twice the rate of m8n8k4) per tile pair,
// lane l (g = l / 4, t = l % 4) taking A(g (+ 8), t (+ 4)) =
// X(r0 + t (+ 4), 16 m + g (+ 8)) and B(t (+ 4), g) = Y(r0 + t (+ 4), 8 n + g)
// straight from the staged rows. Warp w owns X's 16-column tile w against
// every tile of [Y1 Y2] (up to 5 accumulator tiles), so the warps never add
// into each other's sums. Wider shapes (LOBPCG's blocks of 21 to 32: X past
// 64 columns or [Y1 Y2] past 40) take a second variant: warp w owns tiles w
// and w + 4 against up to 8 Y tiles, at 2-3 blocks an SM instead of 4-5 (its
// accumulators, up to 248 registers a lane, and up to 64 KB of staged rows).
//
// The grid and every block's rows depend on the row count alone, and each
// lane adds its rows in order: the partial sums, and with them the product,
// are the same bits on any GPU.
#include "solver/blocks/cuda/tall_skinny_gram.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "solver/blocks/cuda/narrow_update_args.cuh"
#include "core/error.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using detail::commit_copies;
using detail::mma_16x8x8;
using detail::wait_copies;

constexpr int warps_per_block = 4;
constexpr int stage_rows = 16;  // 2 MMA steps of 8 rows
constexpr int stages = 3;       // in the ring: 2 in flight while one is multiplied
// The narrow variant (XT = 1): 64 columns of X (tiles of 16, one a warp) and
// 40 of [Y1 Y2] (tiles of 8); the wide one (XT = 2): 96 and 64.
template <int XT>
inline constexpr int max_x_cols = XT == 1 ? 64 : 96;
template <int XT>
inline constexpr int max_y_cols = XT == 1 ? 40 : 64;
static_assert(max_x_cols<1> == 16 * warps_per_block && max_x_cols<2> <= 2 * 16 * warps_per_block, "XT X tiles a warp");
// Blocks: one per stage of rows up to max_blocks, each taking every
// gridDim.x-th stage. 660 = one wave of 5 blocks per SM (40 KB of shared
// memory each at 64 x 40; the 8-byte copies' registers allow 4) on 132 SMs
// (H100, H200); the grid is a function of the row count only, for the bits.
constexpr std::int64_t max_blocks = 660;

// Doubles between staged rows: room for both padded parts, and = 8 (mod 16)
// so that a fragment's 4 rows x 8 columns fall on distinct banks (of 8
// bytes) in each half-warp.
__host__ __device__ constexpr int staged_stride(int kx, int ky) {
  const int width = (kx + 15) / 16 * 16 + (ky + 7) / 8 * 8;
  return (width + 7) / 16 * 16 + 8;
}

// One cp.async of W doubles (8 or 16 bytes), zero-filled where `in` is false.
template <int W>
__device__ __forceinline__ void copy_async(unsigned shared, const double* global, bool in) {
  if constexpr (W == 2)
    detail::copy_async_16(shared, global, in);
  else
    detail::copy_async_8(shared, global, in);
}

// Floats between staged fp32 rows (X's tail and Y1 in fp32), 16-byte aligned.
__host__ __device__ constexpr int staged_float_stride(int floats) { return (floats + 3) / 4 * 4; }

// Whether Y1 is the fp32 tail's own leading columns (LOBPCG's Z on both sides).
__host__ __device__ inline bool y1_is_x_tail(const TallSkinnyGramArgs& a) {
  return a.y1_single == a.x_tail_single && a.ldy1 == a.ldx_tail && a.ky1 <= a.kx - a.kx_head;
}
// Floats between staged fp32 rows: X's tail, then Y1 unless it is the tail's,
// each padded to whole units of 4.
// each padded to whole units of 4; then padded to 8 (mod 16) floats, so that
// a fragment's rows t = 0..3 fall on distinct banks (of 4 bytes).
__host__ __device__ inline int fp32_row_width(const TallSkinnyGramArgs& a) {
  const int tail = (a.kx - a.kx_head + 3) / 4 * 4;
  const int width = y1_is_x_tail(a) ? tail : tail + (a.ky1 + 3) / 4 * 4;
  return (width + 7) / 16 * 16 + 8;
}

// NT tiles of 8 columns of [Y1 Y2]; W doubles a copy (2 where every block's
// rows and columns start 16-byte aligned, see launch); XT tiles of X a warp.
// Single: X's tail and Y1 in fp32 (TallSkinnyGramArgs::x_tail_single),
// staged as they are (16-byte copies of 4 floats) in rows of their own after
// the fp64 rows; once a stage has landed, every thread widens its share into
// the fp64 rows, and after a second barrier the fragments read one row kind,
// as in fp64. Where Y1 is the tail's own leading columns (LOBPCG's Z in
// both), it is copied once and widened into both places: the fp32 rows add
// 4.5 KB to a block's 40 at 60 x 40, and 5 blocks still fit an SM. On an H100
// the mixed pair is as fast as fp64's
// (docs/benchmarks/solvers.md#search-precision, with the forms not kept).
template <int NT, int W, int XT, bool Single = false>
__global__ void __launch_bounds__(warps_per_block * 32, XT == 2  ? (NT > 4 ? 2 : 3)
                                                        : W == 2 ? 5
                                                                 : 4)
    tall_skinny_gram_kernel(const TallSkinnyGramArgs a) {
  extern __shared__ double staged[];  // stages x stage_rows x stride, then (Single) the fp32 rows
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int ky = a.ky1 + a.ky2, x_tiles = (a.kx + 15) / 16, y_start = x_tiles * 16;
  const int stride = staged_stride(a.kx, ky);
  // Single: [X's tail | Y1] of a row in the fp32 rows, each part padded to
  // whole units of 4 floats; X's tail alone where Y1 is its leading columns.
  const bool y1_in_tail = Single && y1_is_x_tail(a);
  const int tail = a.kx - a.kx_head, tail_width = (tail + 3) / 4 * 4;
  const int stride_f = Single ? fp32_row_width(a) : 0;  // (a multiple of 4: 16-byte copies)
  float* const floats = reinterpret_cast<float*>(staged + stages * stage_rows * stride);
  // Zero once: the padding columns are never copied into.
  for (int e = static_cast<int>(threadIdx.x); e < stages * stage_rows * stride; e += blockDim.x) staged[e] = 0.0;
  __syncthreads();

  // The copy: warp w stages rows w, w + 4, ... of a stage; lane l the copy
  // units l + 32 j of the row [X Y1 Y2] (up to 104 or 160 doubles): W
  // doubles each, or (Single) X's head and Y2 in W doubles and the fp32 parts
  // in FW floats (16 bytes where the fp64 units are; a part's last unit
  // copies what is left). Each unit's source, row stride and place in the
  // staged row are fixed for the whole kernel: found once here, so that a
  // copy costs one multiply-add of the row.
  constexpr int FW = W == 2 ? 4 : 1;
  constexpr int copy_slots = ((max_x_cols<XT> + max_y_cols<XT>) / W + 31) / 32;
  using Offset = std::conditional_t<Single, unsigned, std::int64_t>;  // (32 bits: fewer registers)
  const char* column[copy_slots];
  Offset ld_bytes[copy_slots];
  int to[copy_slots];  // fp64 column in the staged row (Single's fp32 units: where they are widened to)
  // Single: 0 for an fp64 unit, else 8 (the unit's first float in the fp32
  // row + 1) + its floats (1 to FW): one register for both.
  int in_floats[copy_slots];
  const int n_head = (a.kx_head + W - 1) / W, n_tail = Single ? (tail + FW - 1) / FW : 0;
  const int n_y1 = Single && !y1_in_tail ? (a.ky1 + FW - 1) / FW : 0;
  const int units = Single ? n_head + n_tail + n_y1 + (a.ky2 + W - 1) / W : (a.kx + ky) / W;
#pragma unroll
  for (int j = 0; j < copy_slots; ++j) {
    const int v = lane + 32 * j;
    in_floats[j] = 0;
    if constexpr (Single) {
      if (v >= n_head && v < n_head + n_tail + n_y1) {
        const bool in_tail = v < n_head + n_tail;
        const int f = FW * (in_tail ? v - n_head : v - n_head - n_tail);  // of its part
        column[j] = reinterpret_cast<const char*>((in_tail ? a.x_tail_single : a.y1_single) + f);
        ld_bytes[j] = static_cast<Offset>((in_tail ? a.ldx_tail : a.ldy1) * std::int64_t(sizeof(float)));
        to[j] = in_tail ? a.kx_head + f : y_start + f;
        in_floats[j] = 8 * ((in_tail ? f : tail_width + f) + 1) + min(FW, (in_tail ? tail : a.ky1) - f);
        continue;
      }
      const bool x = v < n_head;
      const int c = x ? W * v : W * (v - n_head - n_tail - n_y1);  // of X's head, or of Y2
      column[j] = reinterpret_cast<const char*>(x ? a.x + c : a.y2 + c);
      ld_bytes[j] = static_cast<Offset>((x ? a.ldx : a.ldy2) * std::int64_t(sizeof(double)));
      to[j] = x ? c : y_start + a.ky1 + c;
      continue;
    }
    const int c = W * v;  // column of [X Y1 Y2]
    const bool x = c < a.kx, x_tail = x && c >= a.kx_head, y1 = !x && c < a.kx + a.ky1;
    to[j] = x ? c : y_start + c - a.kx;
    column[j] = reinterpret_cast<const char*>(x_tail ? a.x_tail + (c - a.kx_head)
                                              : x    ? a.x + c
                                              : y1   ? a.y1 + (c - a.kx)
                                                     : a.y2 + (c - a.kx - a.ky1));
    ld_bytes[j] = static_cast<Offset>((x_tail ? a.ldx_tail
                                       : x    ? a.ldx
                                       : y1   ? a.ldy1
                                              : a.ldy2) *
                                      std::int64_t(sizeof(double)));
  }
  const unsigned staged_base = static_cast<unsigned>(__cvta_generic_to_shared(staged));
  const unsigned float_base = static_cast<unsigned>(__cvta_generic_to_shared(floats));
  const std::int64_t total_stages = (a.rows + stage_rows - 1) / stage_rows;
  auto issue = [&](std::int64_t stage, int slot) {  // stage may be past the last: zeros
    const unsigned base = staged_base + unsigned(slot * stage_rows * stride) * unsigned(sizeof(double));
    const unsigned fbase = float_base + unsigned(slot * stage_rows * stride_f) * unsigned(sizeof(float));
#pragma unroll
    for (int r = warp; r < stage_rows; r += warps_per_block) {
      const std::int64_t row = stage * stage_rows + r;
      const bool in_rows = row < a.rows;
      const Offset safe_row = in_rows ? static_cast<Offset>(row) : Offset(0);
#pragma unroll
      for (int j = 0; j < copy_slots; ++j) {
        if (lane + 32 * j >= units) continue;
        const char* const from = column[j] + std::int64_t(safe_row) * std::int64_t(ld_bytes[j]);
        if (Single && in_floats[j] > 0) {
          const unsigned into = fbase + unsigned(r * stride_f + in_floats[j] / 8 - 1) * unsigned(sizeof(float));
          if constexpr (FW == 4)
            detail::copy_async_16_partial(into, from, in_rows ? 4 * (in_floats[j] % 8) : 0);
          else
            detail::copy_async_bytes_4(into, from, in_rows);
          continue;
        }
        copy_async<W>(base + unsigned(r * stride + to[j]) * unsigned(sizeof(double)),
                      reinterpret_cast<const double*>(from), in_rows);
      }
    }
    commit_copies();
  };

  double acc[XT][NT][4];
#pragma unroll
  for (int xt = 0; xt < XT; ++xt)
#pragma unroll
    for (int n = 0; n < NT; ++n) acc[xt][n][0] = acc[xt][n][1] = acc[xt][n][2] = acc[xt][n][3] = 0.0;

  // Stages blockIdx.x, + gridDim.x, ...: the i-th in ring slot i % stages.
  const std::int64_t mine = total_stages > blockIdx.x ? (total_stages - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  auto stage_of = [&](std::int64_t i) { return blockIdx.x + i * std::int64_t(gridDim.x); };
#pragma unroll
  for (int i = 0; i < stages - 1; ++i) issue(i < mine ? stage_of(i) : total_stages, i);
  const bool has_tile = warp < x_tiles;  // warp-uniform
  for (std::int64_t i = 0; i < mine; ++i) {
    wait_copies<stages - 2>();  // stage i has landed (this thread's copies) ...
    __syncthreads();            // ... and everyone's; slot (i - 1) % stages is free again
    const std::int64_t next = i + stages - 1;
    issue(next < mine ? stage_of(next) : total_stages, static_cast<int>(next % stages));
    double* const base = staged + static_cast<int>(i % stages) * stage_rows * stride;
    const float* const fbase = floats + static_cast<int>(i % stages) * stage_rows * stride_f;
    if constexpr (Single) {
      // Every thread widens a share of the stage's fp32 values into the fp64
      // rows (8 threads a row), so that the fragments below read one row kind.
      static_assert(warps_per_block * 32 == 8 * stage_rows, "8 threads a staged row");
      const int r = static_cast<int>(threadIdx.x) >> 3, per_row = y1_in_tail ? tail : tail + a.ky1;
      double* const drow = base + r * stride;
      const float* const frow = fbase + r * stride_f;
      for (int f = static_cast<int>(threadIdx.x) & 7; f < per_row; f += 8) {
        if (f < tail) {
          const double v = frow[f];
          drow[a.kx_head + f] = v;
          if (y1_in_tail && f < a.ky1) drow[y_start + f] = v;
        } else {
          drow[y_start + f - tail] = frow[tail_width + f - tail];
        }
      }
      __syncthreads();
    }
    if (!has_tile) continue;
#pragma unroll
    for (int xt = 0; xt < XT; ++xt) {
      const int tile = warp + warps_per_block * xt;
      if (xt > 0 && tile >= x_tiles) break;  // warp-uniform
#pragma unroll
      for (int k = 0; k < stage_rows / 8; ++k) {
        const double* const row = base + (8 * k + t) * stride;  // row t; row t + 4 is 4 strides on
        const double x[4] = {row[16 * tile + g], row[16 * tile + g + 8], row[4 * stride + 16 * tile + g],
                             row[4 * stride + 16 * tile + g + 8]};
#pragma unroll
        for (int n = 0; n < NT; ++n)
          mma_16x8x8(acc[xt][n], x, row[y_start + 8 * n + g], row[4 * stride + y_start + 8 * n + g]);
      }
    }
  }
  wait_copies<0>();  // none left in flight at exit

  double* const out = a.partial + std::int64_t(blockIdx.x) * a.kx * ky;
#pragma unroll
  for (int xt = 0; xt < XT; ++xt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 16 * (warp + warps_per_block * xt) + g + 8 * h;
      if (!has_tile || r >= a.kx) continue;
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int p = 0; p < 2; ++p) {
          const int c = 8 * n + 2 * t + p;
          if (c < ky) out[r * ky + c] = acc[xt][n][2 * h + p];
        }
    }
}

// Shared memory for kx x ky, with `floats` columns staged in fp32.
constexpr int staged_bytes(int kx, int ky, int floats) {
  return stages * stage_rows *
         (staged_stride(kx, ky) * int(sizeof(double)) + staged_float_stride(floats) * int(sizeof(float)));
}

template <int NT, int W, int XT, bool Single = false>
void launch(const TallSkinnyGramArgs& a, cudaStream_t stream) {
  const auto kernel = tall_skinny_gram_kernel<NT, W, XT, Single>;
  const int bytes = staged_bytes(a.kx, a.ky1 + a.ky2, Single ? fp32_row_width(a) : 0);
  static std::atomic<std::uint64_t> opted_in{0};
  detail::allow_shared_memory(
      kernel, staged_bytes(max_x_cols<XT>, max_y_cols<XT>, Single ? max_x_cols<XT> + max_y_cols<XT> : 0), opted_in);
  kernel<<<static_cast<unsigned>(tall_skinny_gram_blocks(a.rows)), warps_per_block * 32, bytes, stream>>>(a);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// X's tail or Y1 in fp32 (TallSkinnyGramArgs::x_tail_single).
bool is_single(const TallSkinnyGramArgs& a) { return a.x_tail_single != nullptr || a.y1_single != nullptr; }

// 16-byte copies where every part of every row starts 16-byte aligned:
// even column counts and leading dimensions, aligned block starts (LOBPCG's
// [X P Z] and [Z A Z] whenever Z has an even number of columns; a copy never
// straddles X's two views).
bool copies_pair(const TallSkinnyGramArgs& a) {
  auto aligned = [](const double* p, std::int64_t ld, int cols) {
    return cols == 0 || (detail::rows_16_byte_aligned(p, ld) && cols % 2 == 0);
  };
  auto aligned_single = [](const float* p, std::int64_t ld, int cols) {  // 4 floats, 16 bytes
    return cols == 0 || detail::rows_16_byte_aligned(p, ld);
  };
  const bool single = is_single(a);
  return aligned(a.x, a.ldx, a.kx_head) &&
         (single ? aligned_single(a.x_tail_single, a.ldx_tail, a.kx - a.kx_head)
                 : aligned(a.x_tail, a.ldx_tail, a.kx - a.kx_head)) &&
         (single ? aligned_single(a.y1_single, a.ldy1, a.ky1) : aligned(a.y1, a.ldy1, a.ky1)) &&
         aligned(a.y2, a.ldy2, a.ky2);
}

template <int NT, int XT, bool Single>
void launch_width(const TallSkinnyGramArgs& a, cudaStream_t stream) {
  if (copies_pair(a)) return launch<NT, 2, XT, Single>(a, stream);
  launch<NT, 1, XT, Single>(a, stream);
}

// launch_width<NT, XT> for NT = tiles, the tiles of 8 columns of [Y1 Y2].
template <int XT, bool Single = false, int NT = 1>
void launch_tiles(int tiles, const TallSkinnyGramArgs& a, cudaStream_t stream) {
  if constexpr (NT < max_y_cols<XT> / 8)
    if (tiles > NT) return launch_tiles<XT, Single, NT + 1>(tiles, a, stream);
  launch_width<NT, XT, Single>(a, stream);
}

}  // namespace

bool tall_skinny_gram_fits(std::int64_t kx, std::int64_t ky) {
  return kx >= 1 && kx <= max_x_cols<2> && ky >= 1 && ky <= max_y_cols<2>;
}

bool tall_skinny_gram_single_fits(std::int64_t kx, std::int64_t ky) {
  return kx >= 1 && kx <= max_x_cols<1> && ky >= 1 && ky <= max_y_cols<1>;
}

std::int64_t tall_skinny_gram_blocks(std::int64_t rows) {
  return std::clamp<std::int64_t>((rows + stage_rows - 1) / stage_rows, 1, max_blocks);
}

void tall_skinny_gram(const TallSkinnyGramArgs& a, cudaStream_t stream) {
  const int ky = a.ky1 + a.ky2, tiles = (ky + 7) / 8;
  if (is_single(a)) {
    BLOCKEIGS_ASSERT(tall_skinny_gram_single_fits(a.kx, ky));
    return launch_tiles<1, true>(tiles, a, stream);
  }
  if (a.kx <= max_x_cols<1> && ky <= max_y_cols<1>) return launch_tiles<1>(tiles, a, stream);
  launch_tiles<2>(tiles, a, stream);  // the wide variant: X past 64 columns or [Y1 Y2] past 40
}

}  // namespace blockeigs::solver::cuda
