// Y = alpha * X * S + beta * Z for narrow, tall blocks (k1, k2 <= 32). S sits
// in shared memory; the block walks its rows in tiles of tile_rows rows,
// copying each tile of X into shared memory with coalesced loads (many in
// flight) before any thread computes, then each thread forms 4 adjacent
// columns of one row of Y. Because a tile of X is wholly read before its rows
// of Y are written, Y may be X itself (an in-place change of basis) or Z.
//
// The tile's rows are padded to an odd number of values so that the rows a
// warp reads at once fall in different shared-memory banks (unpadded, 16
// doubles per row put 8 rows of a warp in one bank). Wider blocks are left to
// cuBLAS: at 48 columns this kernel is bound by shared-memory loads (one
// value of S per multiply-add; measured 3.2 ms against cuBLAS's 0.5 ms).
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int update_threads = 256;
constexpr int piece = 4;
constexpr int tile_rows = 64;
constexpr int max_width = 32;

template <class T>
__global__ void __launch_bounds__(update_threads)
    narrow_update_kernel(std::int64_t rows, int k1, int k2, T alpha, const T* x, std::int64_t ldx, const T* s,
                         T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy) {
  extern __shared__ unsigned char shared_bytes[];
  // S with its columns padded to a whole number of pieces (zeros), then the tile of X.
  const int pieces = (k2 + piece - 1) / piece, width = pieces * piece;
  T* S = reinterpret_cast<T*>(shared_bytes);
  T* xs = S + k1 * width;
  const int stride = k1 | 1;  // odd: conflict-free rows
  for (int e = threadIdx.x; e < k1 * width; e += blockDim.x) {
    const int i = e / width, j = e - i * width;
    S[e] = j < k2 ? s[i * k2 + j] : T(0);
  }
  const std::int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t first = tile * tile_rows;
    const int n = static_cast<int>(rows - first < tile_rows ? rows - first : tile_rows);
    __syncthreads();  // S is ready; the previous tile is no longer read
    const T* xt = x + first * ldx;
#pragma unroll 4
    for (int e = threadIdx.x; e < n * k1; e += blockDim.x) {
      const int r = e / k1, c = e - r * k1;
      xs[r * stride + c] = xt[r * ldx + c];
    }
    __syncthreads();
    for (int item = threadIdx.x; item < n * pieces; item += blockDim.x) {
      const int r = item / pieces, b0 = (item - r * pieces) * piece;
      const T* xr = xs + r * stride;
      const T* sb = S + b0;
      T acc[piece] = {};
#pragma unroll 4
      for (int i = 0; i < k1; ++i) {
        const T xv = xr[i];
#pragma unroll
        for (int j = 0; j < piece; ++j) acc[j] = fma(xv, sb[i * width + j], acc[j]);
      }
      const std::int64_t row = first + r;
      T* yr = y + row * ldy;
      const T* zr = z ? z + row * ldz : nullptr;
#pragma unroll
      for (int j = 0; j < piece; ++j) {
        const int c = b0 + j;
        if (c < k2) yr[c] = beta == T(0) ? alpha * acc[j] : alpha * acc[j] + beta * zr[c];
      }
    }
  }
}

std::size_t shared_bytes_for(std::int64_t k1, std::int64_t k2, std::size_t value_size) {
  const std::int64_t width = (k2 + piece - 1) / piece * piece;
  return value_size * static_cast<std::size_t>(k1 * width + tile_rows * (k1 | 1));
}

}  // namespace

bool narrow_update_fits(std::int64_t k1, std::int64_t k2) {
  return k1 >= 1 && k1 <= max_width && k2 >= 1 && k2 <= max_width;
}

template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const T* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy,
                   cudaStream_t stream) {
  if (rows == 0) return;
  const std::size_t bytes = shared_bytes_for(k1, k2, sizeof(T));  // <= 25 KB (fp64, 32 x 32)
  const std::int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles, 4096));
  narrow_update_kernel<T><<<blocks, update_threads, bytes, stream>>>(rows, static_cast<int>(k1), static_cast<int>(k2),
                                                                     alpha, x, ldx, s, beta, z, ldz, y, ldy);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void narrow_update(std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t, const float*,
                            float, const float*, std::int64_t, float*, std::int64_t, cudaStream_t);
template void narrow_update(std::int64_t, std::int64_t, std::int64_t, double, const double*, std::int64_t,
                            const double*, double, const double*, std::int64_t, double*, std::int64_t, cudaStream_t);

}  // namespace blockeigs::solver::cuda
