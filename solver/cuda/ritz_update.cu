// LOBPCG's Ritz update and its next residuals in one pass, in fp64 on the
// tensor cores: from the basis S and A S (ns <= 64 columns each) and the Ritz
// coefficients C (ns x m, m <= 48),
//   Y = S C and AY = A S C               (the next [X P] and [A X A P]),
//   R = AY(:, 0:nb) - Y(:, 0:nb) Lambda  (the next residual block),
// with each thread block's sums of squares of R's and Y(:, 0:nb)'s columns.
// Residual j goes to R's column r_column[j] (LOBPCG puts its active ones
// first, so that soft locking seldom moves them).
// Apart, this is two updates and a residual pass that reads X and A X back
// (H200, 2M rows, block 20: 0.61 + 0.61 + 0.45 ms); here S and A S are read
// once and the residuals come from the accumulators.
//
// A warp takes 16 rows a step, one m16n8k8 tile of rows (Hopper's fp64 MMA,
// twice the rate of the m8n8k4 this kernel used before): it loads the rows
// of S straight into its A fragments (lane (g, t) the entries (g or g + 8,
// 8 ks + t or + 4) of every k-step: 8-byte loads, each instruction eight
// full 32-byte sectors, all of a step in flight), multiplies them by C, which
// the block keeps in shared memory as the B fragments, then does the same
// with A S. No shared-memory staging: the rows pass through registers once,
// and the shared-memory traffic is C's fragments alone. Lane (g, t) ends
// with Y and AY at rows g and g + 8, columns 8 nt + 2 t + {0, 1}, so it forms
// those residual entries itself. H200, 2M rows, 60 -> 40 outputs: 1.11 ms,
// 95% of the copy rate (the m8n8k4 version, 8-row steps staged through
// shared memory: 1.30 ms, latency-bound at 30% occupancy).
//
// Wider shapes (LOBPCG's blocks of 21 to 32: up to 96 inputs and 64 outputs)
// take a second variant of the same kernel: C, too large for the kernel's
// parameters there, comes through global memory into dynamic shared memory,
// and a step holds 12 k-steps of fragments, at 2 blocks an SM: 71-82% of the
// copy rate at 66 -> 44 to 96 -> 64 (H200), against 95% for the narrow one.
//
// The grid depends on the row count alone and each lane adds its rows in
// order, so the partial sums, and the norms, do not depend on the GPU.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "solver/cuda/device_support.cuh"
#include "solver/cuda/narrow_block_kernels.hpp"
#include "solver/cuda/narrow_update_args.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using namespace detail;

constexpr int warps_per_block = 4;
constexpr int step_rows = 16;  // one m16n8k8 tile of rows
constexpr int max_inputs = 64, max_outputs = 48;    // the narrow variant: C in the parameters
constexpr int wide_inputs = 96, wide_outputs = 64;  // the wide one: C through global memory
constexpr int max_k_steps = max_inputs / 8, wide_k_steps = wide_inputs / 8;
// Blocks per SM the registers must allow: a step's A fragments (4 registers
// a k-step) and both accumulators (8 NT each) are live together.
constexpr int min_blocks_per_sm(int nt, int ks) { return ks > max_k_steps || nt >= 6 ? 2 : 3; }
constexpr std::int64_t max_blocks = 4096;  // grid-stride beyond

template <int NT, bool Wide>  // NT tiles of 8 outputs
struct RitzConstants {
  double c[max_inputs * 8 * NT];  // C padded with zeros, row-major: <= 24 KB of kernel parameters
  double lambda[max_outputs];
  int r_column[max_outputs];  // R's column for residual j
};
template <int NT>
struct RitzConstants<NT, true> {
  const double* c;  // C padded with zeros to 8 KS x 8 NT, row-major, in device memory
  double lambda[wide_outputs];
  int r_column[wide_outputs];
};

__device__ __forceinline__ void store_pair(double* p, double v0, double v1, bool second) {
  if (second && pair_aligned(p)) {
    *reinterpret_cast<double2*>(p) = double2{v0, v1};
  } else {
    p[0] = v0;
    if (second) p[1] = v1;
  }
}

// The A fragments of rows [first, first + 16) of `src` for every k-step of 8
// inputs; zero past the rows and past ns (so NaN in unused columns never
// reaches an accumulator).
template <int KS>
__device__ __forceinline__ void load_fragments(const RitzUpdateArgs& a, const double* src, std::int64_t ld,
                                               std::int64_t first, double (&frag)[KS][4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const bool in0 = first + g < a.rows, in1 = first + g + 8 < a.rows;
  const double* const row0 = src + (in0 ? first + g : 0) * ld;
  const double* const row1 = src + (in1 ? first + g + 8 : 0) * ld;
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    const int c0 = 8 * ks + t, c1 = c0 + 4;
    frag[ks][0] = in0 && c0 < a.ns ? row0[c0] : 0.0;
    frag[ks][1] = in1 && c0 < a.ns ? row1[c0] : 0.0;
    frag[ks][2] = in0 && c1 < a.ns ? row0[c1] : 0.0;
    frag[ks][3] = in1 && c1 < a.ns ? row1[c1] : 0.0;
  }
}

