// Columns a pass and blocks an SM for the column-major CSR SpMM
// (spmm/cuda/column_major_spmm.cu, one lane a row) on the 128^3 7-point
// Laplacian with 16 columns: the kernel's time for each choice, and one
// column at a time (16 SpMVs) beside them. B holds zeros: the time, not the sums.
//   nvcc -O3 -arch=sm_90 -o column_major_widths bench/micro/column_major_widths.cu && ./column_major_widths
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "dev_check.cuh"
template <int W, int MINB>
__global__ void __launch_bounds__(256, MINB)
    kern(std::int64_t rows, const int* __restrict__ off, const int* __restrict__ col, const double* __restrict__ val,
         const double* __restrict__ B, std::int64_t ldb, double* __restrict__ C, std::int64_t ldc, std::int64_t n) {
  const std::int64_t first = std::int64_t(blockIdx.y) * W;
  const int w = static_cast<int>(n - first < W ? n - first : W);
  const std::int64_t row = std::int64_t(blockIdx.x) * 256 + threadIdx.x;
  if (row >= rows) return;
  double s[W];
#pragma unroll
  for (int j = 0; j < W; ++j) s[j] = 0;
  const double* b = B + first * ldb;
  for (int e = off[row]; e < off[row + 1]; ++e) {
    const double a = val[e];
    const double* c = b + col[e];
#pragma unroll
    for (int j = 0; j < W; ++j)
      if (j < w) s[j] += a * __ldg(c + j * ldb);
  }
  double* out = C + first * ldc + row;
#pragma unroll
  for (int j = 0; j < W; ++j)
    if (j < w) out[j * ldc] = s[j];
}
template <int W, int MINB>
float run(int rows, int* o, int* c, double* v, double* B, double* C, int n) {
  dim3 grid((rows + 255) / 256, (n + W - 1) / W);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int r = 0; r < 3; ++r) kern<W, MINB><<<grid, 256>>>(rows, o, c, v, B, rows, C, rows, n);
  cudaEventRecord(a);
  for (int r = 0; r < 20; ++r) kern<W, MINB><<<grid, 256>>>(rows, o, c, v, B, rows, C, rows, n);
  cudaEventRecord(b);
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms / 20;
}
int main() {
  const int g = 128, rows = g * g * g, n = 16;
  std::vector<int> off{0}, col;
  std::vector<double> val;
  for (int z = 0; z < g; ++z)
    for (int y = 0; y < g; ++y)
      for (int x = 0; x < g; ++x) {
        const int i = (z * g + y) * g + x;
        auto add = [&](int j, double a) {
          col.push_back(j);
          val.push_back(a);
        };
        if (z > 0) add(i - g * g, -1);
        if (y > 0) add(i - g, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 6);
        if (x < g - 1) add(i + 1, -1);
        if (y < g - 1) add(i + g, -1);
        if (z < g - 1) add(i + g * g, -1);
        off.push_back(static_cast<int>(col.size()));
      }
  int *o, *c;
  double *v, *B, *C;
  CHECK(cudaMalloc(&o, off.size() * 4));
  CHECK(cudaMalloc(&c, col.size() * 4));
  CHECK(cudaMalloc(&v, val.size() * 8));
  CHECK(cudaMalloc(&B, size_t(rows) * n * 8));
  CHECK(cudaMalloc(&C, size_t(rows) * n * 8));
  CHECK(cudaMemcpy(o, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(c, col.data(), col.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(v, val.data(), val.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(B, 0, size_t(rows) * n * 8));
  const double bytes = off.size() * 4.0 + col.size() * 12.0 + 2.0 * rows * n * 8;
  auto show = [&](const char* what, float ms) {
    std::printf("%-24s %.3f ms  %.2f TB/s of the one-pass bytes\n", what, ms, bytes / ms / 1e9);
  };
  show("width 16, minblocks 1", run<16, 1>(rows, o, c, v, B, C, n));
  show("width 16, minblocks 3", run<16, 3>(rows, o, c, v, B, C, n));
  show("width 16, minblocks 4", run<16, 4>(rows, o, c, v, B, C, n));
  show("width 8, minblocks 1", run<8, 1>(rows, o, c, v, B, C, n));
  show("width 8, minblocks 4", run<8, 4>(rows, o, c, v, B, C, n));
  show("width 4, minblocks 1", run<4, 1>(rows, o, c, v, B, C, n));
  show("width 1 (16 SpMVs)", run<1, 1>(rows, o, c, v, B, C, n));
  CHECK(cudaGetLastError());
}
