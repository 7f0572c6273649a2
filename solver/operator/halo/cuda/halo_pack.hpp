// Device kernels of the halo exchange.
#pragma once

#include <cstdint>

namespace blockeigs::solver::cuda {

// Element (i, j) of a block X is X[i * row_stride + j * col_stride]:
// row-major blocks have strides (ld, 1), column-major ones (PETSc's) (1, ld).

// out[s * out_ld + j] = X(rows[s], j) for s < count, j < k: gathers the rows
// neighbours need into one row-major send buffer (out_ld >= k: an odd number
// of fp32 values rides in whole fp64 words).
template <class T>
void pack_rows(const T* X, std::int64_t row_stride, std::int64_t col_stride, std::int64_t k, const std::int32_t* rows,
               std::int64_t count, T* out, std::int64_t out_ld, void* stream);

// Y(rows[s], j) += src[s * k + j]: adds the off-diagonal product of the rows
// that have halo columns into Y (each row once: deterministic).
template <class T>
void scatter_add_rows(const T* src, std::int64_t k, const std::int32_t* rows, std::int64_t count, T* Y,
                      std::int64_t row_stride, std::int64_t col_stride, void* stream);

}  // namespace blockeigs::solver::cuda
