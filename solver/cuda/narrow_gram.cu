// X^T Y for narrow, tall blocks (k1, k2 <= 32). Each thread block owns a
// fixed chunk of rows and walks it in tiles of tile_rows rows: the whole
// block first copies a tile of X and of Y into shared memory with coalesced
// loads (many in flight), then each thread accumulates a 4 x 4 piece of the
// output, in double, over the tile's rows of its group (groups take every
// groups-th row). At the end the groups' pieces are added in group order, so
// each chunk's partial, and the caller's ordered sum over chunks, have the
// same bits on every run and every GPU.
//
// (A first version read X and Y straight from global memory in each thread:
// 8-byte loads, a few in flight per thread, 1.0-1.5 TB/s on an H200.)
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int gram_threads = 256;
constexpr int piece = 4;
constexpr int tile_rows = 64;
// At most 64 output pieces (32 x 32 entries), so that at least 4 groups share
// the rows; the groups' pieces (groups x pieces <= 256) fit in 32 KB.
constexpr int max_pieces = 64;

int pieces_of(std::int64_t k) { return static_cast<int>((k + piece - 1) / piece); }

// Copies rows x cols of a row-major block into dense shared memory.
template <class T>
__device__ void stage(double* __restrict__ dst, const T* __restrict__ src, std::int64_t ld, int rows, int cols) {
  const int total = rows * cols;
#pragma unroll 4
  for (int e = threadIdx.x; e < total; e += gram_threads) {
    const int r = e / cols, c = e - r * cols;
    dst[e] = static_cast<double>(src[r * ld + c]);
  }
}

template <class T>
__global__ void __launch_bounds__(gram_threads)
    narrow_gram_kernel(std::int64_t rows, int k1, int k2, const T* __restrict__ x, std::int64_t ldx,
                       const T* __restrict__ y, std::int64_t ldy, std::int64_t chunk_rows, double* partial) {
  extern __shared__ double shared[];
  double* xs = shared;                   // tile_rows x k1
  double* ys = shared + tile_rows * k1;  // tile_rows x k2
  const int pieces2 = (k2 + piece - 1) / piece;
  const int pieces = ((k1 + piece - 1) / piece) * pieces2;
  const int groups = gram_threads / pieces;
  const int t = threadIdx.x, my_piece = t % pieces, group = t / pieces;
  const int a0 = (my_piece / pieces2) * piece, b0 = (my_piece % pieces2) * piece;
  // Columns past the block's edge are read as column 0 and never stored.
  int ai[piece], bi[piece];
#pragma unroll
  for (int i = 0; i < piece; ++i) {
    ai[i] = a0 + i < k1 ? a0 + i : 0;
    bi[i] = b0 + i < k2 ? b0 + i : 0;
  }
  const std::int64_t begin = blockIdx.x * chunk_rows, end = min(rows, begin + chunk_rows);

  double acc[piece][piece] = {};
  for (std::int64_t first = begin; first < end; first += tile_rows) {
    const int n = static_cast<int>(end - first < tile_rows ? end - first : tile_rows);
    __syncthreads();  // the previous tile is no longer read
    stage(xs, x + first * ldx, ldx, n, k1);
    stage(ys, y + first * ldy, ldy, n, k2);
    __syncthreads();
    if (group < groups)
      for (int r = group; r < n; r += groups) {
        const double* xr = xs + r * k1;
        const double* yr = ys + r * k2;
        double xv[piece], yv[piece];
#pragma unroll
        for (int i = 0; i < piece; ++i) xv[i] = xr[ai[i]], yv[i] = yr[bi[i]];
#pragma unroll
        for (int i = 0; i < piece; ++i)
#pragma unroll
          for (int j = 0; j < piece; ++j) acc[i][j] = fma(xv[i], yv[j], acc[i][j]);
      }
  }
  __syncthreads();
  double* sums = shared;  // groups x pieces x 16, reusing the tiles' memory
  if (group < groups) {
    double* mine = sums + (group * pieces + my_piece) * piece * piece;
#pragma unroll
    for (int i = 0; i < piece; ++i)
#pragma unroll
      for (int j = 0; j < piece; ++j) mine[i * piece + j] = acc[i][j];
  }
  __syncthreads();
  const int entries = k1 * k2;
  for (int o = t; o < entries; o += gram_threads) {
    const int a = o / k2, b = o % k2;
    const int at = (a / piece) * pieces2 + b / piece, e = (a % piece) * piece + b % piece;
    double s = 0.0;
    for (int g = 0; g < groups; ++g) s += sums[(g * pieces + at) * piece * piece + e];
    partial[blockIdx.x * std::int64_t(entries) + o] = s;
  }
}

}  // namespace

bool narrow_gram_fits(std::int64_t k1, std::int64_t k2) {
  return k1 > 0 && k2 > 0 && std::int64_t(pieces_of(k1)) * pieces_of(k2) <= max_pieces;
}

template <class T>
void narrow_gram_partials(std::int64_t rows, std::int64_t k1, std::int64_t k2, const T* x, std::int64_t ldx,
                          const T* y, std::int64_t ldy, std::int64_t chunk_rows, double* partial,
                          cudaStream_t stream) {
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  if (chunks == 0) return;
  // The tiles (<= 64 x 64 doubles) or the groups' pieces (256 x 16 doubles): 32 KB at most.
  const std::size_t bytes =
      sizeof(double) * std::max<std::size_t>(tile_rows * (k1 + k2), std::size_t(gram_threads) * piece * piece);
  narrow_gram_kernel<T><<<static_cast<unsigned>(chunks), gram_threads, bytes, stream>>>(
      rows, static_cast<int>(k1), static_cast<int>(k2), x, ldx, y, ldy, chunk_rows, partial);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void narrow_gram_partials(std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t,
                                   const float*, std::int64_t, std::int64_t, double*, cudaStream_t);
template void narrow_gram_partials(std::int64_t, std::int64_t, std::int64_t, const double*, std::int64_t,
                                   const double*, std::int64_t, std::int64_t, double*, cudaStream_t);

}  // namespace blockeigs::solver::cuda
