// Host side shared by the row-split and merge-based SpMM: operand checks,
// the vector width the alignment allows, and the map from a block width n to
// the smallest compiled kernel shape (V, P, GC) that covers it.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "spmm/csr.hpp"
#include "spmm/cuda/spmm_group.cuh"
#include "dense/dense.hpp"

namespace blockeigs::spmm::cuda::detail {

template <int V_, int P_, int GC_>
struct KernelShape {
  static constexpr int V = V_;    // elements per vector access
  static constexpr int P = P_;    // vectors per lane
  static constexpr int GC = GC_;  // column lanes per group
};

// The bytes between B's rows, which the kernels step in 32 bits (b_row); 0
// for a B of one row, which never steps.
template <class T>
std::uint64_t b_row_stride_bytes(const dense::ConstDenseView<T>& B) {
  return B.rows > 1 ? static_cast<std::uint64_t>(B.ld) * sizeof(T) : 0;
}

// Throws when the operands cannot be multiplied (the factories may be used
// without a Plan, which checks the same things).
template <class T>
void check_operands(const char* who, const CsrView<T>& A, const dense::ConstDenseView<T>& B,
                    const dense::DenseView<T>& C) {
  auto fail = [&](const std::string& what) { throw Error(std::string(who) + ": " + what); };
  if (B.space != Space::device || C.space != Space::device) fail("B and C must be in device memory");
  if (B.rows != A.cols || C.rows != A.rows || B.cols != C.cols)
    fail("shapes do not agree: A is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ", B is " +
         std::to_string(B.rows) + " x " + std::to_string(B.cols) + ", C is " + std::to_string(C.rows) + " x " +
         std::to_string(C.cols));
  if (B.ld < B.cols || C.ld < C.cols) fail("leading dimension smaller than the number of columns");
  if (b_row_stride_bytes(B) > UINT32_MAX)
    fail("B's leading dimension " + std::to_string(B.ld) + " is too large: a row stride of ld * " +
         std::to_string(sizeof(T)) + " bytes must stay below 4 GiB");
}

// The kernels' arguments for C = alpha * A * B + beta * C (operands checked),
// in the kernels' element type (device_t: complex values as DeviceComplex).
template <class T>
SpmmArgs<device_t<T>> make_spmm_args(const CsrView<T>& A, const dense::ConstDenseView<T>& B, T alpha, T beta,
                                     const dense::DenseView<T>& C) {
  return SpmmArgs<device_t<T>>{A.row_offsets,
                               A.col_indices,
                               device_pointer(A.values),
                               device_pointer(B.data),
                               B.ld,
                               static_cast<std::uint32_t>(b_row_stride_bytes(B)),
                               device_pointer(C.data),
                               C.ld,
                               A.rows,
                               static_cast<int>(B.cols),
                               to_device(alpha),
                               to_device(beta)};
}

// Widest vector (in elements, at most 16 bytes) such that every row of B and
// C starts on a vector boundary and n is a whole number of vectors. Tight
// row-major blocks from cudaMalloc get 16 bytes whenever n * sizeof(T) is a
// multiple of 16; odd leading dimensions or offset views fall back to 8 or 4.
template <class T>
int vector_width(const void* b, std::int64_t ldb, const void* c, std::int64_t ldc, std::int64_t n) {
  for (int v = 16 / static_cast<int>(sizeof(T)); v > 1; v /= 2) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(v) * sizeof(T);
    const bool aligned = reinterpret_cast<std::uintptr_t>(b) % bytes == 0 &&
                         reinterpret_cast<std::uintptr_t>(c) % bytes == 0 &&
                         static_cast<std::uint64_t>(ldb) * sizeof(T) % bytes == 0 &&
                         static_cast<std::uint64_t>(ldc) * sizeof(T) % bytes == 0;
    if (aligned && n % v == 0) return v;
  }
  return 1;
}

// Column lanes a shape with `vectors` vectors per row uses (before P > 1 kicks in).
inline int column_lanes_for(int vectors) {
  int gc = 1;
  while (gc < vectors && gc < warp_size) gc *= 2;
  return gc;
}

// Which kernel a shape is for: they take the same shapes but for one.
enum class ShapeFor { row_split, merge_based };

