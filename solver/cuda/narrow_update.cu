// Y = alpha * X * S + beta * Z for narrow, tall blocks (k1, k2 <= 64), with S
// in shared memory. Each thread computes 4 adjacent columns of one row of Y;
// the threads of one row sit in one warp, which reads the whole row of X
// before any of them writes, so Y may be X itself (an in-place change of
// basis) or Z (an update).
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int update_threads = 256;
constexpr int tile = 4;
constexpr int max_width = 64;

// Threads per row: the column tiles rounded up to a power of two, so that a
// warp holds whole rows.
int lanes_per_row(std::int64_t k2) {
  int tiles = static_cast<int>((k2 + tile - 1) / tile), lanes = 1;
  while (lanes < tiles) lanes *= 2;
  return lanes;
}

template <class T>
__global__ void __launch_bounds__(update_threads)
    narrow_update_kernel(std::int64_t rows, int k1, int k2, int lanes, T alpha, const T* x, std::int64_t ldx,
                         const T* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy) {
  // S with its columns padded to lanes * tile (zeros), so the inner loop needs no guard.
  __shared__ T S[max_width * max_width];
  const int width = lanes * tile;
  for (int e = threadIdx.x; e < k1 * width; e += blockDim.x) {
    const int i = e / width, j = e % width;
    S[e] = j < k2 ? s[i * k2 + j] : T(0);
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, row_in_warp = lane / lanes, b0 = (lane % lanes) * tile;
  const int rows_per_warp = 32 / lanes;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  const std::int64_t warp = blockIdx.x * std::int64_t(blockDim.x / 32) + threadIdx.x / 32;
  // Warp-uniform loop: every lane reaches the __syncwarp below.
  for (std::int64_t base = warp * rows_per_warp; base < rows; base += warps * rows_per_warp) {
    const std::int64_t r = base + row_in_warp;
    const bool active = r < rows && b0 < k2;
    T acc[tile] = {};
    if (active) {
      const T* xr = x + r * ldx;
      const T* sb = S + b0;
#pragma unroll 4
      for (int i = 0; i < k1; ++i) {
        const T xv = xr[i];
#pragma unroll
        for (int j = 0; j < tile; ++j) acc[j] = fma(xv, sb[i * width + j], acc[j]);
      }
    }
    __syncwarp();
    if (active) {
      T* yr = y + r * ldy;
      const T* zr = z ? z + r * ldz : nullptr;
#pragma unroll
      for (int j = 0; j < tile; ++j) {
        const int c = b0 + j;
        if (c < k2) yr[c] = beta == T(0) ? alpha * acc[j] : alpha * acc[j] + beta * zr[c];
      }
    }
  }
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
  const int lanes = lanes_per_row(k2);
  const std::int64_t rows_per_block = std::int64_t(update_threads / 32) * (32 / lanes);
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 8192));
  narrow_update_kernel<T><<<blocks, update_threads, 0, stream>>>(rows, static_cast<int>(k1), static_cast<int>(k2), lanes,
                                                                 alpha, x, ldx, s, beta, z, ldz, y, ldy);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void narrow_update(std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t, const float*,
                            float, const float*, std::int64_t, float*, std::int64_t, cudaStream_t);
template void narrow_update(std::int64_t, std::int64_t, std::int64_t, double, const double*, std::int64_t,
                            const double*, double, const double*, std::int64_t, double*, std::int64_t, cudaStream_t);

}  // namespace blockeigs::solver::cuda
