// What would LOBPCG's A Z take with Z stored in fp32?
// A Z at width 20 on the 128^3 7-point Laplacian, the matrix in fp64, B (Z)
// and C (A Z) compact, in row-ordered runs of 64 rows a block (az_window.cu's
// "ordered" schedule, which matched the library's kernel). Each lane loads
// its columns of a gathered B row as one 8- or 16-byte vector, sums in fp64
// and stores its columns of C; all of a row's nonzeros are in flight at once.
//   B fp64, C fp64: the library's case today (10 lanes of a 16-lane group, 2 columns each)
//   B fp32, C fp64: Z in fp32, A Z in fp64 (10 lanes x 2 columns, or 5 lanes x 4)
//   B fp32, C fp32: both in fp32 (5 lanes x 4 columns)
// Every variant is checked against a host product in fp64 (C in fp32:
// within its rounding).
//   nvcc -O3 -arch=sm_90 -o az_mixed scripts/dev/az_mixed.cu && ./az_mixed [nx]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dev_check.cuh"

constexpr int width = 20, threads = 256, unroll = 8, run_rows = 64;

template <class T, int N>
struct alignas(sizeof(T) * N) Piece {
  T v[N];
};

// Rows [blockIdx.x * run_rows, + run_rows) of C = A B, `Group` lanes a row,
// the first width / Cols of them holding Cols columns each.
template <class TB, class TC, int Group, int Cols>
__global__ void __launch_bounds__(threads) az_kernel(int rows, const int* __restrict__ offsets,
                                                     const int* __restrict__ cols, const double* __restrict__ vals,
                                                     const TB* __restrict__ B, TC* __restrict__ C) {
  constexpr int rows_per_pass = threads / Group;
  const int lane = threadIdx.x % Group, c = lane * Cols;
  const bool has_column = c < width;
  using PieceB = Piece<TB, Cols>;
  for (int r = threadIdx.x / Group; r < run_rows; r += rows_per_pass) {
    const int row = blockIdx.x * run_rows + r;
    if (row >= rows) break;
    const int begin = offsets[row], stop = offsets[row + 1];
    double acc[Cols] = {};
    for (int k0 = begin; k0 < stop; k0 += unroll) {
      int col[unroll];
      double val[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        const bool ok = k0 + u < stop;
        col[u] = ok ? __ldg(cols + k0 + u) : -1;
        val[u] = ok ? __ldg(vals + k0 + u) : 0.0;
      }
      PieceB b[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        b[u] = PieceB{};
        if (col[u] >= 0 && has_column)
          b[u] = *reinterpret_cast<const PieceB*>(B + std::int64_t(col[u]) * width + c);
      }
#pragma unroll
      for (int u = 0; u < unroll; ++u)
#pragma unroll
        for (int j = 0; j < Cols; ++j) acc[j] = fma(val[u], double(b[u].v[j]), acc[j]);
    }
    if (has_column) {
      Piece<TC, Cols> out;
#pragma unroll
      for (int j = 0; j < Cols; ++j) out.v[j] = TC(acc[j]);
      *reinterpret_cast<Piece<TC, Cols>*>(C + std::int64_t(row) * width + c) = out;
    }
  }
}

struct Matrix {
  int rows = 0;
  std::vector<int> offsets, cols;
  std::vector<double> vals;
};

Matrix laplacian(int nx) {
  Matrix m;
  m.rows = nx * nx * nx;
  m.offsets.push_back(0);
  for (int z = 0; z < nx; ++z)
    for (int y = 0; y < nx; ++y)
      for (int x = 0; x < nx; ++x) {
        const int i = (z * nx + y) * nx + x;
        auto add = [&](int j, double v) { m.cols.push_back(j), m.vals.push_back(v); };
        if (z > 0) add(i - nx * nx, -1);
        if (y > 0) add(i - nx, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 6);
        if (x + 1 < nx) add(i + 1, -1);
        if (y + 1 < nx) add(i + nx, -1);
        if (z + 1 < nx) add(i + nx * nx, -1);
        m.offsets.push_back(static_cast<int>(m.cols.size()));
      }
  return m;
}

