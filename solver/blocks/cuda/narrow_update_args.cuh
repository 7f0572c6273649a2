// What both narrow update kernels (row_group_update.cu, dmma_update.cu) take:
// Y = alpha * [X1 X2] S + beta * Z on tall row-major blocks, and how they
// read a pair of adjacent input values of a row; the fp64 tensor-core tiles
// (m8n8k4 for dmma_update.cu; Hopper's m16n8k8, twice its rate, for
// ritz_update.cu and tall_skinny_gram.cu), the cp.async copies those two
// stage their rows with, and the shared-memory opt-in.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda::detail {

template <class T>
struct PairOf;
template <>
struct PairOf<float> {
  using type = float2;
};
template <>
struct PairOf<double> {
  using type = double2;
};

template <class T>
struct UpdateArgs {
  std::int64_t rows;
  int k1x, k1, k2;  // X1 holds input columns [0, k1x), X2 the rest
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
__device__ __forceinline__ bool pair_aligned(const T* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & (2 * sizeof(T) - 1)) == 0;
}

// Input values col and col + 1 of a row (zero past k1): one vector load where
// both lie in the same block at an aligned address, two scalars otherwise (a
// pair that straddles X1 and X2, odd leading dimensions or offsets, an odd
// width's last value, whose neighbour is not ours and may be NaN).
template <class T>
__device__ __forceinline__ typename PairOf<T>::type load_input_pair(const UpdateArgs<T>& a, std::int64_t row, int col) {
  using Pair = typename PairOf<T>::type;
  auto element = [&](int j) { return j < a.k1x ? a.x + row * a.ldx + j : a.x2 + row * a.ldx2 + (j - a.k1x); };
  const T* p = element(col);
  const bool second = col + 1 < a.k1;
  if (second && (col < a.k1x) == (col + 1 < a.k1x) && pair_aligned(p)) return *reinterpret_cast<const Pair*>(p);
  return Pair{p[0], second ? *element(col + 1) : T(0)};
}

// D = A B + D for one 8 x 8 x 4 fp64 tile on the tensor cores: lane l holds
// A(l / 4, l % 4), B(l % 4, l / 4) and D(l / 4, 2 (l % 4) + {0, 1}).
__device__ __forceinline__ void mma_8x8x4(double (&d)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
}

// D = A B + D for one 16 x 8 x 8 fp64 tile on Hopper's tensor cores (sm_90:
// twice m8n8k4's rate, bench/micro/dmma_rate.cu;
// docs/benchmarks/block-ops.md#kernel-notes). With g = lane / 4 and
// t = lane % 4, lane l holds
// A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4) in a[0..3],
// B(t, g), B(t + 4, g) in b[0..1], and D(g, 2 t + {0, 1}), D(g + 8, 2 t + {0, 1})
// in d[0..3].
__device__ __forceinline__ void mma_16x8x8(double (&d)[4], const double (&a)[4], double b0, double b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b0), "d"(b1));
}

// acc = (8 MT staged rows, `stride` doubles apart) times S (in shared memory,
// rows of CS), over k_steps groups of 4 inputs: per group, lane l loads
// A(l / 4, 4 ks + l % 4) of each 8-row tile and B(4 ks + l % 4, 8 nt + l / 4)
// of each 8-output tile; the tiles share each B fragment.
template <int MT, int NT, int CS>
__device__ __forceinline__ void multiply_staged(const double* staged, int stride, int k_steps, const double (*S)[CS],
                                                double (&acc)[MT][NT][2]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) acc[m][nt][0] = acc[m][nt][1] = 0.0;
  for (int ks = 0; ks < k_steps; ++ks) {
    double a_frag[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) a_frag[m] = staged[(8 * m + g) * stride + 4 * ks + t];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const double b = S[4 * ks + t][8 * nt + g];
#pragma unroll
      for (int m = 0; m < MT; ++m) mma_8x8x4(acc[m][nt], a_frag[m], b);
    }
  }
}

// cp.async into shared memory: 16 bytes (through L2 only: the rows are read
// once) or 8, zero-filled where `in` is false. commit_copies closes this
// thread's group of copies; wait_copies<n> returns once at most n of its
// groups are still in flight.
__device__ __forceinline__ void copy_async_16(unsigned shared, const double* global, bool in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(global), "r"(in ? 16 : 0) : "memory");
}
__device__ __forceinline__ void copy_async_8(unsigned shared, const double* global, bool in) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(shared), "l"(global), "r"(in ? 8 : 0) : "memory");
}
// 4 bytes from an address of any type (fp32 rows: LOBPCG's residual block
// in its search precision, where they are not 16-byte aligned).
__device__ __forceinline__ void copy_async_bytes_4(unsigned shared, const void* global, bool in) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(shared), "l"(global), "r"(in ? 4 : 0) : "memory");
}
// 16 bytes into shared memory from the first src_bytes (0 to 16) at a
// 16-byte aligned address, the rest zero-filled: fp32 rows 4 floats at a
// time, the last unit of a width that is not a multiple of 4 included.
__device__ __forceinline__ void copy_async_16_partial(unsigned shared, const void* global, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(global), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(pending) : "memory");
}

// Whether every row of a row-major fp64 block starts 16-byte aligned (so that
// its pairs of doubles can be copied 16 bytes at a time).
inline bool rows_16_byte_aligned(const double* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 2 == 0;
}
// The same for fp32 rows, 4 floats at a time.
inline bool rows_16_byte_aligned(const float* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 4 == 0;
}

// Past 48 KB of shared memory a kernel must opt in to up to `bytes` of
// dynamic shared memory, once per device: `opted_in` is the kernel's own
// bitmask of devices that have.
template <class Kernel>
void allow_shared_memory(Kernel kernel, int bytes, std::atomic<std::uint64_t>& opted_in) {
  int device = 0;
  BLOCKEIGS_CUDA_CHECK(cudaGetDevice(&device));
  const std::uint64_t bit = std::uint64_t(1) << (device % 64);
  if (opted_in.load() & bit) return;
  BLOCKEIGS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  opted_in.fetch_or(bit);
}

}  // namespace blockeigs::solver::cuda::detail
