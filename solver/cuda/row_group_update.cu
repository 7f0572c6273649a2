// Y = alpha * [X1 X2] S + beta * Z for tall blocks of up to 32 input and 16
// output columns whose rows split into pairs of values (even widths, leading
// dimensions and column offsets, 2-value aligned): block CG's updates at 16
// right-hand sides. No block-wide tile and no block barrier: a group of
// G = K2 / 2 lanes owns a row, each lane loads its pairs of the input row
// (coalesced: a warp reads 32 / G whole rows at once) into the warp's own
// staging rows in shared memory, and after a warp barrier each lane forms two
// adjacent output columns from the whole row, written as one pair. Loads of the next rows are not held up by a barrier behind a
// slow tile, which is what kept the tiled kernel (narrow_update.cu) and
// cuBLAS at ~2.2 TB/s on 2M x 16 fp64 (H200) against 3.4 TB/s for a copy.
//
// A row of Y is written only after every lane of its warp has read its part
// of that row of X1, X2 (the warp barrier waits for all of them) and Z, so Y
// may overlap the inputs in any columns of the same rows. (Exchanging the
// pairs by shuffles instead, 240f7a1, cost 0.34 ms for 32 -> 16 columns at 2M
// rows on an H200.)
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int group_threads = 256;
constexpr int rows_per_lane = 2;  // rows in flight per lane per step
constexpr int max_inputs = 32, max_outputs = 16;
constexpr std::int64_t max_blocks = 8192;  // grid-stride beyond: each block loads S once

template <class T>
struct PairOf;
template <>
struct PairOf<float> {
  using type = float2;
};
template <>
struct PairOf<double> {
  using type = double2;
};

template <class T, int K1, int K2>
struct GroupCoefficients {
  T values[K1 * K2];  // S padded with zeros to K1 x K2, row-major
};

template <class T, int K1, int K2>
__global__ void __launch_bounds__(group_threads)
    row_group_update_kernel(std::int64_t rows, int k1x, int k1, int k2, T alpha, const T* x, std::int64_t ldx,
                            const T* x2, std::int64_t ldx2, const __grid_constant__ GroupCoefficients<T, K1, K2> s,
                            T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy) {
  using Pair = typename PairOf<T>::type;
  constexpr int G = K2 / 2;                  // lanes per row: lane c owns output columns 2c, 2c + 1
  constexpr int rows_per_warp = 32 / G;
  constexpr int C = K1 / 2;                  // input pairs per row
  constexpr int L = (C + G - 1) / G;         // input pairs each lane loads
  __shared__ Pair S2[K1][G];                 // S[i][2c], S[i][2c + 1]
  // Each warp's input rows, staged so that every lane of a group can read the
  // whole row: one shared load per pair where shuffles took four 32-bit
  // exchanges. One pair of padding per row keeps the rows of a warp read at
  // once in different banks.
  constexpr int warps_per_block = group_threads / 32;
  __shared__ Pair staged[warps_per_block][rows_per_lane][rows_per_warp][C + 1];
  for (int e = threadIdx.x; e < K1 * G; e += blockDim.x) {
    const int i = e / G, c = e - i * G;
    S2[i][c] = Pair{s.values[i * K2 + 2 * c], s.values[i * K2 + 2 * c + 1]};
  }
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / G, c = lane - group * G, warp_in_block = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const std::int64_t step = warps * rows_per_warp * rows_per_lane;
  const bool writes = 2 * c < k2;
  for (std::int64_t first = warp * rows_per_warp * rows_per_lane; first < rows; first += step) {  // warp-uniform
    Pair in[rows_per_lane][L];
    Pair old[rows_per_lane];
#pragma unroll
    for (int r = 0; r < rows_per_lane; ++r) {
      const std::int64_t row = first + r * rows_per_warp + group;
      const bool valid = row < rows;
#pragma unroll
      for (int t = 0; t < L; ++t) {
        const int col = 2 * (c + t * G);
        in[r][t] = Pair{T(0), T(0)};
        if (valid && col < k1) {
          const T* src = col < k1x ? x + row * ldx + col : x2 + row * ldx2 + (col - k1x);
          // An odd width's last value alone: the slot after it is not ours
          // (padding or another block, possibly NaN).
          in[r][t] = col + 1 < k1 ? *reinterpret_cast<const Pair*>(src) : Pair{src[0], T(0)};
        }
      }
      old[r] = Pair{T(0), T(0)};
      if (valid && writes && beta != T(0)) {
        const T* zr = z + row * ldz + 2 * c;
        old[r] = 2 * c + 1 < k2 ? *reinterpret_cast<const Pair*>(zr) : Pair{zr[0], T(0)};
      }
    }
#pragma unroll
    for (int r = 0; r < rows_per_lane; ++r)
#pragma unroll
      for (int t = 0; t < L; ++t)
        if (c + t * G < C) staged[warp_in_block][r][group][c + t * G] = in[r][t];
    __syncwarp();  // every lane's part of the rows is read (so Y may overlap them) and staged
    T acc[rows_per_lane][2] = {};
#pragma unroll
    for (int q = 0; q < C; ++q) {
      const Pair s0 = S2[2 * q][c], s1 = S2[2 * q + 1][c];
#pragma unroll
      for (int r = 0; r < rows_per_lane; ++r) {
        const Pair v = staged[warp_in_block][r][group][q];
        acc[r][0] = fma(v.y, s1.x, fma(v.x, s0.x, acc[r][0]));
        acc[r][1] = fma(v.y, s1.y, fma(v.x, s0.y, acc[r][1]));
      }
    }
    __syncwarp();  // the staged rows are read before the next step overwrites them
#pragma unroll
    for (int r = 0; r < rows_per_lane; ++r) {
      const std::int64_t row = first + r * rows_per_warp + group;
      if (row >= rows || !writes) continue;
      T* yr = y + row * ldy + 2 * c;
      const T v0 = beta == T(0) ? alpha * acc[r][0] : alpha * acc[r][0] + beta * old[r].x;
      const T v1 = beta == T(0) ? alpha * acc[r][1] : alpha * acc[r][1] + beta * old[r].y;
      if (2 * c + 1 < k2)
        *reinterpret_cast<Pair*>(yr) = Pair{v0, v1};
      else
        yr[0] = v0;
    }
  }
}

