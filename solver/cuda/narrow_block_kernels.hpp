// Kernels for the block operations on narrow blocks (tens of columns, millions
// of rows), where cuBLAS's tall-skinny shapes run far below the memory
// bandwidth (measured on an H200, 2M x 16 fp64: a Gram matrix at 1.0-2.0
// TB/s, a block update at 2.1-2.3 TB/s, against 4.0 TB/s for a plain
// element-wise kernel). Used by block_ops_cuda.cu when the shapes fit;
// cuBLAS otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace blockeigs::solver::cuda {

// Gram partials: the rows are cut into `chunk_rows` pieces; partial[c] (k1 x k2,
// row-major, double) = X_c^T Y_c of chunk c, summed in a fixed order (so the
// result does not depend on the GPU). Needs narrow_gram_fits(k1, k2).
bool narrow_gram_fits(std::int64_t k1, std::int64_t k2);
template <class T>
void narrow_gram_partials(std::int64_t rows, std::int64_t k1, std::int64_t k2, const T* x, std::int64_t ldx,
                          const T* y, std::int64_t ldy, std::int64_t chunk_rows, double* partial,
                          cudaStream_t stream);

// Y = alpha * X * S + beta * Z (beta == 0: Z is not read), S k1 x k2 row-major
// in device memory (type T). Y may be X (same data and ld; then k2 <= k1) or
// Z; it must not otherwise overlap them. Needs narrow_update_fits(k1, k2).
bool narrow_update_fits(std::int64_t k1, std::int64_t k2);
template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const T* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream);

}  // namespace blockeigs::solver::cuda
