// What both narrow update kernels (row_group_update.cu, dmma_update.cu) take:
// Y = alpha * [X1 X2] S + beta * Z on tall row-major blocks, and how they
// read a pair of adjacent input values of a row.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

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
__device__ __forceinline__ typename PairOf<T>::type load_input_pair(const UpdateArgs<T>& a, std::int64_t row,
                                                                    int col) {
  using Pair = typename PairOf<T>::type;
  auto element = [&](int j) {
    return j < a.k1x ? a.x + row * a.ldx + j : a.x2 + row * a.ldx2 + (j - a.k1x);
  };
  const T* p = element(col);
  const bool second = col + 1 < a.k1;
  if (second && (col < a.k1x) == (col + 1 < a.k1x) && pair_aligned(p)) return *reinterpret_cast<const Pair*>(p);
  return Pair{p[0], second ? *element(col + 1) : T(0)};
}

}  // namespace blockeigs::solver::cuda::detail
