// Does a shared-memory window of B's rows speed up LOBPCG's A Z?
// A Z at width 20 in LOBPCG's layout (ld 120, Z at column 40) takes ~0.38 ms
// on an H200 against a ~0.21 ms DRAM bound. Every gathered 160-byte B row is
// read from L2 (L1 hits ~24%), ~1.8 GB of L2 -> SM traffic a multiply. A block
// that owns a run of rows [r0, r1) and first copies B's rows [r0 - w, r1 + w)
// into shared memory serves the diagonal, +-1 and +-nx neighbours of a stencil
// (5 of 7) from there, fetching each of those B rows from L2 ~(1 + 2w / run)
// times instead of ~5.
//
// Kernels (fp64, 16 lanes a row, 10 of them holding a 16-byte piece of the 20
// columns, all of a row's nonzeros in flight at once: row_split's Wide shape,
// without its index prefetch):
//   global : a resident grid, warps striding over the matrix (row_split's schedule)
//   ordered: blocks in row order, one run of rows each, no window (the schedule alone)
//   window : blocks in row order, B's rows near the run staged in shared memory
//   sliding: resident blocks, each walking its own range with a ring of B's rows
// Result (H200, 128^3, 2026-11-25; docs/benchmarks/solvers.md#tried-not-kept):
// ordered runs of 64 rows 0.42 ms, the library's time; every window lost
// (0.76-2.2 ms, sliding 1.05-3.0 ms): staging waits in series with the
// multiply at 1-3 blocks an SM, and blocks on ranges far apart lose the L2
// reuse of the +-nx^2 planes that neighbouring short runs share.
// Each lane adds its nonzeros in the same order in every kernel: the outputs
// must be the same bits.
//   nvcc -O3 -arch=sm_90 -o az_window scripts/dev/az_window.cu && ./az_window [nx]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dev_check.cuh"


constexpr int width = 20, vectors = width / 2, ld = 120, z_column = 40, az_column = 100;
__constant__ int ldb_dev = ld, ldc_dev = ld;  // row strides of B and C (compact: 20)
constexpr int threads = 256, unroll = 8;

__device__ __forceinline__ void copy16(void* smem, const void* global) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(global) : "memory");
}

// Row `row` of C = A B on this lane's two columns, its nonzeros in order;
// staged(col) is the shared-memory copy of B's row col (this lane's piece),
// or null where the row is read from global memory.
template <class Staged>
__device__ __forceinline__ void multiply_row(int row, const int* __restrict__ offsets, const int* __restrict__ cols,
                                             const double* __restrict__ vals, const double2* lane_b,
                                             double* __restrict__ C, int c, bool has_column, Staged staged) {
  const int begin = offsets[row], stop = offsets[row + 1];
  double acc0 = 0, acc1 = 0;
  for (int k0 = begin; k0 < stop; k0 += unroll) {
    int col[unroll];
    double val[unroll];
    bool ok[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      ok[u] = k0 + u < stop;
      col[u] = ok[u] ? __ldg(cols + k0 + u) : 0;
      val[u] = ok[u] ? __ldg(vals + k0 + u) : 0.0;
    }
    double2 b[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      b[u] = make_double2(0, 0);
      if (!ok[u] || !has_column) continue;
      const double2* const near = staged(col[u]);
      b[u] = near ? *near : __ldg(lane_b + std::int64_t(col[u]) * (ldb_dev / 2));
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      acc0 = fma(val[u], b[u].x, acc0);
      acc1 = fma(val[u], b[u].y, acc1);
    }
  }
  if (has_column) __stcs(reinterpret_cast<double2*>(C + std::int64_t(row) * ldc_dev) + c, make_double2(acc0, acc1));
}

// Mode 0: global; 1: ordered; 2: window.
template <int Mode>
__global__ void __launch_bounds__(threads) az_kernel(const int* __restrict__ offsets, const int* __restrict__ cols,
                                                     const double* __restrict__ vals, const double* __restrict__ B,
                                                     double* __restrict__ C, int rows, int run, int halo) {
  extern __shared__ double2 window[];  // window rows x vectors
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 4, c = lane & 15;
  const bool has_column = c < vectors;
  int first, stride, end, lo = 0, length = 0;
  if (Mode == 0) {
    first = (blockIdx.x * (threads / 32) + warp) * 2 + g;
    stride = gridDim.x * threads / 16;
    end = rows;
  } else {
    const int r0 = blockIdx.x * run;
    end = min(rows, r0 + run);
    first = r0 + warp * 2 + g;
    stride = threads / 16;
    if (Mode == 2) {
      lo = max(0, r0 - halo);
      length = min(rows, end + halo) - lo;
      for (int u = threadIdx.x; u < length * vectors; u += threads) {
        const int r = u / vectors, v = u - r * vectors;
        copy16(&window[u], B + std::int64_t(lo + r) * ld + 2 * v);
      }
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncthreads();
    }
  }
  const double2* const lane_b = reinterpret_cast<const double2*>(B) + (has_column ? c : 0);
  for (int row = first; row < end; row += stride)
    multiply_row(row, offsets, cols, vals, lane_b, C, c, has_column, [&](int col) -> const double2* {
      const unsigned near = static_cast<unsigned>(col - lo);
      return Mode == 2 && near < static_cast<unsigned>(length) ? &window[near * vectors + c] : nullptr;
    });
}

