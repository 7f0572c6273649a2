// Y = alpha * [X1 X2] S + beta * Z for tall blocks of up to 64 input and 48
// output columns, in one pass: the solvers' changes of basis (SVQB, LOBPCG's
// projection and transform of W in one update of [X P W] and its Ritz update
// of up to 2 nb columns, block CG's search blocks).
//
// A warp takes 32 rows at a time and each lane computes one whole row of Y:
//   1. the warp copies the 32 input rows into its own tile in shared memory
//      (coalesced, 16 loads per lane in flight);
//   2. lane r multiplies row r of the tile by S, whose entries come from the
//      kernel's parameter space: every lane needs the same S(i, j) at the same
//      time, so each multiply-add reads it as a constant-bank operand, with no
//      load at all. The only shared-memory traffic is one 8-byte load per input
//      value (rows padded to an odd length: no bank conflicts);
//   3. the row's results go back into the tile, and the warp writes the 32
//      rows of Y out coalesced (reading Z's alongside when beta != 0).
// An earlier kernel gave each row a group of lanes, two output columns per
// lane, and read S from shared memory: its 16-byte shared loads (a quarter
// warp per cycle, broadcast or not) bound it at 20 to 32 outputs (0.43 ms for
// 20 -> 20 columns of 2M rows, 45% of the copy rate on an H200).
//
// Every input row of a tile is read before any row of Y in it is written
// (a warp barrier between), and each row of Y is written by the warp that
// read that row, so Y may overlap X1, X2 and Z in any columns of the same
// rows: in-place changes of basis need no scratch block.
#include <algorithm>
#include <cstdint>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int tile_rows = 32;  // a warp's rows per step: lane r computes row r
constexpr int warps_per_block = 4;
constexpr int max_inputs = 64, max_outputs = 48;
constexpr int rows_per_load = 8;  // tile rows whose loads are issued together
constexpr std::int64_t max_blocks = 4096;  // grid-stride beyond

// S padded with zeros to max_inputs x K2, row-major: up to 24 KB of kernel
// parameters (Hopper and CUDA >= 12.1 take 32 KB).
template <class T, int K2>
struct Coefficients {
  T values[max_inputs * K2];
};

template <class T>
struct UpdateArgs {
  std::int64_t rows;
  int k1x, k1, k2;  // X1 holds input columns [0, k1x), X2 the rest
  int stride;       // tile row length in values: max(k1, k2) rounded up to odd
  T alpha, beta;
  const T* x;
  std::int64_t ldx;
  const T* x2;
  std::int64_t ldx2;
  const T* z;  // read only when beta != 0
  std::int64_t ldz;
  T* y;
  std::int64_t ldy;
};

template <class T>
__device__ __forceinline__ T load_input(const UpdateArgs<T>& a, std::int64_t row, int col) {
  return col < a.k1x ? a.x[row * a.ldx + col] : a.x2[row * a.ldx2 + (col - a.k1x)];
}

template <class T, int K2>
__global__ void __launch_bounds__(warps_per_block * 32)
    lane_row_update_kernel(const UpdateArgs<T> a, const __grid_constant__ Coefficients<T, K2> s) {
  extern __shared__ double shared_tiles[];  // double: aligned for either type
  const int lane = static_cast<int>(threadIdx.x) % 32;
  T* const tile = reinterpret_cast<T*>(shared_tiles) + (threadIdx.x / 32) * tile_rows * a.stride;
  T* const own = tile + lane * a.stride;  // the row this lane computes
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t first = warp * tile_rows; first < a.rows; first += warps * tile_rows) {  // warp-uniform
    const int n = static_cast<int>(a.rows - first < tile_rows ? a.rows - first : tile_rows);
    // 1. The tile's inputs: lanes over the columns of a row, rows_per_load rows at once.
    for (int r0 = 0; r0 < n; r0 += rows_per_load) {
      T v[rows_per_load][2];
#pragma unroll
      for (int u = 0; u < rows_per_load; ++u)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = r0 + u, c = lane + 32 * h;
          v[u][h] = r < n && c < a.k1 ? load_input(a, first + r, c) : T(0);
        }
#pragma unroll
      for (int u = 0; u < rows_per_load; ++u)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = r0 + u, c = lane + 32 * h;
          if (r < n && c < a.k1) tile[r * a.stride + c] = v[u][h];
        }
    }
    __syncwarp();  // the tile is complete: every input row of Y's rows is read
    // 2. Row `lane` times S (lanes past n compute on stale values and write nothing).
    T acc[K2];
