// LOBPCG's Ritz update and its next residuals in one pass, in fp64 on the
// tensor cores (DMMA, mma.m8n8k4): from the basis S and A S (ns <= 64
// columns each) and the Ritz coefficients C (ns x m, m <= 48),
//   Y = S C and AY = A S C               (the next [X P] and [A X A P]),
//   R = AY(:, 0:nb) - Y(:, 0:nb) Lambda  (the next residual block),
// with each thread block's sums of squares of R's and Y(:, 0:nb)'s columns.
// Residual j goes to R's column r_column[j] (LOBPCG puts its active ones
// first, so that soft locking seldom moves them).
// Apart, this is two updates and a residual pass that reads X and A X back
// (H200, 2M rows, block 20: 0.61 + 0.61 + 0.45 ms); here S and A S are read
// once and the residuals come from the accumulators.
//
// The scheme of dmma_update.cu: a warp takes 8 rows a step, loads them (all
// in flight), stages them in its own rows of shared memory and multiplies
// them as one 8-row tile by C, which the block keeps in shared memory; first
// S's rows into Y's accumulators, then A S's into AY's. Lane l holds the
// entries (l / 4, 2 (l % 4) + {0, 1}) of each 8 x 8 tile of both, so it forms
// those residual entries itself. One tile a step, not dmma_update.cu's two:
// with both accumulators live, two tiles took 167-198 registers and allowed
// 2-3 blocks of 4 warps per SM; one takes 96 and allows 5 (H200, 2M rows:
// 40 outputs 1.35 -> 1.31 ms, 32 outputs 1.12 -> 0.95 ms, 92% of the copy
// rate), for twice the shared-memory loads of C per row.
//
// The grid depends on the row count alone and each lane adds its rows in
// order, so the partial sums, and the norms, do not depend on the GPU.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "solver/cuda/narrow_update_args.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using namespace detail;

constexpr int warps_per_block = 4;
constexpr int row_tiles = 1;                  // 8-row MMA tiles per step
constexpr int step_rows = 8 * row_tiles;
// Blocks per SM the registers must allow (65536 / (5 * 128) = 102 each);
// 48 outputs need more than that without spilling.
constexpr int min_blocks_per_sm(int nt) { return nt >= 6 ? 4 : 5; }
constexpr int max_inputs = 64, max_outputs = 48;
constexpr std::int64_t max_blocks = 4096;  // grid-stride beyond

template <int NT>  // NT tiles of 8 outputs
struct RitzConstants {
  double c[max_inputs * 8 * NT];  // C padded with zeros, row-major: <= 24 KB of kernel parameters
  double lambda[max_outputs];
  int r_column[max_outputs];  // R's column for residual j
};

// Values col and col + 1 of a row of k (zero past k): one vector load where aligned.
__device__ __forceinline__ double2 load_pair(const double* row, int col, int k) {
  const double* p = row + col;
  if (col + 1 < k && pair_aligned(p)) return *reinterpret_cast<const double2*>(p);
  return double2{col < k ? p[0] : 0.0, col + 1 < k ? p[1] : 0.0};
}

__device__ __forceinline__ void store_pair(double* p, double v0, double v1, bool second) {
  if (second && pair_aligned(p)) {
    *reinterpret_cast<double2*>(p) = double2{v0, v1};
  } else {
    p[0] = v0;
    if (second) p[1] = v1;
  }
}

// acc = rows [first, first + step_rows) of `src` times C (in shared memory).
template <int NT, int CS>
__device__ __forceinline__ void multiply_rows(const RitzUpdateArgs& a, const double* src, std::int64_t ld,
                                              std::int64_t first, double* staged, const double (*C)[CS],
                                              double (&acc)[row_tiles][NT][2]) {
  const int col = 2 * (static_cast<int>(threadIdx.x) % 32);
  double2 in[step_rows];
#pragma unroll
  for (int r = 0; r < step_rows; ++r)
    in[r] = first + r < a.rows && col < a.ns ? load_pair(src + (first + r) * ld, col, a.ns) : double2{0.0, 0.0};
  __syncwarp();  // the last multiply has read the staged rows
  if (col < 4 * a.k_steps)  // zeros past ns up to the last whole group of 4 inputs
#pragma unroll
    for (int r = 0; r < step_rows; ++r) *reinterpret_cast<double2*>(staged + r * a.stride + col) = in[r];
  __syncwarp();
  multiply_staged<row_tiles>(staged, a.stride, a.k_steps, C, acc);
}