// Mode 3, "sliding": a block walks a contiguous range of rows `run` at a
// time, keeping B's rows [a - halo, a + run + halo) of its current step in a
// ring of `cap` rows (cap >= 2 run + 2 halo), the next step's leading edge
// copied while this step multiplies: each B row near the range is staged once.
__global__ void __launch_bounds__(threads) az_sliding(const int* __restrict__ offsets, const int* __restrict__ cols,
                                                      const double* __restrict__ vals, const double* __restrict__ B,
                                                      double* __restrict__ C, int rows, int run, int halo) {
  extern __shared__ double2 ring[];
  const int cap = 2 * run + 2 * halo;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 4, c = lane & 15;
  const bool has_column = c < vectors;
  const int per_block = ((rows + gridDim.x - 1) / gridDim.x + run - 1) / run * run;
  const int start = blockIdx.x * per_block, stop = min(rows, start + per_block);
  if (start >= stop) return;
  auto stage = [&](int from, int to) {  // B rows [from, to) into their ring slots
    from = max(from, 0), to = min(to, rows);
    for (int u = threadIdx.x; u < (to - from) * vectors; u += threads) {
      const int r = from + u / vectors, v = u % vectors;
      copy16(&ring[(r % cap) * vectors + v], B + std::int64_t(r) * ld + 2 * v);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  stage(start - halo, start + run + halo);
  const double2* const lane_b = reinterpret_cast<const double2*>(B) + (has_column ? c : 0);
  for (int a = start; a < stop; a += run) {
    __syncthreads();                                    // the last step's reads of the slots reused next are done
    stage(a + run + halo, a + 2 * run + halo);          // the next step's leading edge
    asm volatile("cp.async.wait_group 1;" ::: "memory");  // this step's rows have landed
    __syncthreads();
    const int lo = max(0, a - halo), length = min(rows, a + run + halo) - lo;
    const int end = min(stop, a + run);
    for (int row = a + warp * 2 + g; row < end; row += threads / 16)
      multiply_row(row, offsets, cols, vals, lane_b, C, c, has_column, [&](int col) -> const double2* {
        return static_cast<unsigned>(col - lo) < static_cast<unsigned>(length) ? &ring[(col % cap) * vectors + c]
                                                                                : nullptr;
      });
  }
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 128, rows = nx * nx * nx;
  std::vector<int> offsets(rows + 1);
  std::vector<int> cols;
  std::vector<double> vals;
  cols.reserve(std::size_t(rows) * 7);
  for (int z = 0, r = 0; z < nx; ++z)
    for (int y = 0; y < nx; ++y)
      for (int x = 0; x < nx; ++x, ++r) {
        auto add = [&](int c, double v) { cols.push_back(c), vals.push_back(v); };
        if (z > 0) add(r - nx * nx, -1);
        if (y > 0) add(r - nx, -1);
        if (x > 0) add(r - 1, -1);
        add(r, 6);
        if (x + 1 < nx) add(r + 1, -1);
        if (y + 1 < nx) add(r + nx, -1);
        if (z + 1 < nx) add(r + nx * nx, -1);
        offsets[r + 1] = static_cast<int>(cols.size());
      }
  std::vector<double> b(std::size_t(rows) * ld);
  std::uint64_t s = 88172645463325252ull;
  for (double& v : b) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v = double(s >> 11) * 0x1p-53 - 0.5;
  }
  int *d_off, *d_col;
  double *d_val, *d_b, *d_c;
  CHECK(cudaMalloc(&d_off, offsets.size() * 4));
  CHECK(cudaMalloc(&d_col, cols.size() * 4));
  CHECK(cudaMalloc(&d_val, vals.size() * 8));
  CHECK(cudaMalloc(&d_b, b.size() * 8));
  CHECK(cudaMalloc(&d_c, b.size() * 8));
  CHECK(cudaMemcpy(d_off, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_col, cols.data(), cols.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_val, vals.data(), vals.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), b.size() * 8, cudaMemcpyHostToDevice));
  const double* Z = d_b + z_column;
  double* AZ = d_c + az_column;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double bytes = double(cols.size()) * 12 + 4.0 * (rows + 1) + 2.0 * rows * width * 8;
  std::printf("7-point Laplacian %d^3: %d rows, %zu nonzeros, width %d at column %d of ld %d; bound %.0f MB\n", nx,
              rows, cols.size(), width, z_column, ld, bytes / 1e6);

  // Sorted times of 20 launches after 5 warm-up ones.
  auto times_ms = [](auto launch) {
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 25; ++rep) {
      CHECK(cudaEventRecord(e0));
      launch();
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (rep >= 5) ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return ms;
  };
  std::vector<double> reference;
  auto run = [&](const char* name, auto kernel, int blocks, int run_rows, int halo, std::size_t smem) {
    if (smem > 48 * 1024) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    CHECK(cudaMemset(d_c, 0xff, b.size() * 8));  // NaN: every output must be written
    const std::vector<float> ms =
        times_ms([&] { kernel<<<blocks, threads, smem>>>(d_off, d_col, d_val, Z, AZ, rows, run_rows, halo); });
    std::vector<double> out(b.size());
    CHECK(cudaMemcpy(out.data(), d_c, out.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<double> got(std::size_t(rows) * width);
    for (int r = 0; r < rows; ++r)
      std::memcpy(&got[std::size_t(r) * width], &out[std::size_t(r) * ld + az_column], width * 8);
    const char* check = "reference";
    if (reference.empty()) {
      reference = got;
      for (int r = 0; r < rows; r += 9973)  // spot-check against the host
        for (int j = 0; j < width; ++j) {
          double sum = 0;
          for (int k = offsets[r]; k < offsets[r + 1]; ++k) sum += vals[k] * b[std::size_t(cols[k]) * ld + z_column + j];
          if (std::abs(sum - got[std::size_t(r) * width + j]) > 1e-12) {
            std::printf("host check failed at row %d column %d\n", r, j);
            std::exit(1);
          }
        }
    } else {
      check = std::memcmp(got.data(), reference.data(), got.size() * 8) == 0 ? "same bits" : "DIFFERENT";
    }
    std::printf("%-34s %7.3f ms (min %.3f)  %5.2f TB/s of the bound  %s\n", name, ms[ms.size() / 2], ms[0],
                bytes / (ms[ms.size() / 2] * 1e-3) / 1e12, check);
  };

  // Layouts (the ordered kernel, runs of 64): B's and C's row strides 120 (LOBPCG's) or 20 (compact).
  {
    double *d_bc, *d_cc;
    CHECK(cudaMalloc(&d_bc, std::size_t(rows) * width * 8));
    CHECK(cudaMalloc(&d_cc, std::size_t(rows) * width * 8));
    CHECK(cudaMemcpy2D(d_bc, width * 8, Z, ld * 8, width * 8, rows, cudaMemcpyDeviceToDevice));
    for (int layout = 0; layout < 4; ++layout) {
      const int ldb = layout & 1 ? width : ld, ldc = layout & 2 ? width : ld;
      CHECK(cudaMemcpyToSymbol(ldb_dev, &ldb, sizeof ldb));
      CHECK(cudaMemcpyToSymbol(ldc_dev, &ldc, sizeof ldc));
      const double* Bp = ldb == ld ? Z : d_bc;
      double* Cp = ldc == ld ? AZ : d_cc;
      const std::vector<float> ms =
          times_ms([&] { az_kernel<1><<<(rows + 63) / 64, threads>>>(d_off, d_col, d_val, Bp, Cp, rows, 64, 0); });
      std::printf("layout: B ld %3d, C ld %3d (ordered, runs of 64)  %7.3f ms (min %.3f)\n", ldb, ldc,
                  ms[ms.size() / 2], ms[0]);
    }
    const int back = ld;
    CHECK(cudaMemcpyToSymbol(ldb_dev, &back, sizeof back));
    CHECK(cudaMemcpyToSymbol(ldc_dev, &back, sizeof back));
  }
  for (int per_sm : {3, 4}) {
    char name[64];
    std::snprintf(name, sizeof name, "global, %d blocks an SM", per_sm);
    run(name, az_kernel<0>, sms * per_sm, 0, 0, 0);
  }
  for (int run_rows : {64, 256, 1024}) {
    char name[64];
    std::snprintf(name, sizeof name, "ordered, runs of %d", run_rows);
    run(name, az_kernel<1>, (rows + run_rows - 1) / run_rows, run_rows, 0, 0);
  }
  for (int halo : {nx, 2 * nx})
    for (int run_rows : {128, 256, 384, 512, 1024}) {
      const std::size_t smem = std::size_t(run_rows + 2 * halo) * width * 8;
      if (smem > 227 * 1024) continue;
      char name[64];
      std::snprintf(name, sizeof name, "window, runs of %d, halo %d", run_rows, halo);
      run(name, az_kernel<2>, (rows + run_rows - 1) / run_rows, run_rows, halo, smem);
    }
  for (int per_sm : {1, 2, 3})
    for (int run_rows : {32, 64, 128}) {
      const int halo = nx;
      const std::size_t smem = std::size_t(2 * run_rows + 2 * halo) * width * 8;
      char name[64];
      std::snprintf(name, sizeof name, "sliding, %d a SM, steps of %d", per_sm, run_rows);
      run(name, az_sliding, sms * per_sm, run_rows, halo, smem);
    }
  return 0;
}
