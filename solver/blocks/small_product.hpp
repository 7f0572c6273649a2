// Small dense products in registers, for the projected problems' matrices
// (see small_product.cpp for why not BLAS). Private to the solver library.
#pragma once

#include <cstdint>

namespace blockeigs::solver {

// Up to this many multiply-adds (64^3) a product is small; op(B) transposed
// is packed on the stack, up to this many entries.
inline constexpr std::int64_t small_product_max_work = 64 * 64 * 64;
inline constexpr std::int64_t small_product_max_packed = 64 * 64;

bool fits_small_product(bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k);

// C := alpha op(A) op(B) + beta C, as product() (block_ops.hpp), for shapes
// that fits_small_product accepts. beta == 0 never reads C.
void small_product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const double* A,
                   std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc,
                   double alpha);

}  // namespace blockeigs::solver