template <class TB, class TC, int Group, int Cols>
void run(const char* name, const Matrix& m, const int* d_offsets, const int* d_cols, const double* d_vals,
         const std::vector<double>& b_host) {
  const std::size_t entries = std::size_t(m.rows) * width;
  std::vector<TB> b(entries);
  for (std::size_t e = 0; e < entries; ++e) b[e] = TB(b_host[e]);
  TB* d_b = nullptr;
  TC* d_c = nullptr;
  CHECK(cudaMalloc(&d_b, entries * sizeof(TB)));
  CHECK(cudaMalloc(&d_c, entries * sizeof(TC)));
  CHECK(cudaMemcpy(d_b, b.data(), entries * sizeof(TB), cudaMemcpyHostToDevice));
  const int blocks = (m.rows + run_rows - 1) / run_rows;
  auto launch = [&] { az_kernel<TB, TC, Group, Cols><<<blocks, threads>>>(m.rows, d_offsets, d_cols, d_vals, d_b, d_c); };
  launch();
  CHECK(cudaDeviceSynchronize());
  // Check against the host's fp64 product of the stored B.
  std::vector<TC> c(entries);
  CHECK(cudaMemcpy(c.data(), d_c, entries * sizeof(TC), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < width; ++j) {
      double sum = 0, scale = 0;
      for (int k = m.offsets[i]; k < m.offsets[i + 1]; ++k) {
        sum += m.vals[k] * double(b[std::size_t(m.cols[k]) * width + j]);
        scale += std::abs(m.vals[k] * double(b[std::size_t(m.cols[k]) * width + j]));
      }
      worst = std::max(worst, std::abs(double(c[std::size_t(i) * width + j]) - sum) / std::max(scale, 1e-300));
    }
  const double allowed = sizeof(TC) == 4 ? 1e-6 : 1e-14;
  std::vector<float> ms;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int rep = 0; rep < 30; ++rep) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s %.3f ms (min %.3f)  error/scale %.1e %s\n", name, ms[ms.size() / 2], ms[0], worst,
              worst <= allowed ? "ok" : "WRONG");
  CHECK(cudaFree(d_b));
  CHECK(cudaFree(d_c));
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 128;
  const Matrix m = laplacian(nx);
  int *d_offsets = nullptr, *d_cols = nullptr;
  double* d_vals = nullptr;
  CHECK(cudaMalloc(&d_offsets, m.offsets.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_cols, m.cols.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_vals, m.vals.size() * sizeof(double)));
  CHECK(cudaMemcpy(d_offsets, m.offsets.data(), m.offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_cols, m.cols.data(), m.cols.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, m.vals.data(), m.vals.size() * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<double> b(std::size_t(m.rows) * width);
  std::srand(1);
  for (double& v : b) v = double(std::rand()) / RAND_MAX - 0.5;
  std::printf("A Z, %d^3 7-point Laplacian (fp64 values), width %d, compact blocks, runs of %d rows\n", nx, width,
              run_rows);
  for (int round = 0; round < 2; ++round) {
    run<double, double, 16, 2>("B fp64, C fp64 (10 lanes x 2 columns)", m, d_offsets, d_cols, d_vals, b);
    run<float, double, 16, 2>("B fp32, C fp64 (10 lanes x 2 columns)", m, d_offsets, d_cols, d_vals, b);
    run<float, double, 8, 4>("B fp32, C fp64 (5 lanes x 4 columns)", m, d_offsets, d_cols, d_vals, b);
    run<float, float, 8, 4>("B fp32, C fp32 (5 lanes x 4 columns)", m, d_offsets, d_cols, d_vals, b);
  }
  return 0;
}