// acc = the 16 rows whose fragments are in `frag` times C (in shared memory).
template <int NT, int KS, int CS>
__device__ __forceinline__ void multiply(const RitzUpdateArgs& a, const double (&frag)[KS][4],
                                         const double (*C)[CS], double (&acc)[NT][4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0;
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    if (ks >= a.k_steps) break;  // warp-uniform
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
      mma_16x8x8(acc[nt], frag[ks], C[8 * ks + t][8 * nt + g], C[8 * ks + t + 4][8 * nt + g]);
  }
}

// KS k-steps of 8 inputs at most: max_k_steps (narrow) or wide_k_steps.
template <int NT, int KS>
__global__ void __launch_bounds__(warps_per_block * 32, min_blocks_per_sm(NT, KS))
    ritz_update_kernel(const RitzUpdateArgs a, const __grid_constant__ RitzConstants<NT, (KS > max_k_steps)> k) {
  constexpr bool wide = KS > max_k_steps;
  constexpr int K2 = 8 * NT, outputs = wide ? wide_outputs : max_outputs;
  constexpr int c_stride = K2 + 4;  // = 4 or 12 mod 16: a B fragment's 4 rows x 8 columns take two wavefronts
  double (*C)[c_stride];
  if constexpr (wide) {
    extern __shared__ double wide_c[];  // 8 KS x c_stride: up to 52 KB
    C = reinterpret_cast<double (*)[c_stride]>(wide_c);
  } else {
    __shared__ double narrow_c[max_inputs][c_stride];
    C = narrow_c;
  }
  __shared__ double warp_sums[warps_per_block][2][outputs];
  for (int e = threadIdx.x; e < 8 * KS * K2; e += blockDim.x) C[e / K2][e % K2] = k.c[e];
  for (int e = threadIdx.x; e < warps_per_block * 2 * outputs; e += blockDim.x) (&warp_sums[0][0][0])[e] = 0.0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const int warp_in_block = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t first = warp * step_rows; first < a.rows; first += warps * step_rows) {  // warp-uniform
    double frag[KS][4], y[NT][4], ay[NT][4];
    load_fragments<KS>(a, a.s, a.lds, first, frag);
    multiply<NT, KS>(a, frag, C, y);
    load_fragments<KS>(a, a.as, a.ldas, first, frag);
    multiply<NT, KS>(a, frag, C, ay);
    // This step's sums of squares of the lane's columns 8 nt + 2 t + {0, 1}
    // (in registers only here: across the steps they live in shared memory).
    double sum_r[NT][2] = {}, sum_y[NT][2] = {};
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // rows g and g + 8
      const std::int64_t row = first + g + 8 * h;
      if (row >= a.rows) continue;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int c = 8 * nt + 2 * t;
        if (c >= a.m) continue;
        const bool second = c + 1 < a.m;
        const double y0 = y[nt][2 * h], y1 = y[nt][2 * h + 1], ay0 = ay[nt][2 * h], ay1 = ay[nt][2 * h + 1];
        store_pair(a.y + row * a.ldy + c, y0, y1, second);
        store_pair(a.ay + row * a.lday + c, ay0, ay1, second);
        if (c >= a.nb) continue;
        const bool second_r = c + 1 < a.nb;
        const double r0 = ay0 - k.lambda[c] * y0;
        const double r1 = second_r ? ay1 - k.lambda[c + 1] * y1 : 0.0;
        double* const r_row = a.r + row * a.ldr;
        if (!second_r || k.r_column[c + 1] == k.r_column[c] + 1) {
          store_pair(r_row + k.r_column[c], r0, r1, second_r);
        } else {  // residuals placed apart (LOBPCG's active ones first)
          r_row[k.r_column[c]] = r0;
          r_row[k.r_column[c + 1]] = r1;
        }
        sum_r[nt][0] = fma(r0, r0, sum_r[nt][0]);
        sum_r[nt][1] = fma(r1, r1, sum_r[nt][1]);
        sum_y[nt][0] = fma(y0, y0, sum_y[nt][0]);
        if (second_r) sum_y[nt][1] = fma(y1, y1, sum_y[nt][1]);
      }
    }
    // Lanes of equal t hold the same columns: add over g (lane bits 2-4) in a
    // fixed pattern, then lane t (g = 0) adds the step's sums to the warp's.
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        if (8 * nt >= a.nb) continue;  // warp-uniform
#pragma unroll
        for (int offset = 4; offset < 32; offset *= 2) {
          sum_r[nt][p] += __shfl_xor_sync(0xffffffffu, sum_r[nt][p], offset);
          sum_y[nt][p] += __shfl_xor_sync(0xffffffffu, sum_y[nt][p], offset);
        }
        const int c = 8 * nt + 2 * t + p;
        if (g == 0 && c < a.nb) {
          warp_sums[warp_in_block][0][c] += sum_r[nt][p];
          warp_sums[warp_in_block][1][c] += sum_y[nt][p];
        }
      }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < 2 * a.nb; e += blockDim.x) {
    double s = 0.0;
    for (int w = 0; w < warps_per_block; ++w) s += warp_sums[w][e / a.nb][e % a.nb];
    a.partial[std::int64_t(blockIdx.x) * 2 * a.nb + e] = s;
  }
}

