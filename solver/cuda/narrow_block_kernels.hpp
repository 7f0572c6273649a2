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

}  // namespace blockeigs::solver::cuda
