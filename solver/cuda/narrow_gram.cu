// X^T Y for narrow, tall blocks (k1, k2 <= 32): each thread block owns a fixed
// chunk of rows; its threads form groups that take every groups-th row of the
// chunk, and within a group each thread accumulates a 4 x 4 tile of the
// output in registers (in double). The groups' tiles are then added in group
// order, so each chunk's partial, and the ordered sum over chunks done by the
// caller, have the same bits on every run and every GPU.
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int gram_threads = 256;
constexpr int tile = 4;
// At most 64 output tiles (32 x 32 entries), so that at least 4 groups share
// a chunk's rows; the groups' tiles (groups x tiles <= 256) fit in 32 KB.
constexpr int max_tiles = 64;

int tiles_of(std::int64_t k) { return static_cast<int>((k + tile - 1) / tile); }

template <class T>
__global__ void __launch_bounds__(gram_threads)
    narrow_gram_kernel(std::int64_t rows, int k1, int k2, const T* __restrict__ x, std::int64_t ldx,
                       const T* __restrict__ y, std::int64_t ldy, std::int64_t chunk_rows, double* partial) {
  __shared__ double sums[gram_threads * tile * tile];
  const int tiles2 = (k2 + tile - 1) / tile;
  const int tiles = ((k1 + tile - 1) / tile) * tiles2;
  const int groups = gram_threads / tiles;
  const int t = threadIdx.x, my_tile = t % tiles, group = t / tiles;
  const int a0 = (my_tile / tiles2) * tile, b0 = (my_tile % tiles2) * tile;
  const std::int64_t begin = blockIdx.x * chunk_rows, end = min(rows, begin + chunk_rows);

  if (group < groups) {
    double acc[tile][tile] = {};
    // Columns past the block's edge read as zero (and are never written).
    const int na = min(tile, k1 - a0), nb = min(tile, k2 - b0);
#pragma unroll 2
    for (std::int64_t r = begin + group; r < end; r += groups) {
      const T* xr = x + r * ldx + a0;
      const T* yr = y + r * ldy + b0;
      double xv[tile], yv[tile];
#pragma unroll
      for (int i = 0; i < tile; ++i) xv[i] = i < na ? static_cast<double>(xr[i]) : 0.0;
#pragma unroll
      for (int j = 0; j < tile; ++j) yv[j] = j < nb ? static_cast<double>(yr[j]) : 0.0;
#pragma unroll
      for (int i = 0; i < tile; ++i)
#pragma unroll
        for (int j = 0; j < tile; ++j) acc[i][j] = fma(xv[i], yv[j], acc[i][j]);
    }
    double* mine = sums + (group * tiles + my_tile) * tile * tile;
#pragma unroll
    for (int i = 0; i < tile; ++i)
#pragma unroll
      for (int j = 0; j < tile; ++j) mine[i * tile + j] = acc[i][j];
  }
  __syncthreads();
  const int entries = k1 * k2;
  for (int o = t; o < entries; o += gram_threads) {
    const int a = o / k2, b = o % k2;
    const int at = (a / tile) * tiles2 + b / tile, e = (a % tile) * tile + b % tile;
    double s = 0.0;
    for (int g = 0; g < groups; ++g) s += sums[(g * tiles + at) * tile * tile + e];
    partial[blockIdx.x * std::int64_t(entries) + o] = s;
  }
}

}  // namespace

bool narrow_gram_fits(std::int64_t k1, std::int64_t k2) {
  return k1 > 0 && k2 > 0 && std::int64_t(tiles_of(k1)) * tiles_of(k2) <= max_tiles;
}

template <class T>
void narrow_gram_partials(std::int64_t rows, std::int64_t k1, std::int64_t k2, const T* x, std::int64_t ldx,
                          const T* y, std::int64_t ldy, std::int64_t chunk_rows, double* partial,
                          cudaStream_t stream) {
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  if (chunks == 0) return;
  narrow_gram_kernel<T><<<static_cast<unsigned>(chunks), gram_threads, 0, stream>>>(
      rows, static_cast<int>(k1), static_cast<int>(k2), x, ldx, y, ldy, chunk_rows, partial);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void narrow_gram_partials(std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t,
                                   const float*, std::int64_t, std::int64_t, double*, cudaStream_t);
template void narrow_gram_partials(std::int64_t, std::int64_t, std::int64_t, const double*, std::int64_t,
                                   const double*, std::int64_t, std::int64_t, double*, cudaStream_t);

}  // namespace blockeigs::solver::cuda
