// LOBPCG's Ritz update and its next residuals in one pass, in fp64 on the
// tensor cores: from the basis S and A S (ns <= 96 columns each) and the Ritz
// coefficients C (ns x m, m <= 64),
//   Y = S C and AY = A S C               (the next [X P] and [A X A P]),
//   R = AY(:, 0:nb) - Y(:, 0:nb) Lambda  (the next residual block),
// with each thread block's sums of squares of R's and Y(:, 0:nb)'s columns.
// Residual j goes to R's column r_column[j] (LOBPCG puts its active ones
// first, so that soft locking seldom moves them). One pass reads S and A S
// once and takes the residuals from the accumulators, where two updates and
// a residual pass would read X and A X back.
//
// Rows go 16 at a time, one m16n8k8 tile (Hopper's fp64 MMA, twice the rate
// of m8n8k4). Lane (g, t) of a warp holds the A fragments (rows g and g + 8,
// inputs 8 ks + t and + 4 of every k-step), C's B fragments come from shared
// memory, and the lane ends with Y and AY at rows g and g + 8, columns
// 8 nt + 2 t + {0, 1}, so it forms those residual entries itself.
//
// Up to 64 inputs and 48 outputs (LOBPCG's blocks up to 20), C comes in the
// kernel's parameters and the rows are staged: a pair of warps takes a tile,
// each copies half of its rows of S and A S into shared memory by cp.async a
// tile ahead (the loads in flight hold no registers), and each multiplies
// the whole tile by every other 8-column tile of C, so it stores half of the
// outputs and residuals. At 60 inputs and 40 outputs this runs near a copy's
// ceiling (docs/benchmarks/solvers.md#ritz-update).
//
// A X implied (the staged kernel; LOBPCG on the device without a
// preconditioner): A S's first nb columns are not read. A X = X Theta + R,
// R being columns of S (the last residuals, which LOBPCG keeps there as W's
// raw columns), is formed from the staged S tile where A S's fragments are
// read, and the next A X is not written (ay_first = nb): 180 columns of
// traffic instead of 220 at block 20.
//
// Wider shapes (LOBPCG's blocks of 21 to 32: up to 96 inputs and 64 outputs)
// take the register-loaded kernel (ritz_update_wide.cu): C, too large for the
// kernel's parameters, comes through global memory into dynamic shared memory,
// and a step holds 12 k-steps of fragments, at 2 blocks an SM.
//
// S and A S may each come in two views (SplitColumns: LOBPCG's A [X P] and
// its compact A W): S's columns from ns_head on are read from s_tail, A S's
// from nv_head on from as_tail. Rows are addressed by 32 x 32-bit
// multiply-adds, fewer instructions on the issue path (ritz_update_local sends
// rows and strides of 2^31 and more to the separate updates).
//
// The grid depends on the shape alone and each lane adds its rows in order,
// so the partial sums, and the norms, do not depend on the GPU.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "solver/blocks/cuda/device_support.cuh"
#include "solver/blocks/cuda/ritz_update_common.cuh"
#include "core/error.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using namespace detail;
using namespace ritz_detail;

// ---------------------------------------------------------------------------
// The staged kernel (up to 64 inputs and 48 outputs).
constexpr int staged_stages = 2;  // a pair's ring of tiles: one multiplied, one in flight
// A block's pairs (one block an SM): as many as shared memory allows at ns,
// up to 6: 7 would cap the registers at 128 a lane, and the update slows
// (docs/benchmarks/solvers.md#ritz-update).
constexpr int staged_max_pairs = 6;
constexpr std::int64_t staged_max_blocks = 8 * 132;  // 8 waves on 132 SMs (H100, H200)
constexpr int shared_memory_limit = 227 * 1024;      // a block's on sm_90

