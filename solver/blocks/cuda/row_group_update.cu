// Y = alpha * [X1 X2] S + beta * Z for tall blocks of up to 64 input and 16
// output columns, in one pass: the solvers' changes of basis (SVQB, LOBPCG's
// projection and transform of W in one update of [X P W], block CG's search
// blocks). No block-wide tile and no block barrier: a group of G = 8 lanes
// owns a row, each lane loads its pairs of the input row (coalesced: a warp
// reads 4 whole rows at once) into the warp's own staging rows in shared
// memory, and after a warp barrier each lane forms two adjacent output
// columns from the whole row. Loads of the next rows are not held up by a
// barrier behind a slow tile, which is what kept a block-tiled kernel and
// cuBLAS below the copy rate.
//
// Why 16 outputs: each multiply-add pair costs a 16-byte shared load of S and
// one of the staged row, and a 16-byte shared load serves a quarter warp per
// cycle, broadcast or not. With 8 rows a warp (16 outputs) that is ~2 cycles
// per row and input pair, which keeps the copy rate up to 32 inputs. Groups
// of 10 or 16 lanes (20 or 32 outputs) carry fewer rows per load and are
// slower, as was a lane-per-row kernel reading S as kernel-parameter
// operands (docs/benchmarks/block-ops.md#kernel-notes). Wider outputs go to
// the fp64 tensor-core kernel (dmma_update.cu) or cuBLAS (block_ops_cuda.cu
// decides).
//
// The compile-time input count K1 is the actual one rounded up to 16, 32, 48
// or 64; padding rows of S are zero and padding inputs are never loaded.
//
// Pairs are loaded and stored as one vector where both values lie in the same
// block and the address is aligned, as two scalars otherwise (odd leading
// dimensions or column offsets, a pair that straddles X1 and X2, an odd
// width's last value, whose neighbour is not ours and may be NaN).
//
// A row of Y is written only after every lane of its warp has read its part
// of that row of X1, X2 (the warp barrier waits for all of them) and Z, so Y
// may overlap the inputs in any columns of the same rows. Pairs go through
// shared memory rather than shuffles, which are slower
// (docs/benchmarks/block-ops.md#narrow-updates).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "solver/blocks/cuda/narrow_update_args.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using namespace detail;

constexpr int group_threads = 256;
constexpr int rows_per_lane = 2;  // rows in flight per lane per step
constexpr int max_inputs = 64, max_outputs = 16;
constexpr std::int64_t max_blocks = 8192;  // grid-stride beyond: each block loads S once

template <class T, int K1, int K2>
struct GroupCoefficients {
  T values[K1 * K2];  // S padded with zeros to K1 x K2, row-major (<= 16 KB: a kernel parameter)
};

template <class T, int K1, int K2>
__global__ void __launch_bounds__(group_threads)
    row_group_update_kernel(const UpdateArgs<T> a, const __grid_constant__ GroupCoefficients<T, K1, K2> s) {
  using Pair = typename PairOf<T>::type;
  constexpr int G = K2 / 2;  // lanes per row: lane c owns output columns 2c, 2c + 1
  constexpr int rows_per_warp = 32 / G;
  constexpr int C = K1 / 2;           // input pairs per row
  constexpr int L = (C + G - 1) / G;  // input pairs each lane loads
  __shared__ Pair S2[K1][G];          // S[i][2c], S[i][2c + 1]
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
  const bool in_group = group < rows_per_warp;  // false for the lanes left over when G does not divide 32
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const std::int64_t step = warps * rows_per_warp * rows_per_lane;
  const bool writes = in_group && 2 * c < a.k2;
  for (std::int64_t first = warp * rows_per_warp * rows_per_lane; first < a.rows; first += step) {  // warp-uniform
    Pair in[rows_per_lane][L];
    Pair old[rows_per_lane];
#pragma unroll
    for (int r = 0; r < rows_per_lane; ++r) {
      const std::int64_t row = first + r * rows_per_warp + group;
      const bool valid = in_group && row < a.rows;
#pragma unroll
      for (int t = 0; t < L; ++t) {
        const int col = 2 * (c + t * G);
        in[r][t] = valid && col < a.k1 ? load_input_pair(a, row, col) : Pair{T(0), T(0)};
      }
      old[r] = Pair{T(0), T(0)};
      if (valid && writes && a.beta != T(0)) {
        const T* zr = a.z + row * a.ldz + 2 * c;
        const bool second = 2 * c + 1 < a.k2;
        old[r] = second && pair_aligned(zr) ? *reinterpret_cast<const Pair*>(zr) : Pair{zr[0], second ? zr[1] : T(0)};
      }
    }
    if (in_group) {
#pragma unroll
      for (int r = 0; r < rows_per_lane; ++r)
#pragma unroll
        for (int t = 0; t < L; ++t)
          if (c + t * G < C) staged[warp_in_block][r][group][c + t * G] = in[r][t];
    }
    __syncwarp();  // every lane's part of the rows is read (so Y may overlap them) and staged
    T acc[rows_per_lane][2] = {};
    if (in_group) {
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
    }
    __syncwarp();  // the staged rows are read before the next step overwrites them
#pragma unroll
    for (int r = 0; r < rows_per_lane; ++r) {
      const std::int64_t row = first + r * rows_per_warp + group;
      if (row >= a.rows || !writes) continue;
      T* yr = a.y + row * a.ldy + 2 * c;
      const T v0 = a.beta == T(0) ? a.alpha * acc[r][0] : a.alpha * acc[r][0] + a.beta * old[r].x;
      const T v1 = a.beta == T(0) ? a.alpha * acc[r][1] : a.alpha * acc[r][1] + a.beta * old[r].y;
      if (2 * c + 1 < a.k2) {
        if (pair_aligned(yr)) {
          *reinterpret_cast<Pair*>(yr) = Pair{v0, v1};
        } else {
          yr[0] = v0;
          yr[1] = v1;
        }
      } else {
        yr[0] = v0;
      }
    }
  }
}

