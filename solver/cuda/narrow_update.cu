// Y = alpha * X * S + beta * Z for narrow, tall blocks (k1, k2 <= 32): one
// thread per row. A thread loads its whole row of X into registers (k1
// independent loads in flight), multiplies it by S, which every thread of a
// warp reads at the same address from shared memory (a broadcast), and writes
// its row of Y. The widths are rounded up to 8, 16 or 32 at compile time so
// that the row and the sums live in registers; the padding reads as zero.
// As a thread has read all of its row before it writes, Y may be X itself (an
// in-place change of basis) or Z.
//
// Two earlier versions staged 64- or 128-row tiles of X in shared memory and
// had each thread form 4 columns of one or two rows: they ran at ~2 TB/s on
// an H200 (2M x 16 fp64, 0.28 ms for 2 blocks), no faster than cuBLAS, with
// too few bytes in flight per SM between the tiles' barriers.
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int update_threads = 256;
constexpr int max_width = 32;

template <class T, int K1, int K2>
__global__ void __launch_bounds__(update_threads)
    rowwise_update_kernel(std::int64_t rows, int k1, int k2, T alpha, const T* x, std::int64_t ldx,
                          const T* __restrict__ s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy) {
  __shared__ T S[K1 * K2];  // s padded with zeros to K1 x K2
  for (int e = threadIdx.x; e < K1 * K2; e += blockDim.x) {
    const int i = e / K2, j = e % K2;
    S[e] = i < k1 && j < k2 ? s[i * k2 + j] : T(0);
  }
  __syncthreads();
  // One row per thread and no loop over rows: in a grid-stride loop the
  // compiler hoists all of S into registers (K1 x K2 of them) and spills.
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r < rows) {
    const T* xr = x + r * ldx;
    T xv[K1];
#pragma unroll
    for (int i = 0; i < K1; ++i) xv[i] = i < k1 ? xr[i] : T(0);
    T acc[K2];
#pragma unroll
    for (int j = 0; j < K2; ++j) acc[j] = T(0);
#pragma unroll
    for (int i = 0; i < K1; ++i)
#pragma unroll
      for (int j = 0; j < K2; ++j) acc[j] = fma(xv[i], S[i * K2 + j], acc[j]);
    T* yr = y + r * ldy;
    if (beta == T(0)) {
#pragma unroll
      for (int j = 0; j < K2; ++j)
        if (j < k2) yr[j] = alpha * acc[j];
    } else {
      const T* zr = z + r * ldz;
      T zv[K2];
#pragma unroll
      for (int j = 0; j < K2; ++j) zv[j] = j < k2 ? zr[j] : T(0);
#pragma unroll
      for (int j = 0; j < K2; ++j)
        if (j < k2) yr[j] = alpha * acc[j] + beta * zv[j];
    }
  }
}

int padded(std::int64_t k) { return k <= 8 ? 8 : k <= 16 ? 16 : 32; }

template <class T, int K1, int K2>
void launch(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx, const T* s,
            T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream) {
  // Each block reads its own copy of S (up to 8 KB, from L2): at most 1/32 of
  // the traffic of its rows.
  const auto blocks = static_cast<unsigned>((rows + update_threads - 1) / update_threads);
  rowwise_update_kernel<T, K1, K2><<<blocks, update_threads, 0, stream>>>(
      rows, static_cast<int>(k1), static_cast<int>(k2), alpha, x, ldx, s, beta, z, ldz, y, ldy);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T, int K1>
void launch_for_k2(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const T* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream) {
  switch (padded(k2)) {
    case 8: return launch<T, K1, 8>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
    case 16: return launch<T, K1, 16>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
    default: return launch<T, K1, 32>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
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
  switch (padded(k1)) {
    case 8: return launch_for_k2<T, 8>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
    case 16: return launch_for_k2<T, 16>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
    default: return launch_for_k2<T, 32>(rows, k1, k2, alpha, x, ldx, s, beta, z, ldz, y, ldy, stream);
  }
}

template void narrow_update(std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t, const float*,
                            float, const float*, std::int64_t, float*, std::int64_t, cudaStream_t);
template void narrow_update(std::int64_t, std::int64_t, std::int64_t, double, const double*, std::int64_t,
                            const double*, double, const double*, std::int64_t, double*, std::int64_t, cudaStream_t);

}  // namespace blockeigs::solver::cuda