// Doubles between a tile's staged rows: at least ns, and = 4 (mod 8) so that
// a fragment's 4 rows x 4 columns in a half-warp fall on 16 distinct banks
// (of 8 bytes).
constexpr int staged_stride(int ns) { return (ns + 3) / 8 * 8 + 4; }
constexpr int staged_static_bytes(int nt, bool implied) {
  return (max_inputs * (8 * nt + 4) + 2 * staged_max_pairs * 2 * max_outputs) * int(sizeof(double)) +
         (implied ? max_outputs : 1) * int(sizeof(double) + sizeof(int));  // theta and ax_column
}
// Floats between a tile's staged fp32 rows (S's tail in fp32), 16-byte
// aligned; none without such a tail.
constexpr int staged_float_stride(int tail_floats) { return (tail_floats + 3) / 4 * 4; }
// S's first ns - tail_floats columns staged in fp64, the rest in fp32.
constexpr int staged_pair_bytes(int ns, int nv, int tail_floats = 0) {
  return staged_stages * step_rows *
         ((staged_stride(ns - tail_floats) + staged_stride(nv)) * int(sizeof(double)) +
          staged_float_stride(tail_floats) * int(sizeof(float)));
}
constexpr int staged_pairs(int ns, int nv, int nt, bool implied, int tail_floats = 0) {
  return std::min(staged_max_pairs,
                  (shared_memory_limit - staged_static_bytes(nt, implied)) / staged_pair_bytes(ns, nv, tail_floats));
}
static_assert(staged_pairs(max_inputs, max_inputs, max_outputs / 8, false) >= 4,
              "the widest staged shape keeps 4 pairs an SM");

// The two warps of pair `id` (named barrier 1 + id) meet.
__device__ __forceinline__ void pair_barrier(int id) { asm volatile("bar.sync %0, 64;" ::"r"(id + 1) : "memory"); }

// The A fragments of k-step ks from a staged tile (16 rows, `stride` apart);
// zero past ns.
__device__ __forceinline__ void staged_fragment(const double* tile, int stride, int ns, int ks, double (&frag)[4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const int c0 = 8 * ks + t, c1 = c0 + 4;
  const double* const row0 = tile + g * stride;
  const double* const row1 = row0 + 8 * stride;
  frag[0] = c0 < ns ? row0[c0] : 0.0;
  frag[1] = c0 < ns ? row1[c0] : 0.0;
  frag[2] = c1 < ns ? row0[c1] : 0.0;
  frag[3] = c1 < ns ? row1[c1] : 0.0;
}

// S's tile in two precisions (RitzUpdateArgs::s_tail_single): its columns
// below `head` staged in fp64 (stride doubles a row), the rest in fp32
// (stride_f floats), widened here. head is a multiple of 4, so each of a
// lane's two columns c0 and c0 + 4 is on the same side for every lane.
struct SplitTile {
  const double* tile;
  int stride;
  const float* floats;
  int stride_f, head;
  // S(row g (+ 8), c) for c >= head.
  __device__ __forceinline__ double tail(int g, int c) const { return floats[g * stride_f + c - head]; }
};
__device__ __forceinline__ void staged_fragment(const SplitTile& s, int ns, int ks, double (&frag)[4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int c = 8 * ks + t + 4 * half;
    if (c < s.head) {
      frag[2 * half] = s.tile[g * s.stride + c];
      frag[2 * half + 1] = s.tile[(g + 8) * s.stride + c];
    } else {
      frag[2 * half] = c < ns ? s.tail(g, c) : 0.0;
      frag[2 * half + 1] = c < ns ? s.tail(g + 8, c) : 0.0;
    }
  }
}

// A S's A fragments of k-step ks with A X implied: A X's columns (below
// implied_nb) from the S tile's X and residual columns, theta[c] S(:, c) +
// S(:, column[c]) (frag_s holds S(:, c) already), the rest from the A S
// tile, which holds A S's columns from implied_nb on; zero past nv.
// Single: the residuals are S's fp32 columns (split, all at or past its head).
template <bool Single = false>
__device__ __forceinline__ void implied_fragment(const RitzUpdateArgs& a, const double* tile_s, int stride_s,
                                                 const double* tile_as, int stride_as, int ks,
                                                 const double (&frag_s)[4], const double* theta, const int* column,
                                                 double (&frag)[4], const SplitTile* split = nullptr) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {  // columns 8 ks + t and 8 ks + t + 4
    const int c = 8 * ks + t + 4 * half;
    if (c < a.implied_nb) {
      const double th = theta[c];
      if constexpr (Single) {
        frag[2 * half] = fma(th, frag_s[2 * half], split->tail(g, column[c]));
        frag[2 * half + 1] = fma(th, frag_s[2 * half + 1], split->tail(g + 8, column[c]));
        continue;
      }
      const double* const r = tile_s + g * stride_s + column[c];
      frag[2 * half] = fma(th, frag_s[2 * half], r[0]);
      frag[2 * half + 1] = fma(th, frag_s[2 * half + 1], r[8 * stride_s]);
    } else {
      const double* const r = tile_as + g * stride_as + (c - a.implied_nb);
      frag[2 * half] = c < a.nv ? r[0] : 0.0;
      frag[2 * half + 1] = c < a.nv ? r[8 * stride_as] : 0.0;
    }
  }
}

