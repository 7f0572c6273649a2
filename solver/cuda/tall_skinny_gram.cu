// G = X^T [Y1 Y2] on tall row-major fp64 blocks (X up to 64 columns,
// [Y1 Y2] up to 40) in one pass, on the tensor cores (DMMA, mma.m8n8k4).
//
// Why not cuBLAS: a Gram matrix over millions of rows is a product with
// k = rows. block_reductions_cuda.cu cuts it into chunks for a batched gemm,
// which reaches the copy rate for one product, but LOBPCG wants two with the
// same left side ([X P Z]^T Z and [X P Z]^T A Z): apart they read [X P Z]
// twice (H200, 2M rows, 60 x 20 each: 0.29 + 0.42 ms), and one batched gemm
// holding both ran at 60% of the copy rate (0.63 ms). Here [X P Z] is read
// once.
//
// The Gram product's K dimension is the rows, so the MMA fragments come
// straight from memory: for 4 rows r0..r0+3, lane l (g = l / 4, t = l % 4)
// holds A(g, t) = X(r0 + t, 8 m + g) of every 8-column tile m of X and
// B(t, g) = Y(r0 + t, 8 n + g) of every tile n of [Y1 Y2]; a warp's load of
// one tile touches 4 rows x 64 bytes, all of them used. A warp keeps up to
// 4 x 5 tiles of the product in its accumulators (lane l: rows g, columns
// 2 t + {0, 1} of each 8 x 8 tile; past 32 columns of X two warps share a
// step's rows, one per half of X), takes 8 rows a step with all their loads
// issued first, and strides through its block's rows. The block's warps are
// then added in a fixed order and written as the block's partial sum.
//
// The grid and every thread's rows depend on the row count alone, and each
// lane adds its rows in order: the partial sums, and with them the product,
// are the same bits on any GPU.
#include "solver/cuda/tall_skinny_gram.hpp"

#include <algorithm>

#include "solver/cuda/narrow_update_args.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using detail::mma_8x8x4;

constexpr int warps_per_block = 4;
constexpr int k_steps = 2;  // 4-row MMA steps per warp step: their loads are in flight together
constexpr int step_rows = 4 * k_steps;
constexpr int max_x_tiles = 8, max_y_tiles = 5;  // 64 and 40 columns
// X's tiles per warp: its accumulators are tiles_per_warp x NT 8 x 8 tiles,
// 2 doubles each per lane (up to 80 registers); the whole product (8 x 5
// tiles) would take 160 and spill. So the warps of a block split X's tiles
// into groups (two past 32 columns) and each group reads [Y1 Y2] (from L1).
constexpr int tiles_per_warp = 4;
// Rows per block: the partial sums (one kx x ky matrix per block) stay a few
// MB, and a 2M-row block makes ~1000 blocks, so the last wave is short.
constexpr std::int64_t rows_per_block = 2048;
constexpr std::int64_t max_blocks = 4096;  // block-stride beyond

