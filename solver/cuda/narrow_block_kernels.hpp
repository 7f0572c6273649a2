// The block update on narrow blocks (up to 32 columns, millions of rows), in
// place or into a new block in one pass, which cuBLAS cannot do: the change of
// basis after SVQB and block CG's new search block. Used by block_ops_cuda.cu
// when the shape fits; cuBLAS (with a scratch block) otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace blockeigs::solver::cuda {

// Y = alpha * X * S + beta * Z (beta == 0: Z is not read), S k1 x k2 row-major
// on the host (passed to the kernel by value). Y may be X (same data and ld;
// then k2 <= k1) or Z; it must not otherwise overlap them. Needs
// narrow_update_fits(k1, k2).
bool narrow_update_fits(std::int64_t k1, std::int64_t k2);
template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const double* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream);

// Y = [X1 X2] S (X1: k1a columns, X2: k1b, S: (k1a + k1b) x k2 row-major on
// the host), in one pass. All three may be views of one buffer with one
// leading dimension whose columns overlap in any way: a tile of rows of X1 and
// X2 is wholly read before its rows of Y are written. Needs
// narrow_update_fits(k1a + k1b, k2).
template <class T>
void narrow_update_pair(std::int64_t rows, std::int64_t k1a, const T* x1, std::int64_t ldx1, std::int64_t k1b,
                        const T* x2, std::int64_t ldx2, std::int64_t k2, const double* s, T* y, std::int64_t ldy,
                        cudaStream_t stream);

// Y = alpha * [X1 X2] S + beta * Z (beta == 0: Z is not read; X2 only when
// k1x < k1: X1 holds columns [0, k1x), X2 the rest) by groups of lanes per
// row (row_group_update.cu), for k1 <= 32 and k2 <= 16 with even k1x, even
// leading dimensions and pair-aligned pointers (row_group_update_fits). Y may
// overlap X1, X2 and Z in any columns of the same rows.
template <class T>
bool row_group_update_fits(std::int64_t k1x, std::int64_t k1, std::int64_t k2, const T* x, std::int64_t ldx,
                           const T* x2, std::int64_t ldx2, const T* z, std::int64_t ldz, const T* y,
                           std::int64_t ldy);
template <class T>
void row_group_update(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, T alpha, const T* x,
                      std::int64_t ldx, const T* x2, std::int64_t ldx2, const double* s, T beta, const T* z,
                      std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream);

}  // namespace blockeigs::solver::cuda