// y = the staged tile of S times C's output tiles h, h + 2, ... (HT of them,
// those below nt_count), and ay the same for A S, in one k-step loop.
// (m16n8k8 on a pair's half of the outputs: not narrow_update_args.cuh's
// m8n8k4 multiply_staged.) Implied: A X formed on the way (implied_fragment).
template <int HT, int CS, bool Implied, bool Single = false>
__device__ __forceinline__ void multiply_staged_pair_half(const RitzUpdateArgs& a, const double* tile_s, int stride_s,
                                                          const double* tile_as, int stride_as, const double (*C)[CS],
                                                          int h, int nt_count, const double* theta, const int* column,
                                                          double (&y)[HT][4], double (&ay)[HT][4],
                                                          const SplitTile* split = nullptr) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < HT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) y[j][e] = ay[j][e] = 0.0;
#pragma unroll
  for (int ks = 0; ks < max_k_steps; ++ks) {
    if (ks >= a.k_steps) break;  // warp-uniform
    double frag_s[4], frag_as[4];
    if constexpr (Single)
      staged_fragment(*split, a.ns, ks, frag_s);
    else
      staged_fragment(tile_s, stride_s, a.ns, ks, frag_s);
    if constexpr (Implied)
      implied_fragment<Single>(a, tile_s, stride_s, tile_as, stride_as, ks, frag_s, theta, column, frag_as, split);
    else
      staged_fragment(tile_as, stride_as, a.nv, ks, frag_as);
#pragma unroll
    for (int j = 0; j < HT; ++j) {
      const int nt = 2 * j + h;
      if (nt >= nt_count) break;  // warp-uniform
      const double b0 = C[8 * ks + t][8 * nt + g], b1 = C[8 * ks + t + 4][8 * nt + g];
      mma_16x8x8(y[j], frag_s, b0, b1);
      mma_16x8x8(ay[j], frag_as, b0, b1);
    }
  }
}

