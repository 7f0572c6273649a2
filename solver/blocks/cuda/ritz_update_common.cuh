// What LOBPCG's Ritz-update kernels share (ritz_update.cu, the staged
// kernel; ritz_update_wide.cu, the register-loaded one for wider blocks):
// their shape limits, constants, and the store of a step's outputs,
// residuals and sums of squares. Private to those two files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "solver/blocks/cuda/narrow_update_args.cuh"

namespace blockeigs::solver::cuda::ritz_detail {

using detail::pair_aligned;

constexpr int step_rows = 16;                       // one m16n8k8 tile of rows
constexpr int max_inputs = 64, max_outputs = 48;    // the staged kernel: C in the parameters
constexpr int wide_inputs = 96, wide_outputs = 64;  // the wide one: C through global memory
constexpr int max_k_steps = max_inputs / 8, wide_k_steps = wide_inputs / 8;

template <int NT, bool Wide>  // NT tiles of 8 outputs
struct RitzConstants {
  double c[max_inputs * 8 * NT];  // C padded with zeros, row-major: <= 24 KB of kernel parameters
  double lambda[max_outputs];
  int r_column[max_outputs];  // R's column for residual j
  // A X implied (RitzUpdateArgs::implied_nb): A X(:, j) = theta_j S(:, j) + S(:, ax_column[j]).
  double theta[max_outputs];
  int ax_column[max_outputs];
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
// R in fp32 (RitzUpdateArgs::r_single): rounded once, here.
__device__ __forceinline__ void store_pair(float* p, double v0, double v1, bool second) {
  if (second && pair_aligned(p)) {
    *reinterpret_cast<float2*>(p) = float2{float(v0), float(v1)};
  } else {
    p[0] = float(v0);
    if (second) p[1] = float(v1);
  }
}

// A step's outputs from its accumulators: Y and AY at rows first + g and
// first + g + 8, columns 8 (first_tile + tile_step nt) + 2 t + {0, 1} for
// accumulator tile nt, and R there. The step's sums of squares of R's and
// Y(:, 0:nb)'s columns are added to the warp's, `sums` (in shared memory
// across the steps).
template <int NT, int Outputs, bool Single = false>
__device__ __forceinline__ void store_step(const RitzUpdateArgs& a, const double* lambda, const int* r_column,
                                           std::int64_t first, const double (&y)[NT][4], const double (&ay)[NT][4],
                                           double (&sums)[2][Outputs], int first_tile = 0, int tile_step = 1) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  // This step's sums of squares of the lane's columns (in registers only
  // here: across the steps they live in shared memory).
  double sum_r[NT][2] = {}, sum_y[NT][2] = {};
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // rows g and g + 8
    const std::int64_t row = first + g + 8 * h;
    if (row >= a.rows) continue;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int c = 8 * (first_tile + tile_step * nt) + 2 * t;
      if (c >= a.m) continue;
      const bool second = c + 1 < a.m;
      const double y0 = y[nt][2 * h], y1 = y[nt][2 * h + 1], ay0 = ay[nt][2 * h], ay1 = ay[nt][2 * h + 1];
      store_pair(a.y + row * a.ldy + c, y0, y1, second);
      if (c >= a.ay_first)
        store_pair(a.ay + row * a.lday + c, ay0, ay1, second);
      else if (second && c + 1 >= a.ay_first)
        a.ay[row * a.lday + c + 1] = ay1;
      if (c >= a.nb) continue;
      const bool second_r = c + 1 < a.nb;
      const double r0 = ay0 - lambda[c] * y0;
      const double r1 = second_r ? ay1 - lambda[c + 1] * y1 : 0.0;
      auto* const r_row = [&] {
        if constexpr (Single)
          return a.r_single + row * a.ldr;
        else
          return a.r + row * a.ldr;
      }();
      if (!second_r || r_column[c + 1] == r_column[c] + 1) {
        store_pair(r_row + r_column[c], r0, r1, second_r);
      } else {                    // residuals placed apart (LOBPCG's active ones first)
        r_row[r_column[c]] = r0;  // (rounded where R is in fp32)
        r_row[r_column[c + 1]] = r1;
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
      if (8 * (first_tile + tile_step * nt) >= a.nb) continue;  // warp-uniform
#pragma unroll
      for (int offset = 4; offset < 32; offset *= 2) {
        sum_r[nt][p] += __shfl_xor_sync(0xffffffffu, sum_r[nt][p], offset);
        sum_y[nt][p] += __shfl_xor_sync(0xffffffffu, sum_y[nt][p], offset);
      }
      const int c = 8 * (first_tile + tile_step * nt) + 2 * t + p;
      if (g == 0 && c < a.nb) {
        sums[0][c] += sum_r[nt][p];
        sums[1][c] += sum_y[nt][p];
      }
    }
}

// The block's partial sums (2 nb values) from its warps' (`warps` of them),
// added in warp order; after a __syncthreads.
template <int Outputs>
__device__ __forceinline__ void write_block_sums(const RitzUpdateArgs& a, const double (*warp_sums)[2][Outputs],
                                                 int warps) {
  for (int e = threadIdx.x; e < 2 * a.nb; e += blockDim.x) {
    double s = 0.0;
    for (int w = 0; w < warps; ++w) s += warp_sums[w][e / a.nb][e % a.nb];
    a.partial[std::int64_t(blockIdx.x) * 2 * a.nb + e] = s;
  }
}

// The residuals' Ritz values and R's columns, as either kernel takes them.
template <class Constants>
void set_residual_constants(Constants& constants, int nb, const double* lambda, const std::int64_t* position) {
  for (int j = 0; j < nb; ++j) {
    constants.lambda[j] = lambda[j];
    constants.r_column[j] = static_cast<int>(position[j]);
  }
}

// The wide kernel (ritz_update_wide.cu): its grid for `rows`, and its launch
// for `tiles` tiles of 8 outputs.
std::int64_t wide_update_blocks(std::int64_t rows);
void launch_wide_update(int tiles, const RitzUpdateArgs& a, const double* c, const double* lambda,
                        const std::int64_t* position, cudaStream_t stream);

}  // namespace blockeigs::solver::cuda::ritz_detail