template <class T, int K1, int K2>
void launch(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, T alpha, const T* x,
            std::int64_t ldx, const T* x2, std::int64_t ldx2, const double* s, T beta, const T* z, std::int64_t ldz,
            T* y, std::int64_t ldy, cudaStream_t stream) {
  GroupCoefficients<T, K1, K2> coefficients{};
  for (std::int64_t i = 0; i < k1; ++i)
    for (std::int64_t j = 0; j < k2; ++j) coefficients.values[i * K2 + j] = static_cast<T>(s[i * k2 + j]);
  constexpr std::int64_t rows_per_block = (group_threads / 32) * (32 / (K2 / 2)) * rows_per_lane;
  const auto blocks = static_cast<unsigned>(
      std::clamp<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, max_blocks));
  row_group_update_kernel<T, K1, K2><<<blocks, group_threads, 0, stream>>>(
      rows, static_cast<int>(k1x), static_cast<int>(k1), static_cast<int>(k2), alpha, x, ldx, x2, ldx2, coefficients,
      beta, z, ldz, y, ldy);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

bool pair_aligned(const void* p, std::size_t pair_bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % pair_bytes == 0;
}

}  // namespace

template <class T>
bool row_group_update_fits(std::int64_t k1x, std::int64_t k1, std::int64_t k2, const T* x, std::int64_t ldx,
                           const T* x2, std::int64_t ldx2, const T* z, std::int64_t ldz, const T* y,
                           std::int64_t ldy) {
  const std::size_t pair = 2 * sizeof(T);
  if (k1 < 1 || k1 > max_inputs || k2 < 1 || k2 > max_outputs || k1x % 2 != 0) return false;
  if (ldx % 2 != 0 || ldy % 2 != 0 || !pair_aligned(x, pair) || !pair_aligned(y, pair)) return false;
  if (k1x < k1 && (ldx2 % 2 != 0 || !pair_aligned(x2, pair))) return false;
  if (z && (ldz % 2 != 0 || !pair_aligned(z, pair))) return false;
  return true;
}

template <class T>
void row_group_update(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, T alpha, const T* x,
                      std::int64_t ldx, const T* x2, std::int64_t ldx2, const double* s, T beta, const T* z,
                      std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream) {
  if (rows == 0) return;
  if (k1 <= 16)
    launch<T, 16, 16>(rows, k1x, k1, k2, alpha, x, ldx, x2, ldx2, s, beta, z, ldz, y, ldy, stream);
  else
    launch<T, 32, 16>(rows, k1x, k1, k2, alpha, x, ldx, x2, ldx2, s, beta, z, ldz, y, ldy, stream);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                 \
  template bool row_group_update_fits(std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t, const T*, \
                                      std::int64_t, const T*, std::int64_t, const T*, std::int64_t);            \
  template void row_group_update(std::int64_t, std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, \
                                 const T*, std::int64_t, const double*, T, const T*, std::int64_t, T*, std::int64_t, \
                                 cudaStream_t);
BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::cuda
