// LOBPCG's Ritz update for wider blocks (21 to 32: up to 96 inputs and 64
// outputs), the rows loaded straight into each warp's fragments; the staged
// kernel for blocks up to 20 and the dispatch are in ritz_update.cu, which
// says what the pass computes.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "solver/blocks/cuda/device_support.cuh"
#include "solver/blocks/cuda/ritz_update_common.cuh"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda::ritz_detail {
namespace {

using detail::mma_16x8x8;

constexpr int wide_warps_per_block = 4;
constexpr std::int64_t wide_max_blocks = 4096;  // grid-stride beyond

// The A fragments of rows [first, first + 16) of a block for every k-step of
// 8 inputs: its columns below `head` from `src`, the rest from `tail` (at
// column - head); zero past the rows and past ns (so NaN in unused columns
// never reaches an accumulator).
template <int KS>
__device__ __forceinline__ void load_fragments(const RitzUpdateArgs& a, const double* src, std::int64_t ld,
                                               const double* tail, std::int64_t ld_tail, int head, std::int64_t first,
                                               double (&frag)[KS][4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
  const bool in0 = first + g < a.rows, in1 = first + g + 8 < a.rows;
  const std::int64_t r0 = in0 ? first + g : 0, r1 = in1 ? first + g + 8 : 0;
  auto at = [&](std::int64_t row, int c) { return c < head ? src[row * ld + c] : tail[row * ld_tail + c - head]; };
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    const int c0 = 8 * ks + t, c1 = c0 + 4;
    frag[ks][0] = in0 && c0 < a.ns ? at(r0, c0) : 0.0;
    frag[ks][1] = in1 && c0 < a.ns ? at(r1, c0) : 0.0;
    frag[ks][2] = in0 && c1 < a.ns ? at(r0, c1) : 0.0;
    frag[ks][3] = in1 && c1 < a.ns ? at(r1, c1) : 0.0;
  }
}

// acc = the 16 rows whose fragments are in `frag` times C (in shared memory).
template <int NT, int KS, int CS>
__device__ __forceinline__ void multiply(const RitzUpdateArgs& a, const double (&frag)[KS][4], const double (*C)[CS],
                                         double (&acc)[NT][4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0;
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    if (ks >= a.k_steps) break;  // warp-uniform
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
      mma_16x8x8(acc[nt], frag[ks], C[8 * ks + t][8 * nt + g], C[8 * ks + t + 4][8 * nt + g]);
  }
}

// Two blocks an SM: a step's A fragments (4 registers a k-step) and both
// accumulators (8 NT each) are live together, up to 248 registers a lane.
template <int NT>
__global__ void __launch_bounds__(wide_warps_per_block * 32, 2)
    ritz_update_wide_kernel(const RitzUpdateArgs a, const __grid_constant__ RitzConstants<NT, true> k) {
  constexpr int KS = wide_k_steps, K2 = 8 * NT;
  constexpr int c_stride = K2 + 4;    // = 4 or 12 mod 16: a B fragment's 4 rows x 8 columns take two wavefronts
  extern __shared__ double wide_c[];  // 8 KS x c_stride: up to 52 KB
  double(*C)[c_stride] = reinterpret_cast<double(*)[c_stride]>(wide_c);
  __shared__ double warp_sums[wide_warps_per_block][2][wide_outputs];
  for (int e = threadIdx.x; e < 8 * KS * K2; e += blockDim.x) C[e / K2][e % K2] = k.c[e];
  for (int e = threadIdx.x; e < wide_warps_per_block * 2 * wide_outputs; e += blockDim.x)
    (&warp_sums[0][0][0])[e] = 0.0;
  __syncthreads();
  const int warp_in_block = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t first = warp * step_rows; first < a.rows; first += warps * step_rows) {  // warp-uniform
    double frag[KS][4], y[NT][4], ay[NT][4];
    load_fragments<KS>(a, a.s, a.lds, a.s_tail, a.lds_tail, a.ns_head, first, frag);
    multiply<NT, KS>(a, frag, C, y);
    load_fragments<KS>(a, a.as, a.ldas, a.as_tail, a.ldas_tail, a.nv_head, first, frag);
    multiply<NT, KS>(a, frag, C, ay);
    store_step<NT, wide_outputs>(a, k.lambda, k.r_column, first, y, ay, warp_sums[warp_in_block]);
  }
  __syncthreads();
  write_block_sums(a, warp_sums, wide_warps_per_block);
}

template <int NT>
void launch_wide(const RitzUpdateArgs& a, const double* c, const double* lambda, const std::int64_t* position,
                 cudaStream_t stream) {
  constexpr int KS = wide_k_steps;
  RitzConstants<NT, true> constants{};
  set_residual_constants(constants, a.nb, lambda, position);
  // C padded to 8 KS x 8 NT, in device memory freed in stream order after
  // the kernel.
  std::vector<double> padded(std::size_t(8 * KS) * 8 * NT, 0.0);
  for (int i = 0; i < a.ns; ++i)
    for (int j = 0; j < a.m; ++j) padded[std::size_t(i) * 8 * NT + j] = c[i * a.m + j];
  const device_ops::support::StreamArray<double> c_device(stream, padded.size());
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(c_device.data(), padded.data(), padded.size() * sizeof(double),
                                       cudaMemcpyHostToDevice, stream));  // pageable: staged before it returns
  constants.c = c_device.data();
  const auto kernel = ritz_update_wide_kernel<NT>;
  const int bytes = 8 * KS * (8 * NT + 4) * int(sizeof(double));
  static std::atomic<std::uint64_t> opted_in{0};
  detail::allow_shared_memory(kernel, bytes, opted_in);
  kernel<<<static_cast<unsigned>(wide_update_blocks(a.rows)), wide_warps_per_block * 32, bytes, stream>>>(a, constants);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// launch_wide<NT> for NT = tiles (at most 8).
template <int NT = 1>
void launch_wide_tiles(int tiles, const RitzUpdateArgs& a, const double* c, const double* lambda,
                       const std::int64_t* position, cudaStream_t stream) {
  if constexpr (NT < wide_outputs / 8)
    if (tiles > NT) return launch_wide_tiles<NT + 1>(tiles, a, c, lambda, position, stream);
  launch_wide<NT>(a, c, lambda, position, stream);
}

}  // namespace

std::int64_t wide_update_blocks(std::int64_t rows) {
  constexpr std::int64_t rows_per_block = std::int64_t(wide_warps_per_block) * step_rows;
  return std::clamp<std::int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, wide_max_blocks);
}

void launch_wide_update(int tiles, const RitzUpdateArgs& a, const double* c, const double* lambda,
                        const std::int64_t* position, cudaStream_t stream) {
  launch_wide_tiles(tiles, a, c, lambda, position, stream);
}

}  // namespace blockeigs::solver::cuda::ritz_detail