#pragma unroll
    for (int j = 0; j < K2; ++j) acc[j] = T(0);
#pragma unroll
    for (int i = 0; i < max_inputs; ++i) {
      if (i >= a.k1) break;  // warp-uniform
      const T xi = own[i];
#pragma unroll
      for (int j = 0; j < K2; ++j) acc[j] = fma(xi, s.values[i * K2 + j], acc[j]);
    }
    __syncwarp();  // every lane has read its row before results overwrite the tile
#pragma unroll
    for (int j = 0; j < K2; ++j)
      if (j < a.k2) own[j] = acc[j];
    __syncwarp();
    // 3. Y's rows, lanes over the columns.
    for (int r = 0; r < n; ++r) {
      const std::int64_t row = first + r;
#pragma unroll
      for (int h = 0; h < (max_outputs + 31) / 32; ++h) {
        const int c = lane + 32 * h;
        if (c >= a.k2) continue;
        const T v = a.alpha * tile[r * a.stride + c];
        T* const yc = a.y + row * a.ldy + c;
        *yc = a.beta == T(0) ? v : v + a.beta * a.z[row * a.ldz + c];
      }
    }
    __syncwarp();  // the tile is read out before the next step's inputs overwrite it
  }
}

template <class T, int K2>
void launch(const UpdateArgs<T>& a, const double* s, cudaStream_t stream) {
  Coefficients<T, K2> coefficients{};
  for (int i = 0; i < a.k1; ++i)
    for (int j = 0; j < a.k2; ++j) coefficients.values[i * K2 + j] = static_cast<T>(s[i * a.k2 + j]);
  const auto kernel = lane_row_update_kernel<T, K2>;
  const std::size_t bytes = std::size_t(warps_per_block) * tile_rows * a.stride * sizeof(T);
  // Past 48 KB of dynamic shared memory a kernel must opt in (once suffices).
  static const bool opted_in = [&] {
    BLOCKEIGS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(warps_per_block * tile_rows * (max_inputs + 1) * sizeof(T))));
    return true;
  }();
  (void)opted_in;
  constexpr std::int64_t rows_per_block = std::int64_t(warps_per_block) * tile_rows;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((a.rows + rows_per_block - 1) / rows_per_block, 1, max_blocks));
  kernel<<<blocks, warps_per_block * 32, bytes, stream>>>(a, coefficients);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// Accumulators per lane: the output count rounded up to a multiple of 8.
template <class T>
void lane_row_update(UpdateArgs<T> a, const double* s, cudaStream_t stream) {
  if (a.rows == 0) return;
  a.stride = std::max(a.k1, a.k2) | 1;
  switch ((a.k2 + 7) / 8) {
    case 1: return launch<T, 8>(a, s, stream);
    case 2: return launch<T, 16>(a, s, stream);
    case 3: return launch<T, 24>(a, s, stream);
    case 4: return launch<T, 32>(a, s, stream);
    case 5: return launch<T, 40>(a, s, stream);
    default: return launch<T, 48>(a, s, stream);
  }
}

}  // namespace

bool narrow_update_fits(std::int64_t k1, std::int64_t k2) {
  return k1 >= 1 && k1 <= max_inputs && k2 >= 1 && k2 <= max_outputs;
}

template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const double* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy,
                   cudaStream_t stream) {
  lane_row_update<T>({rows, int(k1), int(k1), int(k2), 0, alpha, beta, x, ldx, nullptr, 0, z, ldz, y, ldy}, s, stream);
}

template <class T>
void narrow_update_pair(std::int64_t rows, std::int64_t k1a, const T* x1, std::int64_t ldx1, std::int64_t k1b,
                        const T* x2, std::int64_t ldx2, std::int64_t k2, const double* s, T* y, std::int64_t ldy,
                        cudaStream_t stream) {
  lane_row_update<T>({rows, int(k1a), int(k1a + k1b), int(k2), 0, T(1), T(0), x1, ldx1, x2, ldx2, nullptr, 0, y, ldy},
                     s, stream);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                 \
  template void narrow_update(std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, const double*, \
                              T, const T*, std::int64_t, T*, std::int64_t, cudaStream_t);                         \
  template void narrow_update_pair(std::int64_t, std::int64_t, const T*, std::int64_t, std::int64_t, const T*,    \
                                   std::int64_t, std::int64_t, const double*, T*, std::int64_t, cudaStream_t);
BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::cuda