// W doubles a copy (2: 16 bytes, where S's and A S's rows start 16-byte
// aligned). Lane l of a warp copies units l + 32 j of each of its rows of the
// staged [S | A S]. Implied: A S's first nb columns are neither copied nor
// staged but formed where the fragments are read (implied_fragment).
//
// Single: S's tail (LOBPCG's residuals) in fp32 at s_tail_single, staged as
// it is in a tile of its own behind [S | A S] and widened where the
// fragments read it (SplitTile); R is stored in fp32.
template <int NT, int W, bool Implied, bool Single = false>
__global__ void __launch_bounds__(staged_max_pairs * 64, 1)
    ritz_update_staged_kernel(const RitzUpdateArgs a, const __grid_constant__ RitzConstants<NT, false> k) {
  constexpr int K2 = 8 * NT, c_stride = K2 + 4, HT = (NT + 1) / 2;
  __shared__ double C[max_inputs][c_stride];
  __shared__ double warp_sums[2 * staged_max_pairs][2][max_outputs];
  __shared__ double theta[Implied ? max_outputs : 1];
  __shared__ int ax_column[Implied ? max_outputs : 1];
  extern __shared__ __align__(16) double staged[];  // per pair: stages x {S, A S} x 16 rows
  const int pairs = static_cast<int>(blockDim.x) / 64;
  for (int e = threadIdx.x; e < max_inputs * K2; e += blockDim.x) C[e / K2][e % K2] = k.c[e];
  if constexpr (Implied)
    for (int e = threadIdx.x; e < a.implied_nb; e += blockDim.x) {
      theta[e] = k.theta[e];
      ax_column[e] = k.ax_column[e];
    }
  for (int e = threadIdx.x; e < 2 * staged_max_pairs * 2 * max_outputs; e += blockDim.x) (&warp_sums[0][0][0])[e] = 0.0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32, warp_in_block = static_cast<int>(threadIdx.x) / 32;
  const int pair_in_block = warp_in_block / 2, h = warp_in_block % 2;
  const int as_first = Implied ? a.implied_nb : 0;  // A S's first column staged
  const int stride_s = staged_stride(Single ? a.ns_head : a.ns), stride_as = staged_stride(a.nv - as_first);
  const int stride_f = Single ? staged_float_stride(a.ns - a.ns_head) : 0;  // floats
  const int tile_s = step_rows * stride_s, doubles_in_slot = step_rows * (stride_s + stride_as);
  const int slot = doubles_in_slot + step_rows * stride_f / 2;  // stride_f is a multiple of 4
  double* const ring = staged + pair_in_block * staged_stages * slot;
  const unsigned ring_base = static_cast<unsigned>(__cvta_generic_to_shared(ring));

  // This lane's copy units of a row, the same for every row: unit v is
  // column W u of S (v < units_s) or column as_first + W u of A S
  // (u = v - units_s), staged at W u.
  // Single: S's head in units of W doubles, its fp32 tail in units of FW
  // floats (16 bytes where the rows allow 16-byte double copies; the last
  // unit of a tail that is not a multiple of 4 copies what is left).
  constexpr int slots = 2 * max_inputs / W / 32, FW = W == 2 ? 4 : 1;
  const int tail_floats = a.ns - a.ns_head;
  const int units_head = Single ? (a.ns_head + W - 1) / W : (a.ns + W - 1) / W;
  const int units_s = units_head + (Single ? (tail_floats + FW - 1) / FW : 0);
  const int units_as = (a.nv - as_first + W - 1) / W;
  // Each unit's source as row 0's address and a row stride in bytes (S's
  // columns from ns_head on are in s_tail, at column - ns_head, and A S's
  // from nv_head on in as_tail; units do not straddle either, copies_pair),
  // so that a copy's address is one 32 x 32-bit multiply-add
  // (ritz_update_local keeps rows below 2^31).
  const char* source[slots];
  unsigned source_stride[slots];
  int to[slots], row_stride[slots];
  bool whole[slots], used[slots];
  // Single: units of S's fp32 tail, staged at float `to` of the slot's fp32 rows.
  bool in_floats[slots];
#pragma unroll
  for (int j = 0; j < slots; ++j) {
    const int v = lane + 32 * j;
    used[j] = v < units_s + units_as;
    const bool from_as = v >= units_s;
    in_floats[j] = Single && !from_as && v >= units_head;
    if (in_floats[j]) {
      const int first = FW * (v - units_head);  // of the tail
      to[j] = first;
      row_stride[j] = stride_f;
      whole[j] = first + FW <= tail_floats;  // else the bytes left: 4 (tail_floats - first)
      source[j] = reinterpret_cast<const char*>(a.s_tail_single + first);
      source_stride[j] = static_cast<unsigned>(a.lds_tail * sizeof(float));
      continue;
    }
    const int column = from_as ? as_first + W * (v - units_s) : W * v;
    to[j] = from_as ? tile_s + column - as_first : column;
    row_stride[j] = from_as ? stride_as : stride_s;
    whole[j] = W == 2 && column + 1 < (from_as ? a.nv : a.ns);  // an odd width's last unit: 8 bytes
    const int head = from_as ? a.nv_head : a.ns_head;
    const bool from_tail = column >= head;
    const std::int64_t ld = from_as ? (from_tail ? a.ldas_tail : a.ldas) : (from_tail ? a.lds_tail : a.lds);
    const double* const base = from_as ? (from_tail ? a.as_tail : a.as) : (from_tail ? a.s_tail : a.s);
    source[j] = reinterpret_cast<const char*>(base + (from_tail ? column - head : column));
    source_stride[j] = static_cast<unsigned>(ld * sizeof(double));
  }

  const std::int64_t tiles = (a.rows + step_rows - 1) / step_rows;
  const std::int64_t pair = std::int64_t(blockIdx.x) * pairs + pair_in_block;
  const std::int64_t all_pairs = std::int64_t(gridDim.x) * pairs;
  const std::int64_t mine = tiles > pair ? (tiles - pair + all_pairs - 1) / all_pairs : 0;
  // Rows 8 h to 8 h + 7 of the pair's tile i into ring slot i % stages;
  // rows past the last are zero-filled. Always one commit, so that
  // wait_copies counts tiles.
  auto issue = [&](std::int64_t i) {
    if (i < mine) {
      const std::int64_t first = (pair + i * all_pairs) * step_rows;
      const unsigned base = ring_base + unsigned(int(i % staged_stages) * slot) * unsigned(sizeof(double));
      const unsigned float_base = base + unsigned(doubles_in_slot) * unsigned(sizeof(double));
#pragma unroll
      for (int r = 8 * h; r < 8 * h + 8; ++r) {
        const std::int64_t row = first + r;
        const bool in = row < a.rows;
        const unsigned safe = in ? static_cast<unsigned>(row) : 0u;
#pragma unroll
        for (int j = 0; j < slots; ++j) {
          if (!used[j]) continue;
          const char* const from = source[j] + static_cast<std::uint64_t>(safe) * source_stride[j];
          if (Single && in_floats[j]) {
            const unsigned into = float_base + unsigned(r * row_stride[j] + to[j]) * unsigned(sizeof(float));
            if constexpr (FW == 4)
              copy_async_16_partial(into, from, !in ? 0 : whole[j] ? 16 : 4 * (tail_floats - to[j]));
            else
              copy_async_bytes_4(into, from, in);
            continue;
          }
          const unsigned into = base + unsigned(r * row_stride[j] + to[j]) * unsigned(sizeof(double));
          if (whole[j])
            copy_async_16(into, reinterpret_cast<const double*>(from), in);
          else
            copy_async_8(into, reinterpret_cast<const double*>(from), in);
        }
      }
    }
    commit_copies();
  };

#pragma unroll
  for (int i = 0; i < staged_stages - 1; ++i) issue(i);
  for (std::int64_t i = 0; i < mine; ++i) {  // pair-uniform
    issue(i + staged_stages - 1);
    wait_copies<staged_stages - 1>();  // this lane's copies of tile i have landed ...
    pair_barrier(pair_in_block);       // ... and both warps'
    const double* const staged_s = ring + int(i % staged_stages) * slot;
    const SplitTile split{staged_s, stride_s, reinterpret_cast<const float*>(staged_s + doubles_in_slot), stride_f,
                          a.ns_head};
    double y[HT][4], ay[HT][4];
    multiply_staged_pair_half<HT, c_stride, Implied, Single>(a, staged_s, stride_s, staged_s + tile_s, stride_as, C, h,
                                                             NT, theta, ax_column, y, ay, &split);
    store_step<HT, max_outputs, Single>(a, k.lambda, k.r_column, (pair + i * all_pairs) * step_rows, y, ay,
                                        warp_sums[warp_in_block], h, 2);
    pair_barrier(pair_in_block);  // both are done with the slot before a later tile is copied into it
  }
  wait_copies<0>();
  __syncthreads();
  write_block_sums(a, warp_sums, 2 * pairs);
}

