// Y = alpha * [X1 X2] S + beta * Z in fp64 for tall blocks of up to 64 input
// and 17 to 48 output columns, in one pass, on the tensor cores (DMMA,
// mma.m8n8k4.f64). Used for in-place updates past the row-group kernel's 16
// outputs, where cuBLAS needs a scratch block and a copy: LOBPCG's projection
// and transform of W in one update of [X P W] (3 nb -> nb) at block sizes 17
// to 48, SVQB transforms, combines; faster than cuBLAS there
// (docs/benchmarks/block-ops.md#narrow-updates). Out of place cuBLAS is as
// fast, and LOBPCG's Ritz update has a kernel of its own (ritz_update.cu).
//
// A warp takes 8 rows a step: it loads them (coalesced pairs, all 8 rows in
// flight), stages them in its own rows of shared memory, and multiplies them
// as one 8-row tile by S, which the block keeps in shared memory: per 4
// inputs one A fragment and one B fragment per 8 outputs, each an 8-byte
// load (row lengths chosen so that neither has bank conflicts). The results
// go straight from the accumulators to Y (pairs, 4 lanes per row). 8-row
// steps keep a lane at 64 registers, so 4-warp blocks fit up to 7 an SM;
// that is faster than 16-row steps (docs/benchmarks/block-ops.md#narrow-updates).
//
// Still on m8n8k4, half the rate of Hopper's m16n8k8 (which ritz_update.cu
// uses): this kernel is off LOBPCG's steady-state path (the explicit W
// passes, SVQB transforms) and was not re-tuned.
//
// Every input row of a step is read before any row of Y is written, and each
// row of Y is written by the warp that read that row, so Y may overlap X1, X2
// and Z in any columns of the same rows.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "solver/blocks/cuda/narrow_update_args.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

using namespace detail;

constexpr int warps_per_block = 4;
constexpr int row_tiles = 1;  // 8-row MMA tiles per step
constexpr int step_rows = 8 * row_tiles;
constexpr int max_inputs = 64, min_outputs = 17, max_outputs = 48;
constexpr std::int64_t max_blocks = 4096;  // grid-stride beyond

template <int NT>  // NT tiles of 8 outputs
struct DmmaCoefficients {
  double values[max_inputs * 8 * NT];  // S padded with zeros, row-major: <= 24 KB of kernel parameters
};

// The update, and how the kernel stages its rows.
struct DmmaArgs : UpdateArgs<double> {
  int k_steps;  // ceil(k1 / 4)
  int stride;   // staged row length in doubles: >= 4 k_steps, = 4 mod 16
};

template <int NT>
__global__ void __launch_bounds__(warps_per_block * 32)
    dmma_update_kernel(const DmmaArgs a, const __grid_constant__ DmmaCoefficients<NT> s) {
  constexpr int K2 = 8 * NT;
  constexpr int s_stride = K2 + 4;  // = 4 or 12 mod 16: a B fragment's 4 rows x 8 columns hit distinct banks
  __shared__ double S[max_inputs][s_stride];
  extern __shared__ double staged_rows[];  // warps_per_block x step_rows x a.stride
  for (int e = threadIdx.x; e < max_inputs * K2; e += blockDim.x) S[e / K2][e % K2] = s.values[e];
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  double* const staged = staged_rows + (threadIdx.x / 32) * step_rows * a.stride;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const int col = 2 * lane;  // the input pair this lane loads
  for (std::int64_t first = warp * step_rows; first < a.rows; first += warps * step_rows) {  // warp-uniform
    double2 in[step_rows];
#pragma unroll
    for (int r = 0; r < step_rows; ++r)
      in[r] = first + r < a.rows && col < a.k1 ? load_input_pair(a, first + r, col) : double2{0.0, 0.0};
    if (col < 4 * a.k_steps)  // zeros past k1 up to the last whole group of 4 inputs
#pragma unroll
      for (int r = 0; r < step_rows; ++r) *reinterpret_cast<double2*>(staged + r * a.stride + col) = in[r];
    __syncwarp();  // the step's rows are read (so Y may overlap them) and staged
    double acc[row_tiles][NT][2];
    multiply_staged<row_tiles>(staged, a.stride, a.k_steps, S, acc);
    __syncwarp();  // the staged rows are read before the next step overwrites them
#pragma unroll
    for (int m = 0; m < row_tiles; ++m) {
      const std::int64_t row = first + 8 * m + g;
      if (row >= a.rows) continue;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int c = 8 * nt + 2 * t;
        if (c >= a.k2) continue;
        const bool second = c + 1 < a.k2;
        double v0 = a.alpha * acc[m][nt][0], v1 = a.alpha * acc[m][nt][1];
        if (a.beta != 0.0) {
          const double* zr = a.z + row * a.ldz + c;
          v0 += a.beta * zr[0];
          if (second) v1 += a.beta * zr[1];
        }
        double* yr = a.y + row * a.ldy + c;
        if (second && pair_aligned(yr)) {
          *reinterpret_cast<double2*>(yr) = double2{v0, v1};
        } else {
          yr[0] = v0;
          if (second) yr[1] = v1;
        }
      }
    }
  }
}

template <int NT>
void launch(const DmmaArgs& a, const double* s, cudaStream_t stream) {
  DmmaCoefficients<NT> coefficients{};
  for (int i = 0; i < a.k1; ++i)
    for (int j = 0; j < a.k2; ++j) coefficients.values[i * 8 * NT + j] = s[i * a.k2 + j];
  const auto kernel = dmma_update_kernel<NT>;
  const std::size_t bytes = std::size_t(warps_per_block) * step_rows * a.stride * sizeof(double);
  static std::atomic<std::uint64_t> opted_in{0};
  allow_shared_memory(kernel, warps_per_block * step_rows * (max_inputs + 4) * int(sizeof(double)), opted_in);
  constexpr std::int64_t rows_per_block = std::int64_t(warps_per_block) * step_rows;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((a.rows + rows_per_block - 1) / rows_per_block, 1, max_blocks));
  kernel<<<blocks, warps_per_block * 32, bytes, stream>>>(a, coefficients);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool dmma_update_fits(std::int64_t k1, std::int64_t k2) {
  return k1 >= 1 && k1 <= max_inputs && k2 >= min_outputs && k2 <= max_outputs;
}

void dmma_update(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, double alpha, const double* x,
                 std::int64_t ldx, const double* x2, std::int64_t ldx2, const double* s, double beta, const double* z,
                 std::int64_t ldz, double* y, std::int64_t ldy, cudaStream_t stream) {
  if (rows == 0) return;
  DmmaArgs a{{rows, int(k1x), int(k1), int(k2), alpha, beta, x, ldx, x2, ldx2, z, ldz, y, ldy}, 0, 0};
  a.k_steps = (a.k1 + 3) / 4;
  a.stride = (4 * a.k_steps + 11) / 16 * 16 + 4;
  switch ((a.k2 + 7) / 8) {
    case 3: return launch<3>(a, s, stream);
    case 4: return launch<4>(a, s, stream);
    case 5: return launch<5>(a, s, stream);
    default: return launch<6>(a, s, stream);
  }
}

}  // namespace blockeigs::solver::cuda
