// C = A B with A and C in fp64 and B in fp32 on the device
// (spmm/single_input_spmm.hpp). A group of G lanes takes a row, lane l the
// columns l V + [0, V) of each chunk of G V columns (V = 4: one 16-byte load
// of a gathered row of B; 1 where B's rows are not so aligned); a batch of 8
// nonzeros' indices is loaded first and then all of their B loads, so a
// 7-point row is one round trip. A block takes a run of 64 consecutive rows,
// so the rows in flight stay a narrow band of B (faster than staging B's rows
// in shared memory; docs/benchmarks/solvers.md, "Tried, not kept"). Every sum is in fp64 in the row's order: the host
// loop in reference/single_input_spmm.cpp is its twin.
#include <cuda_runtime.h>

#include <cstdint>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_products.hpp"
#include "spmm/single_input_spmm.hpp"

namespace blockeigs::spmm::cuda {
namespace {

constexpr int threads = 256, unroll = 8, run_rows = 64;

template <int V>
struct Floats {
  float v[V];
};
template <int V>
__device__ __forceinline__ Floats<V> load_floats(const float* p) {
  Floats<V> out;
  if constexpr (V == 4) {
    const float4 f = __ldg(reinterpret_cast<const float4*>(p));
    out.v[0] = f.x, out.v[1] = f.y, out.v[2] = f.z, out.v[3] = f.w;
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) out.v[j] = __ldg(p + j);
  }
  return out;
}

template <int G, int V>
__global__ void __launch_bounds__(threads)
    single_input_kernel(std::int64_t rows, const std::int32_t* __restrict__ offsets,
                        const std::int32_t* __restrict__ cols, const double* __restrict__ vals,
                        const float* __restrict__ B, std::int64_t ldb, double* __restrict__ C, std::int64_t ldc, int n,
                        bool accumulate, bool pair_stores) {
  constexpr int rows_per_pass = threads / G;
  const int lane = static_cast<int>(threadIdx.x) % G;
  for (int r = static_cast<int>(threadIdx.x) / G; r < run_rows; r += rows_per_pass) {
    const std::int64_t row = std::int64_t(blockIdx.x) * run_rows + r;
    if (row >= rows) break;  // the same for a group's lanes
    const int begin = offsets[row], stop = offsets[row + 1];
    for (int c0 = lane * V; c0 < n; c0 += G * V) {
      double acc[V] = {};
      for (int k0 = begin; k0 < stop; k0 += unroll) {
        int col[unroll];
        double val[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
          const bool ok = k0 + u < stop;
          col[u] = ok ? __ldg(cols + k0 + u) : -1;
          val[u] = ok ? __ldg(vals + k0 + u) : 0.0;
        }
        Floats<V> b[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u)
          b[u] = col[u] >= 0 ? load_floats<V>(B + std::int64_t(col[u]) * ldb + c0) : Floats<V>{};
#pragma unroll
        for (int u = 0; u < unroll; ++u)
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = fma(val[u], double(b[u].v[j]), acc[j]);
      }
      double* const c = C + row * ldc + c0;
      if (accumulate) {
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] += c[j];
      }
      if (V % 2 == 0 && pair_stores) {
#pragma unroll
        for (int j = 0; j < V; j += 2) *reinterpret_cast<double2*>(c + j) = double2{acc[j], acc[j + 1]};
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) c[j] = acc[j];
      }
    }
  }
}

// G lanes a row: the smallest power of two that covers n columns V at a
// time, at most a warp (wider blocks take several chunks a lane).
template <int V, int G = 1>
void launch(std::int64_t rows, const CsrView<double>& A, dense::ConstDenseView<float> B, dense::DenseView<double> C,
            bool accumulate, bool pair_stores, cudaStream_t stream) {
  if constexpr (G < 32)
    if (G * V < B.cols) return launch<V, 2 * G>(rows, A, B, C, accumulate, pair_stores, stream);
  const auto blocks = static_cast<unsigned>((rows + run_rows - 1) / run_rows);
  single_input_kernel<G, V><<<blocks, threads, 0, stream>>>(rows, A.row_offsets, A.col_indices, A.values, B.data, B.ld,
                                                            C.data, C.ld, static_cast<int>(B.cols), accumulate,
                                                            pair_stores);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

}  // namespace

void multiply_single_input(const dense::Context& context, const CsrView<double>& A, dense::ConstDenseView<float> B,
                           dense::DenseView<double> C, bool accumulate) {
  const auto stream = static_cast<cudaStream_t>(context.stream());
  // 16-byte loads of 4 floats where every row's columns start so aligned;
  // 16-byte stores of 2 doubles where C's do.
  const bool four = B.cols % 4 == 0 && B.ld % 4 == 0 && aligned(B.data, 16);
  const bool pair_stores = C.ld % 2 == 0 && aligned(C.data, 16);
  if (four) return launch<4>(A.rows, A, B, C, accumulate, pair_stores, stream);
  launch<1>(A.rows, A, B, C, accumulate, false, stream);
}

}  // namespace blockeigs::spmm::cuda
