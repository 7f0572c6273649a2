// The small dense products of LOBPCG's projected problems (rows of 20 to
// 60, several a step on rank 0 while the device waits), in registers.
//
// Why not BLAS: at these sizes a call's work is a few thousand
// multiply-adds, and the library's dispatch and packing cost as much again.
// And its kernel is picked at run time from the CPU's model: where a
// virtual machine reports a generic one, OpenBLAS falls back to its SSE3
// kernels, slower than ours here (docs/benchmarks/solvers.md#host-window).
// Larger products still go to BLAS (block_ops_host.cpp).
#include "solver/blocks/small_product.hpp"

#include <cstring>

#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {
namespace {

// Four doubles: one AVX2 register in the AVX2 clone, two SSE2 ones in the
// base one (GCC and Clang vector extensions).
typedef double Vec4 __attribute__((vector_size(32)));

// Returned by value, which GCC notes would change the base clone's ABI
// (-Wpsabi); these helpers are always inlined, so no call passes one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
BLOCKEIGS_SMALL_DENSE_INLINE inline Vec4 load4(const double* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

BLOCKEIGS_SMALL_DENSE_INLINE inline void store4(double* p, Vec4 v) { std::memcpy(p, &v, sizeof v); }

// A tile of C, `rows` rows by `vecs` times 4 columns: c := alpha a op(B) +
// beta c, with a(q, p) = a[q * a_row + p * a_col] and op(B)'s row p at
// b + p * ldb. Its sums stay in registers over the whole inner dimension
// (4 x 12: 12 accumulators, 3 loads of op(B) and 4 broadcasts feed 12
// multiply-adds).
template <int rows, int vecs>
BLOCKEIGS_SMALL_DENSE_INLINE inline void tile(const double* a, std::int64_t a_row, std::int64_t a_col, const double* b,
                                              std::int64_t ldb, std::int64_t k, double* c, std::int64_t ldc,
                                              double alpha, double beta) {
  Vec4 sum[rows][vecs];
  for (int q = 0; q < rows; ++q)
    for (int v = 0; v < vecs; ++v) sum[q][v] = Vec4{0, 0, 0, 0};
  for (std::int64_t p = 0; p < k; ++p) {
    Vec4 row[vecs];
    for (int v = 0; v < vecs; ++v) row[v] = load4(b + p * ldb + 4 * v);
    for (int q = 0; q < rows; ++q) {
      const double f = a[q * a_row + p * a_col];
      const Vec4 fv = {f, f, f, f};
      for (int v = 0; v < vecs; ++v) sum[q][v] += fv * row[v];
    }
  }
  const Vec4 alpha_v = {alpha, alpha, alpha, alpha}, beta_v = {beta, beta, beta, beta};
  for (int q = 0; q < rows; ++q)
    for (int v = 0; v < vecs; ++v) {
      double* out = c + q * ldc + 4 * v;
      store4(out, beta == 0 ? alpha_v * sum[q][v] : alpha_v * sum[q][v] + beta_v * load4(out));
    }
}

// The same for one column (C's last n % 4).
template <int rows>
BLOCKEIGS_SMALL_DENSE_INLINE inline void column(const double* a, std::int64_t a_row, std::int64_t a_col,
                                                const double* b, std::int64_t ldb, std::int64_t k, double* c,
                                                std::int64_t ldc, double alpha, double beta) {
  double sum[rows] = {};
  for (std::int64_t p = 0; p < k; ++p)
    for (int q = 0; q < rows; ++q) sum[q] += a[q * a_row + p * a_col] * b[p * ldb];
  for (int q = 0; q < rows; ++q) c[q * ldc] = beta == 0 ? alpha * sum[q] : alpha * sum[q] + beta * c[q * ldc];
}

// Rows [0, rows) of C, all n columns, in tiles of 12, 8 and 4 columns and
// single ones. Not small_dense::by_column_blocks: its 20- and 24-wide blocks
// would need 20-24 accumulators a 4-row tile, more than AVX2's 16 registers
// (2 rows of them spill, at half this speed).
template <int rows>
BLOCKEIGS_SMALL_DENSE_INLINE inline void row_block(const double* a, std::int64_t a_row, std::int64_t a_col,
                                                   const double* b, std::int64_t ldb, std::int64_t n, std::int64_t k,
                                                   double* c, std::int64_t ldc, double alpha, double beta) {
  std::int64_t j = 0;
  for (; j + 12 <= n; j += 12) tile<rows, 3>(a, a_row, a_col, b + j, ldb, k, c + j, ldc, alpha, beta);
  if (j + 8 <= n) {
    tile<rows, 2>(a, a_row, a_col, b + j, ldb, k, c + j, ldc, alpha, beta);
    j += 8;
  }
  if (j + 4 <= n) {
    tile<rows, 1>(a, a_row, a_col, b + j, ldb, k, c + j, ldc, alpha, beta);
    j += 4;
  }
  for (; j < n; ++j) column<rows>(a, a_row, a_col, b + j, ldb, k, c + j, ldc, alpha, beta);
}

}  // namespace

bool fits_small_product(bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  return m * n * k <= small_product_max_work && (!transpose_b || n * k <= small_product_max_packed);
}

BLOCKEIGS_SMALL_DENSE_CLONES
void small_product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const double* A,
                   std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc,
                   double alpha) {
  // op(B) by rows: B itself, or its transpose packed once, so that a tile
  // loads contiguous vectors of a row.
  double packed[small_product_max_packed];
  const double* b = B;
  std::int64_t ld = ldb;
  if (transpose_b) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) packed[p * n + j] = B[j * ldb + p];
    b = packed;
    ld = n;
  }
  const std::int64_t a_row = transpose_a ? 1 : lda, a_col = transpose_a ? lda : 1;
  std::int64_t i = 0;
  for (; i + 4 <= m; i += 4) row_block<4>(A + i * a_row, a_row, a_col, b, ld, n, k, C + i * ldc, ldc, alpha, beta);
  for (; i + 2 <= m; i += 2) row_block<2>(A + i * a_row, a_row, a_col, b, ld, n, k, C + i * ldc, ldc, alpha, beta);
  if (i < m) row_block<1>(A + i * a_row, a_row, a_col, b, ld, n, k, C + i * ldc, ldc, alpha, beta);
}

}  // namespace blockeigs::solver