template <int NT>  // tiles of 8 columns of [Y1 Y2]
__global__ void __launch_bounds__(warps_per_block * 32, 3) tall_skinny_gram_kernel(const TallSkinnyGramArgs a) {
  __shared__ double block_sum[8 * max_x_tiles][8 * NT + 1];
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int x_tiles = (a.kx + 7) / 8, ky = a.ky1 + a.ky2;
  // Warp w takes X's tiles [first_tile, first_tile + tiles_per_warp) of
  // group w % groups, and every slots-th step of the block's rows.
  const int groups = (x_tiles + tiles_per_warp - 1) / tiles_per_warp;  // divides warps_per_block
  const int slots = warps_per_block / groups, slot = warp / groups;
  const int first_tile = (warp % groups) * tiles_per_warp;
  const int my_tiles = min(tiles_per_warp, x_tiles - first_tile);
  // This lane's column of [Y1 Y2] in each tile, as an offset into a row of
  // Y1 or of Y2, with bit n of the masks saying which (or neither, past the
  // last), and bit m of in_x whether its column of tile m is in X.
  int y_offset[NT];
  unsigned in_y1 = 0, in_y2 = 0, in_x = 0;
#pragma unroll
  for (int n = 0; n < NT; ++n) {
    const int c = 8 * n + g;
    y_offset[n] = c < a.ky1 ? c : c - a.ky1;
    if (c < a.ky1) in_y1 |= 1u << n;
    else if (c < ky) in_y2 |= 1u << n;
  }
#pragma unroll
  for (int m = 0; m < tiles_per_warp; ++m)
    if (8 * (first_tile + m) + g < a.kx) in_x |= 1u << m;
  double acc[tiles_per_warp][NT][2];
#pragma unroll
  for (int m = 0; m < tiles_per_warp; ++m)
#pragma unroll
    for (int n = 0; n < NT; ++n) acc[m][n][0] = acc[m][n][1] = 0.0;

  for (std::int64_t chunk = blockIdx.x; chunk * rows_per_block < a.rows; chunk += gridDim.x) {
    const std::int64_t end = std::min(a.rows, (chunk + 1) * rows_per_block);
    for (std::int64_t first = chunk * rows_per_block + slot * step_rows; first < end;
         first += slots * step_rows) {  // warp-uniform
      double xf[k_steps][tiles_per_warp], yf[k_steps][NT];
#pragma unroll
      for (int s = 0; s < k_steps; ++s) {
        const std::int64_t row = first + 4 * s + t;
        const unsigned in = row < end ? ~0u : 0u;
        const double* x_row = a.x + row * a.ldx + 8 * first_tile + g;
        const double* y1_row = a.y1 + row * a.ldy1;
        const double* y2_row = a.y2 + row * a.ldy2;
#pragma unroll
        for (int m = 0; m < tiles_per_warp; ++m) xf[s][m] = (in_x & in) >> m & 1u ? x_row[8 * m] : 0.0;
#pragma unroll
        for (int n = 0; n < NT; ++n)
          yf[s][n] = (in_y1 & in) >> n & 1u   ? y1_row[y_offset[n]]
                     : (in_y2 & in) >> n & 1u ? y2_row[y_offset[n]]
                                              : 0.0;
      }
#pragma unroll
      for (int s = 0; s < k_steps; ++s)
#pragma unroll
        for (int m = 0; m < tiles_per_warp; ++m) {
          if (m >= my_tiles) break;  // warp-uniform
#pragma unroll
          for (int n = 0; n < NT; ++n) mma_8x8x4(acc[m][n], xf[s][m], yf[s][n]);
        }
    }
  }

  // The sums of each group's warps, added in slot order.
  for (int s = 0; s < slots; ++s) {
    if (slot == s)
#pragma unroll
      for (int m = 0; m < tiles_per_warp; ++m) {
        if (m >= my_tiles) break;
#pragma unroll
        for (int n = 0; n < NT; ++n)
#pragma unroll
          for (int p = 0; p < 2; ++p) {
            double& sum = block_sum[8 * (first_tile + m) + g][8 * n + 2 * t + p];
            sum = s == 0 ? acc[m][n][p] : sum + acc[m][n][p];
          }
      }
    __syncthreads();
  }
  double* const out = a.partial + std::int64_t(blockIdx.x) * a.kx * ky;
  for (int e = static_cast<int>(threadIdx.x); e < a.kx * ky; e += blockDim.x) out[e] = block_sum[e / ky][e % ky];
}

template <int NT>
void launch(const TallSkinnyGramArgs& a, cudaStream_t stream) {
  tall_skinny_gram_kernel<NT>
      <<<static_cast<unsigned>(tall_skinny_gram_blocks(a.rows)), warps_per_block * 32, 0, stream>>>(a);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool tall_skinny_gram_fits(std::int64_t kx, std::int64_t ky) {
  return kx >= 1 && kx <= 8 * max_x_tiles && ky >= 1 && ky <= 8 * max_y_tiles;
}

std::int64_t tall_skinny_gram_blocks(std::int64_t rows) {
  return std::clamp<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, max_blocks);
}

void tall_skinny_gram(const TallSkinnyGramArgs& a, cudaStream_t stream) {
  switch ((a.ky1 + a.ky2 + 7) / 8) {
    case 1: return launch<1>(a, stream);
    case 2: return launch<2>(a, stream);
    case 3: return launch<3>(a, stream);
    case 4: return launch<4>(a, stream);
    default: return launch<5>(a, stream);
  }
}

}  // namespace blockeigs::solver::cuda
