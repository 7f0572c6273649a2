// Device kernels of the halo exchange.
#pragma once

#include <cstdint>

#include "core/backend_lists.hpp"

namespace blockeigs::solver::cuda {

// Element (i, j) of a block X is X[i * row_stride + j * col_stride]:
// row-major blocks have strides (ld, 1), column-major ones (PETSc's) (1, ld).

// out[s * out_ld + j] = X(rows[s], j) for s < count, j < k: gathers the rows
// neighbours need into one row-major send buffer (out_ld >= k: an odd number
// of fp32 values rides in whole fp64 words).
#define BLOCKEIGS_HALO_PACK_ROWS(T)                                                            \
  void pack_rows(const T* X, std::int64_t row_stride, std::int64_t col_stride, std::int64_t k, \
                 const std::int32_t* rows, std::int64_t count, T* out, std::int64_t out_ld, void* stream)
// Y(rows[s], j) += src[s * k + j]: adds the off-diagonal product of the rows
// that have halo columns into Y (each row once: deterministic).
#define BLOCKEIGS_HALO_SCATTER_ADD_ROWS(T)                                                                \
  void scatter_add_rows(const T* src, std::int64_t k, const std::int32_t* rows, std::int64_t count, T* Y, \
                        std::int64_t row_stride, std::int64_t col_stride, void* stream)

// Each as OP(signature, name) (core/backend_lists.hpp), for T float and double (halo_pack.cu, or
// halo_pack_stub.cpp, which throws, where the build has no CUDA).
#define BLOCKEIGS_HALO_PACK_KERNELS(T, OP)     \
  OP(BLOCKEIGS_HALO_PACK_ROWS(T), "pack_rows") \
  OP(BLOCKEIGS_HALO_SCATTER_ADD_ROWS(T), "scatter_add_rows")
BLOCKEIGS_HALO_PACK_KERNELS(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)

}  // namespace blockeigs::solver::cuda
