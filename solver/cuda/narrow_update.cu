// Y = alpha * X * S + beta * Z for narrow, tall blocks (k1, k2 <= 32). S sits
// in shared memory; the block walks its rows in tiles of tile_rows rows,
// copying each tile of X into shared memory with coalesced loads (many in
// flight) before any thread computes, then each thread forms 4 adjacent
// columns of two rows of Y. Because a tile of X is wholly read before its rows
// of Y are written, Y may be X itself (an in-place change of basis) or Z, and
// the two-input form (Y = [X1 X2] S) may write rows that overlap its inputs'
// in any columns.
//
// The tile's rows are padded to an odd number of values so that the rows a
// warp reads at once fall in different shared-memory banks (unpadded, 16
// doubles per row put 8 rows of a warp in one bank). Wider blocks are left to
// cuBLAS: at 48 columns an earlier version (4 columns of one row per thread,
// df04ecc) was bound by shared-memory loads (3.2 ms against cuBLAS's 0.5 ms
// on an H200).
// Measured at 2M x 16 fp64 (H200, 9467e0e): 0.28 ms with beta = 0 and 0.38 ms
// otherwise, ~2 TB/s, about cuBLAS's rate; a version that staged the results
// and wrote them out coalesced was no faster (311ca71). What holds both near
// half the copy bandwidth is not yet understood.
#include <algorithm>

#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

constexpr int update_threads = 256;
constexpr int piece = 4;       // columns of Y per thread
constexpr int piece_rows = 2;  // rows of Y per thread: halves the shared loads per multiply-add
constexpr int tile_rows = 128;
constexpr int max_width = 32;

// Four adjacent values of S from shared memory in one or two vector loads
// (S's rows are a whole number of pieces wide, so they are 16-byte aligned).
__device__ inline void load_piece(const double* p, double (&v)[piece]) {
  const double2 a = *reinterpret_cast<const double2*>(p), b = *reinterpret_cast<const double2*>(p + 2);
  v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
}
__device__ inline void load_piece(const float* p, float (&v)[piece]) {
  const float4 a = *reinterpret_cast<const float4*>(p);
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
}

// S travels as a kernel parameter (up to 8 KB; Hopper and CUDA >= 12.1 take
// 32 KB of parameters): no device allocation and no host-to-device copy per
// call. (This did not change the measured time, d72738f: the kernel itself
// runs at ~2 TB/s.)
template <class T>
struct Coefficients {
  T values[max_width * max_width];  // k1 x k2, row-major
};

template <class T>
__global__ void __launch_bounds__(update_threads)
    narrow_update_kernel(std::int64_t rows, int k1, int k2, T alpha, const T* x, std::int64_t ldx, int k1x,
                         const T* x2, std::int64_t ldx2, const __grid_constant__ Coefficients<T> s, T beta,
                         const T* z, std::int64_t ldz, T* y, std::int64_t ldy) {
  extern __shared__ double shared_values[];  // double: aligned for either type's vector loads
  // S with its columns padded to a whole number of pieces (zeros), then the tile of X.
  const int pieces = (k2 + piece - 1) / piece, width = pieces * piece;
  T* S = reinterpret_cast<T*>(shared_values);
  T* xs = S + k1 * width;
  const int stride = k1 | 1;  // odd: conflict-free rows
  for (int e = threadIdx.x; e < k1 * width; e += blockDim.x) {
    const int i = e / width, j = e - i * width;
    S[e] = j < k2 ? s.values[i * k2 + j] : T(0);
  }
  // Tile loads by whole rows: a warp covers 32 / lanes_per_row rows per load
  // (k1 <= lanes_per_row, a power of two), with no division per element.
  int lanes_per_row = 1;
  while (lanes_per_row < k1) lanes_per_row <<= 1;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int load_col = lane & (lanes_per_row - 1);
  const int load_row0 = warp * (32 / lanes_per_row) + lane / lanes_per_row;
  const int load_row_step = static_cast<int>(blockDim.x / 32) * (32 / lanes_per_row);
  const bool loads = load_col < k1;
  const std::int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t first = tile * tile_rows;
    const int n = static_cast<int>(rows - first < tile_rows ? rows - first : tile_rows);
    __syncthreads();  // S is ready; the previous tile is no longer read
    // The tile's k1 input columns: X's k1x, then X2's (if any) after them.
    const T* xt = x + first * ldx;
    const T* x2t = x2 ? x2 + first * ldx2 : nullptr;
    if (loads) {
      const bool first_input = load_col < k1x;
      const T* src = first_input ? xt + load_col : x2t + (load_col - k1x);
      const std::int64_t ld_src = first_input ? ldx : ldx2;
#pragma unroll 4
      for (int r = load_row0; r < n; r += load_row_step) xs[r * stride + load_col] = src[r * ld_src];
    }
    __syncthreads();
    const int pairs = (n + piece_rows - 1) / piece_rows;
    for (int item = threadIdx.x; item < pairs * pieces; item += blockDim.x) {
      const int p = item / pieces, b0 = (item - p * pieces) * piece;
      const int r0 = p * piece_rows;
      const bool second = r0 + 1 < n;
      const T* x0 = xs + r0 * stride;
      const T* x1 = second ? x0 + stride : x0;
      T acc[piece_rows][piece] = {};
#pragma unroll 4
      for (int i = 0; i < k1; ++i) {
        T sv[piece];
        load_piece(S + i * width + b0, sv);
        const T a0 = x0[i], a1 = x1[i];
#pragma unroll
        for (int j = 0; j < piece; ++j) {
          acc[0][j] = fma(a0, sv[j], acc[0][j]);
          acc[1][j] = fma(a1, sv[j], acc[1][j]);
        }
      }
#pragma unroll
      for (int q = 0; q < piece_rows; ++q) {
        if (q == 1 && !second) break;
        const std::int64_t row = first + r0 + q;
        T* yr = y + row * ldy;
        const T* zr = z ? z + row * ldz : nullptr;
#pragma unroll
        for (int j = 0; j < piece; ++j) {
          const int c = b0 + j;
          if (c < k2) yr[c] = beta == T(0) ? alpha * acc[q][j] : alpha * acc[q][j] + beta * zr[c];
        }
      }
    }
  }
}