template <class T, int K1, int K2>
void launch(const UpdateArgs<T>& a, const double* s, cudaStream_t stream) {
  GroupCoefficients<T, K1, K2> coefficients{};
  for (int i = 0; i < a.k1; ++i)
    for (int j = 0; j < a.k2; ++j) coefficients.values[i * K2 + j] = static_cast<T>(s[i * a.k2 + j]);
  constexpr std::int64_t rows_per_block = (group_threads / 32) * (32 / (K2 / 2)) * rows_per_lane;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((a.rows + rows_per_block - 1) / rows_per_block, 1, max_blocks));
  row_group_update_kernel<T, K1, K2><<<blocks, group_threads, 0, stream>>>(a, coefficients);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void row_group_update(const UpdateArgs<T>& a, const double* s, cudaStream_t stream) {
  if (a.rows == 0) return;
  if (a.k1 <= 16) return launch<T, 16, max_outputs>(a, s, stream);
  if (a.k1 <= 32) return launch<T, 32, max_outputs>(a, s, stream);
  if (a.k1 <= 48) return launch<T, 48, max_outputs>(a, s, stream);
  launch<T, 64, max_outputs>(a, s, stream);
}

}  // namespace

bool row_group_update_fits(std::int64_t k1, std::int64_t k2) {
  return k1 >= 1 && k1 <= max_inputs && k2 >= 1 && k2 <= max_outputs;
}

template <class T>
bool narrow_update_fits(std::int64_t k1, std::int64_t k2) {
  if (k1 < 1 || k1 > max_inputs || k2 < 1) return false;
  return k2 <= max_outputs || (std::is_same_v<T, double> && dmma_update_fits(k1, k2));
}

// Y = alpha * [X1 X2] S + beta * Z: this kernel up to 16 outputs, the fp64
// tensor-core one beyond.
template <class T>
void narrow_dispatch(const UpdateArgs<T>& a, const double* s, cudaStream_t stream) {
  if (a.k2 <= max_outputs) return row_group_update<T>(a, s, stream);
  if constexpr (std::is_same_v<T, double>) {
    if (dmma_update_fits(a.k1, a.k2))
      return dmma_update(a.rows, a.k1x, a.k1, a.k2, a.alpha, a.x, a.ldx, a.x2, a.ldx2, s, a.beta, a.z, a.ldz, a.y,
                         a.ldy, stream);
  }
  throw std::logic_error("narrow_update: a shape narrow_update_fits refuses");
}

template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const double* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream) {
  narrow_dispatch<T>({rows, int(k1), int(k1), int(k2), alpha, beta, x, ldx, nullptr, 0, z, ldz, y, ldy}, s, stream);
}

template <class T>
void narrow_update_pair(std::int64_t rows, std::int64_t k1a, const T* x1, std::int64_t ldx1, std::int64_t k1b,
                        const T* x2, std::int64_t ldx2, std::int64_t k2, const double* s, T* y, std::int64_t ldy,
                        cudaStream_t stream) {
  narrow_dispatch<T>({rows, int(k1a), int(k1a + k1b), int(k2), T(1), T(0), x1, ldx1, x2, ldx2, nullptr, 0, y, ldy}, s,
                     stream);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                     \
  template bool narrow_update_fits<T>(std::int64_t, std::int64_t);                                                   \
  template void narrow_update(std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, const double*, T, \
                              const T*, std::int64_t, T*, std::int64_t, cudaStream_t);                               \
  template void narrow_update_pair(std::int64_t, std::int64_t, const T*, std::int64_t, std::int64_t, const T*,       \
                                   std::int64_t, std::int64_t, const double*, T*, std::int64_t, cudaStream_t);
BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::cuda