// Calls f(KernelShape<V, P, GC>{}) for the shape covering n / V vectors: up
// to 32 vectors one per lane of a group of GC = next power of two lanes;
// beyond that a full warp with P = ceil(vectors / 32) vectors per lane.
// Exceptions, three vectors a lane of 4 or 8 lanes (12 or 24 slots instead of
// 16 or 32), where they measured faster on the generated matrices
// (docs/benchmarks/spmm.md#kernel-notes):
//  - one-element vectors (odd n), 9-12 and 17-24 of them, both kernels
//    (n = 17: a 32-lane group left 15 lanes idle);
//  - 16-byte fp64 vectors, 17-24 of them (n = 34-48), the merge kernel only
//    (row_split, mixed with them, keeps its 32 lanes).
// 16-byte vectors at 9-12 a row (fp64 n = 18-24, fp32 n = 36-48) keep 16
// lanes: row_split's Wide 16-lane shape is faster there than 4 lanes of 3.
template <class T, int V, ShapeFor K, class F>
void dispatch_vectors(int vectors, F&& f) {
  constexpr bool three_a_lane_12 = V == 1;
  constexpr bool three_a_lane_24 = V == 1 || (sizeof(T) == 8 && V == 2 && K == ShapeFor::merge_based);
  if (vectors <= 1) return f(KernelShape<V, 1, 1>{});
  if (vectors <= 2) return f(KernelShape<V, 1, 2>{});
  if (vectors <= 4) return f(KernelShape<V, 1, 4>{});
  if (vectors <= 8) return f(KernelShape<V, 1, 8>{});
  if constexpr (three_a_lane_12)
    if (vectors <= 12) return f(KernelShape<V, 3, 4>{});
  if (vectors <= 16) return f(KernelShape<V, 1, 16>{});
  if constexpr (three_a_lane_24)
    if (vectors <= 24) return f(KernelShape<V, 3, 8>{});
  if (vectors <= 32) return f(KernelShape<V, 1, 32>{});
  constexpr int max_p = launch_columns<T> / (warp_size * V);
  const int p = (vectors + warp_size - 1) / warp_size;
  if constexpr (max_p >= 2)
    if (p == 2) return f(KernelShape<V, 2, 32>{});
  if constexpr (max_p >= 3)
    if (p == 3) return f(KernelShape<V, 3, 32>{});
  if constexpr (max_p >= 4)
    if (p == 4) return f(KernelShape<V, 4, 32>{});
  if constexpr (max_p >= 5)
    if (p == 5) return f(KernelShape<V, 5, 32>{});
  if constexpr (max_p >= 6)
    if (p == 6) return f(KernelShape<V, 6, 32>{});
  if constexpr (max_p >= 7)
    if (p == 7) return f(KernelShape<V, 7, 32>{});
  if constexpr (max_p >= 8)
    if (p == 8) return f(KernelShape<V, 8, 32>{});
  throw Error("SpMM kernel dispatch: block width beyond " + std::to_string(launch_columns<T>));
}

// T is the kernels' element type (device_t): vectors of at most 16 bytes.
template <class T, ShapeFor K, class F>
void dispatch_shape(int n, int v, F&& f) {
  if constexpr (sizeof(T) == 4) {
    if (v == 4) return dispatch_vectors<T, 4, K>(n / 4, f);
  }
  if constexpr (sizeof(T) <= 8) {
    if (v == 2) return dispatch_vectors<T, 2, K>(n / 2, f);
  }
  return dispatch_vectors<T, 1, K>(n, f);
}

// Calls f(B_slab, C_slab) for column slabs of at most launch_columns.
template <class T, class F>
void for_each_column_slab(const dense::ConstDenseView<T>& B, const dense::DenseView<T>& C, F&& f) {
  constexpr std::int64_t width = launch_columns<T>;
  for (std::int64_t j = 0; j < B.cols; j += width) {
    const std::int64_t w = B.cols - j < width ? B.cols - j : width;
    f(dense::ConstDenseView<T>(B.space, B.rows, w, B.ld, B.data ? B.data + j : nullptr),
      dense::DenseView<T>{C.space, C.rows, w, C.ld, C.data + j});
  }
}

}  // namespace blockeigs::spmm::cuda::detail
