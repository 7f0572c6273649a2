// C = alpha A B + beta C for column-major B and C on the device
// (spmm/column_major_spmm.hpp). A group of G lanes takes a row: lane l sums
// the row's nonzeros l, l + G, ... for the pass's up to 8 columns in
// registers, the group adds its lanes' sums by shuffles, and lane j % G
// writes column j. G is 1 for rows of up to 8 nonzeros on average, so that a
// warp reads 32 consecutive rows of each column of B (coalesced where A is
// banded), and doubles with the mean row length up to 32. The host loop in
// reference/column_major_spmm.cpp is its twin (the same sums; for G > 1 in
// another order).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "spmm/column_major_spmm.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_products.hpp"

namespace blockeigs::spmm::cuda {
namespace {

// 8 columns a pass with 4 blocks an SM beat 16 a pass (fewer registers, more rows in flight) although A
// is read once a pass (bench/micro/column_major_widths.cu; docs/benchmarks/petsc-gpu.md).
constexpr int threads = 256, width = 8, blocks_per_sm = 4;

template <int G>
__global__ void __launch_bounds__(threads, blocks_per_sm)
    column_major_kernel(std::int64_t rows, const std::int32_t* __restrict__ offsets,
                        const std::int32_t* __restrict__ columns, const double* __restrict__ values, double alpha,
                        const double* __restrict__ B, std::int64_t ldb, double beta, double* __restrict__ C,
                        std::int64_t ldc, std::int64_t n) {
  const std::int64_t first = std::int64_t(blockIdx.y) * width;
  const int w = static_cast<int>(n - first < width ? n - first : width);
  const int lane = static_cast<int>(threadIdx.x % G);
  const std::int64_t row = (std::int64_t(blockIdx.x) * threads + threadIdx.x) / G;
  const bool active = row < rows;  // every lane stays for the group's shuffles
  double sum[width];
#pragma unroll
  for (int j = 0; j < width; ++j) sum[j] = 0.0;
  if (active) {
    const double* b = B + first * ldb;
    for (std::int32_t e = offsets[row] + lane; e < offsets[row + 1]; e += G) {
      const double a = values[e];
      const double* column = b + columns[e];
#pragma unroll
      for (int j = 0; j < width; ++j)
        if (j < w) sum[j] += a * __ldg(column + j * ldb);
    }
  }
  if constexpr (G > 1) {
#pragma unroll
    for (int j = 0; j < width; ++j)
      for (int offset = G / 2; offset > 0; offset /= 2) sum[j] += __shfl_xor_sync(0xffffffffu, sum[j], offset, G);
  }
  if (!active) return;
  double* c = C + first * ldc + row;
#pragma unroll
  for (int j = 0; j < width; ++j) {
    if (j >= w || j % G != lane) continue;
    c[j * ldc] = beta == 0.0 ? alpha * sum[j] : alpha * sum[j] + beta * c[j * ldc];
  }
}

template <int G>
void launch(const CsrView<double>& A, double alpha, dense::ColumnMajorView<const double> B, double beta,
            dense::ColumnMajorView<double> C, cudaStream_t stream) {
  const std::int64_t lanes = A.rows * G;
  const dim3 grid(static_cast<unsigned>((lanes + threads - 1) / threads),
                  static_cast<unsigned>((B.cols + width - 1) / width));
  column_major_kernel<G><<<grid, threads, 0, stream>>>(A.rows, A.row_offsets, A.col_indices, A.values, alpha, B.data,
                                                       B.ld, beta, C.data, C.ld, B.cols);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void multiply_column_major(const dense::Context& context, const CsrView<double>& A, double alpha,
                           dense::ColumnMajorView<const double> B, double beta, dense::ColumnMajorView<double> C) {
  const auto stream = static_cast<cudaStream_t>(context.stream());
  const double mean = A.mean_row_length();
  if (mean <= 8) return launch<1>(A, alpha, B, beta, C, stream);
  if (mean <= 16) return launch<2>(A, alpha, B, beta, C, stream);
  if (mean <= 32) return launch<4>(A, alpha, B, beta, C, stream);
  if (mean <= 64) return launch<8>(A, alpha, B, beta, C, stream);
  if (mean <= 128) return launch<16>(A, alpha, B, beta, C, stream);
  launch<32>(A, alpha, B, beta, C, stream);
}

}  // namespace blockeigs::spmm::cuda