template <int NT, int KS>
void launch(const RitzUpdateArgs& a, const double* c, const double* lambda, const std::int64_t* position,
            cudaStream_t stream) {
  constexpr bool wide = KS > max_k_steps;
  RitzConstants<NT, wide> constants{};
  for (int j = 0; j < a.nb; ++j) {
    constants.lambda[j] = lambda[j];
    constants.r_column[j] = static_cast<int>(position[j]);
  }
  const auto kernel = ritz_update_kernel<NT, KS>;
  const unsigned blocks = static_cast<unsigned>(ritz_update_blocks(a.rows));
  if constexpr (wide) {
    // C padded to 8 KS x 8 NT, in device memory freed in stream order after
    // the kernel.
    std::vector<double> padded(std::size_t(8 * KS) * 8 * NT, 0.0);
    for (int i = 0; i < a.ns; ++i)
      for (int j = 0; j < a.m; ++j) padded[std::size_t(i) * 8 * NT + j] = c[i * a.m + j];
    const device_ops::support::StreamArray<double> c_device(stream, padded.size());
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(c_device.data(), padded.data(), padded.size() * sizeof(double),
                                         cudaMemcpyHostToDevice, stream));  // pageable: staged before it returns
    constants.c = c_device.data();
    const int bytes = 8 * KS * (8 * NT + 4) * int(sizeof(double));
    static std::atomic<std::uint64_t> opted_in{0};
    detail::allow_shared_memory(kernel, bytes, opted_in);
    kernel<<<blocks, warps_per_block * 32, bytes, stream>>>(a, constants);
  } else {
    for (int i = 0; i < a.ns; ++i)
      for (int j = 0; j < a.m; ++j) constants.c[i * 8 * NT + j] = c[i * a.m + j];
    kernel<<<blocks, warps_per_block * 32, 0, stream>>>(a, constants);
  }
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// launch<NT, KS> for NT = tiles, the output tiles of 8 (at most 6 narrow, 8 wide).
template <int KS, int NT = 1>
void launch_tiles(int tiles, const RitzUpdateArgs& a, const double* c, const double* lambda,
                  const std::int64_t* position, cudaStream_t stream) {
  constexpr int max_tiles = (KS > max_k_steps ? wide_outputs : max_outputs) / 8;
  if constexpr (NT < max_tiles)
    if (tiles > NT) return launch_tiles<KS, NT + 1>(tiles, a, c, lambda, position, stream);
  launch<NT, KS>(a, c, lambda, position, stream);
}

}  // namespace

bool ritz_update_fits(std::int64_t ns, std::int64_t m, std::int64_t nb) {
  return ns >= 1 && ns <= wide_inputs && m >= 1 && m <= wide_outputs && nb >= 1 && nb <= m;
}

std::int64_t ritz_update_blocks(std::int64_t rows) {
  constexpr std::int64_t rows_per_block = std::int64_t(warps_per_block) * step_rows;
  return std::clamp<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, max_blocks);
}

void ritz_update(RitzUpdateArgs a, const double* c, const double* lambda, const std::int64_t* position,
                 cudaStream_t stream) {
  a.k_steps = (a.ns + 7) / 8;
  const int tiles = (a.m + 7) / 8;
  if (a.ns <= max_inputs && a.m <= max_outputs)
    return launch_tiles<max_k_steps>(tiles, a, c, lambda, position, stream);
  launch_tiles<wide_k_steps>(tiles, a, c, lambda, position, stream);  // more than 64 inputs or 48 outputs
}

}  // namespace blockeigs::solver::cuda