// 16-byte copies where the rows of S and A S (both views of each) start
// 16-byte aligned. (A S's copies start at column implied_nb; a pair of
// columns must not straddle either block's two views.)
bool copies_pair(const RitzUpdateArgs& a) {
  const bool tail_aligned =
      a.s_tail_single ? rows_16_byte_aligned(a.s_tail_single, a.lds_tail) : rows_16_byte_aligned(a.s_tail, a.lds_tail);
  return rows_16_byte_aligned(a.s, a.lds) && tail_aligned && rows_16_byte_aligned(a.as, a.ldas) &&
         rows_16_byte_aligned(a.as_tail, a.ldas_tail) && a.implied_nb % 2 == 0 && a.ns_head % 2 == 0 &&
         a.nv_head % 2 == 0;
}

bool fits_staged(std::int64_t ns, std::int64_t m) { return ns <= max_inputs && m <= max_outputs; }

// One opt-in to the shared memory per kernel (the flag is the kernel's own).
// S's tail in fp32: its columns (none otherwise).
int tail_floats(const RitzUpdateArgs& a) { return a.s_tail_single ? a.ns - a.ns_head : 0; }

template <int NT, int W, bool Implied, bool Single>
void run_staged(const RitzUpdateArgs& a, const RitzConstants<NT, false>& constants, cudaStream_t stream) {
  const auto kernel = ritz_update_staged_kernel<NT, W, Implied, Single>;
  static std::atomic<std::uint64_t> opted_in{0};
  detail::allow_shared_memory(kernel, shared_memory_limit - staged_static_bytes(NT, Implied), opted_in);
  const int staged_as = a.nv - a.implied_nb;
  const int pairs = staged_pairs(a.ns, staged_as, NT, Implied, tail_floats(a));
  kernel<<<static_cast<unsigned>(ritz_update_blocks(a.rows, a.ns, a.nv, a.m, a.implied_nb, tail_floats(a))), pairs * 64,
           pairs * staged_pair_bytes(a.ns, staged_as, tail_floats(a)), stream>>>(a, constants);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <int NT, bool Implied, bool Single = false>
void run_staged_copies(const RitzUpdateArgs& a, const RitzConstants<NT, false>& constants, cudaStream_t stream) {
  if (copies_pair(a))
    run_staged<NT, 2, Implied, Single>(a, constants, stream);
  else
    run_staged<NT, 1, Implied, Single>(a, constants, stream);
}

template <int NT>
void launch_staged(const RitzUpdateArgs& a, const double* c, const double* lambda, const std::int64_t* position,
                   const ImpliedColumns* implied, cudaStream_t stream) {
  RitzConstants<NT, false> constants{};
  set_residual_constants(constants, a.nb, lambda, position);
  for (int i = 0; i < a.ns; ++i)
    for (int j = 0; j < a.m; ++j) constants.c[i * 8 * NT + j] = c[i * a.m + j];
  if (!implied) return run_staged_copies<NT, false>(a, constants, stream);
  for (int j = 0; j < a.implied_nb; ++j) {
    constants.theta[j] = implied->theta[j];
    constants.ax_column[j] = static_cast<int>(implied->column[j]);
  }
  if (a.s_tail_single) return run_staged_copies<NT, true, true>(a, constants, stream);  // (implied only)
  run_staged_copies<NT, true>(a, constants, stream);
}

// launch_staged<NT> for NT = tiles, the output tiles of 8 (at most 6).
template <int NT = 1>
void launch_tiles(int tiles, const RitzUpdateArgs& a, const double* c, const double* lambda,
                  const std::int64_t* position, const ImpliedColumns* implied, cudaStream_t stream) {
  if constexpr (NT < max_outputs / 8)
    if (tiles > NT) return launch_tiles<NT + 1>(tiles, a, c, lambda, position, implied, stream);
  launch_staged<NT>(a, c, lambda, position, implied, stream);
}

}  // namespace