template <int NT>
__global__ void __launch_bounds__(warps_per_block * 32, min_blocks_per_sm(NT))
    ritz_update_kernel(const RitzUpdateArgs a, const __grid_constant__ RitzConstants<NT> k) {
  constexpr int K2 = 8 * NT;
  constexpr int c_stride = K2 + 4;  // = 4 or 12 mod 16: a B fragment's 4 rows x 8 columns hit distinct banks
  __shared__ double C[max_inputs][c_stride];
  __shared__ double warp_sums[warps_per_block][2][max_outputs];
  extern __shared__ double staged_rows[];  // warps_per_block x step_rows x a.stride
  for (int e = threadIdx.x; e < max_inputs * K2; e += blockDim.x) C[e / K2][e % K2] = k.c[e];
  for (int e = threadIdx.x; e < warps_per_block * 2 * max_outputs; e += blockDim.x) (&warp_sums[0][0][0])[e] = 0.0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const int warp_in_block = static_cast<int>(threadIdx.x) / 32;
  double* const staged = staged_rows + warp_in_block * step_rows * a.stride;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t first = warp * step_rows; first < a.rows; first += warps * step_rows) {  // warp-uniform
    double y[row_tiles][NT][2], ay[row_tiles][NT][2];
    multiply_rows<NT>(a, a.s, a.lds, first, staged, C, y);
    multiply_rows<NT>(a, a.as, a.ldas, first, staged, C, ay);
    // This step's sums of squares of the lane's columns 8 nt + 2 t + {0, 1}
    // (in registers only here: across the steps they live in shared memory).
    double sum_r[NT][2] = {}, sum_y[NT][2] = {};
#pragma unroll
    for (int m = 0; m < row_tiles; ++m) {
      const std::int64_t row = first + 8 * m + g;
      if (row >= a.rows) continue;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int c = 8 * nt + 2 * t;
        if (c >= a.m) continue;
        const bool second = c + 1 < a.m;
        store_pair(a.y + row * a.ldy + c, y[m][nt][0], y[m][nt][1], second);
        store_pair(a.ay + row * a.lday + c, ay[m][nt][0], ay[m][nt][1], second);
        if (c >= a.nb) continue;
        const bool second_r = c + 1 < a.nb;
        const double r0 = ay[m][nt][0] - k.lambda[c] * y[m][nt][0];
        const double r1 = second_r ? ay[m][nt][1] - k.lambda[c + 1] * y[m][nt][1] : 0.0;
        double* const r_row = a.r + row * a.ldr;
        if (!second_r || k.r_column[c + 1] == k.r_column[c] + 1) {
          store_pair(r_row + k.r_column[c], r0, r1, second_r);
        } else {  // residuals placed apart (LOBPCG's active ones first)
          r_row[k.r_column[c]] = r0;
          r_row[k.r_column[c + 1]] = r1;
        }
        sum_r[nt][0] = fma(r0, r0, sum_r[nt][0]);
        sum_r[nt][1] = fma(r1, r1, sum_r[nt][1]);
        sum_y[nt][0] = fma(y[m][nt][0], y[m][nt][0], sum_y[nt][0]);
        if (second_r) sum_y[nt][1] = fma(y[m][nt][1], y[m][nt][1], sum_y[nt][1]);
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

template <int NT>
void launch(const RitzUpdateArgs& a, const double* c, const double* lambda, const std::int64_t* position,
            cudaStream_t stream) {
  RitzConstants<NT> constants{};
  for (int i = 0; i < a.ns; ++i)
    for (int j = 0; j < a.m; ++j) constants.c[i * 8 * NT + j] = c[i * a.m + j];
  for (int j = 0; j < a.nb; ++j) {
    constants.lambda[j] = lambda[j];
    constants.r_column[j] = static_cast<int>(position[j]);
  }
  const auto kernel = ritz_update_kernel<NT>;
  const std::size_t bytes = std::size_t(warps_per_block) * step_rows * a.stride * sizeof(double);
  static std::atomic<std::uint64_t> opted_in{0};
  allow_shared_memory(kernel, warps_per_block * step_rows * (max_inputs + 4) * int(sizeof(double)), opted_in);
  kernel<<<static_cast<unsigned>(ritz_update_blocks(a.rows)), warps_per_block * 32, bytes, stream>>>(a, constants);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool ritz_update_fits(std::int64_t ns, std::int64_t m, std::int64_t nb) {
  return ns >= 1 && ns <= max_inputs && m >= 1 && m <= max_outputs && nb >= 1 && nb <= m;
}

std::int64_t ritz_update_blocks(std::int64_t rows) {
  constexpr std::int64_t rows_per_block = std::int64_t(warps_per_block) * step_rows;
  return std::clamp<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, max_blocks);
}

void ritz_update(RitzUpdateArgs a, const double* c, const double* lambda, const std::int64_t* position,
                 cudaStream_t stream) {
  a.k_steps = (a.ns + 3) / 4;
  a.stride = (4 * a.k_steps + 11) / 16 * 16 + 4;
  switch ((a.m + 7) / 8) {
    case 1: return launch<1>(a, c, lambda, position, stream);
    case 2: return launch<2>(a, c, lambda, position, stream);
    case 3: return launch<3>(a, c, lambda, position, stream);
    case 4: return launch<4>(a, c, lambda, position, stream);
    case 5: return launch<5>(a, c, lambda, position, stream);
    default: return launch<6>(a, c, lambda, position, stream);
  }
}

}  // namespace blockeigs::solver::cuda