std::size_t shared_bytes_for(std::int64_t k1, std::int64_t k2, std::size_t value_size) {
  const std::int64_t width = (k2 + piece - 1) / piece * piece;
  // Rounded up to whole doubles, in which the kernel declares its shared memory.
  const std::size_t bytes = value_size * static_cast<std::size_t>(k1 * width + tile_rows * (k1 | 1));
  return (bytes + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

// Y = alpha * [X X2] S + beta * Z (X: the first k1x of k1 columns): the
// row-group kernel where the shape fits it, the tiled kernel otherwise.
template <class T>
void two_input_update(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, T alpha, const T* x,
                      std::int64_t ldx, const T* x2, std::int64_t ldx2, const double* s, T beta, const T* z,
                      std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream) {
  if (rows == 0) return;
  if (row_group_update_fits<T>(k1x, k1, k2, x, ldx, x2, ldx2, beta == T(0) ? nullptr : z, ldz, y, ldy))
    return row_group_update<T>(rows, k1x, k1, k2, alpha, x, ldx, x2, ldx2, s, beta, z, ldz, y, ldy, stream);
  Coefficients<T> coefficients;
  for (std::int64_t e = 0; e < k1 * k2; ++e) coefficients.values[e] = static_cast<T>(s[e]);
  const std::size_t bytes = shared_bytes_for(k1, k2, sizeof(T));  // <= 42 KB (fp64, 32 x 32)
  const std::int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles, 4096));
  narrow_update_kernel<T><<<blocks, update_threads, bytes, stream>>>(
      rows, static_cast<int>(k1), static_cast<int>(k2), alpha, x, ldx, static_cast<int>(k1x), x2, ldx2, coefficients,
      beta, z, ldz, y, ldy);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool narrow_update_fits(std::int64_t k1, std::int64_t k2) {
  return k1 >= 1 && k1 <= max_width && k2 >= 1 && k2 <= max_width;
}

template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const double* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy,
                   cudaStream_t stream) {
  two_input_update<T>(rows, k1, k1, k2, alpha, x, ldx, nullptr, 0, s, beta, z, ldz, y, ldy, stream);
}

template <class T>
void narrow_update_pair(std::int64_t rows, std::int64_t k1a, const T* x1, std::int64_t ldx1, std::int64_t k1b,
                        const T* x2, std::int64_t ldx2, std::int64_t k2, const double* s, T* y, std::int64_t ldy,
                        cudaStream_t stream) {
  two_input_update<T>(rows, k1a, k1a + k1b, k2, T(1), x1, ldx1, x2, ldx2, s, T(0), nullptr, 0, y, ldy, stream);
}

template void narrow_update(std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t, const double*,
                            float, const float*, std::int64_t, float*, std::int64_t, cudaStream_t);
template void narrow_update(std::int64_t, std::int64_t, std::int64_t, double, const double*, std::int64_t,
                            const double*, double, const double*, std::int64_t, double*, std::int64_t, cudaStream_t);
template void narrow_update_pair(std::int64_t, std::int64_t, const float*, std::int64_t, std::int64_t, const float*,
                                 std::int64_t, std::int64_t, const double*, float*, std::int64_t, cudaStream_t);
template void narrow_update_pair(std::int64_t, std::int64_t, const double*, std::int64_t, std::int64_t, const double*,
                                 std::int64_t, std::int64_t, const double*, double*, std::int64_t, cudaStream_t);

}  // namespace blockeigs::solver::cuda