bool ritz_update_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb, bool implied) {
  if (implied) return fits_staged(ns, m) && nb >= 1 && nb <= m && nv >= nb && nv <= ns;
  return ns >= 1 && ns <= wide_inputs && nv == ns && m >= 1 && m <= wide_outputs && nb >= 1 && nb <= m;
}

bool ritz_update_single_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb) {
  return ritz_update_fits(ns, nv, m, nb, true);
}

std::int64_t ritz_update_blocks(std::int64_t rows, std::int64_t ns, std::int64_t nv, std::int64_t m,
                                std::int64_t implied_nb, std::int64_t tail_floats) {
  if (fits_staged(ns, m)) {  // one tile a pair a step
    const std::int64_t tiles = (rows + step_rows - 1) / step_rows;
    const std::int64_t pairs =
        staged_pairs(int(ns), int(nv - implied_nb), int(m + 7) / 8, implied_nb > 0, int(tail_floats));
    return std::clamp<std::int64_t>((tiles + pairs - 1) / pairs, 1, staged_max_blocks);
  }
  return wide_update_blocks(rows);
}

void ritz_update(RitzUpdateArgs a, const double* c, const double* lambda, const std::int64_t* position,
                 const ImpliedColumns* implied, cudaStream_t stream) {
  a.k_steps = (a.ns + 7) / 8;
  a.implied_nb = implied ? a.nb : 0;
  BLOCKEIGS_ASSERT(!a.s_tail_single || (implied && fits_staged(a.ns, a.m) && a.r_single));
  const int tiles = (a.m + 7) / 8;
  if (fits_staged(a.ns, a.m)) return launch_tiles(tiles, a, c, lambda, position, implied, stream);
  launch_wide_update(tiles, a, c, lambda, position, stream);  // more than 64 inputs or 48 outputs
}

}  // namespace blockeigs::solver::cuda
