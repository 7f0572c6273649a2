// C = alpha A B + beta C for column-major blocks (spmm/column_major_spmm.hpp):
// the host's loops, and the dispatch to the device kernel.
#include "spmm/column_major_spmm.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "spmm/cuda/device_products.hpp"
#include "spmm/reference/product_checks.hpp"

namespace blockeigs::spmm {

void multiply_column_major(const dense::Context& context, const CsrView<double>& A, double alpha,
                           dense::ColumnMajorView<const double> B, double beta, dense::ColumnMajorView<double> C) {
  check_product("multiply_column_major", context, A, {B.rows, B.cols, B.space}, {C.rows, C.cols, C.space});
  if (B.ld < B.rows || C.ld < C.rows)
    throw Error("multiply_column_major: leading dimensions " + std::to_string(B.ld) + " and " + std::to_string(C.ld) +
                " below the blocks' " + std::to_string(B.rows) + " and " + std::to_string(C.rows) + " rows");
  const std::int64_t n = B.cols;
  if (A.rows == 0 || n == 0) return;
  if (context.space() == Space::device) return cuda::multiply_column_major(context, A, alpha, B, beta, C);
#pragma omp parallel
  {
    std::vector<double> acc(static_cast<std::size_t>(n));
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < A.rows; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t e = A.row_offsets[i]; e < A.row_offsets[i + 1]; ++e) {
        const double a = A.values[e];
        const std::int64_t c = A.col_indices[e];
        for (std::int64_t j = 0; j < n; ++j) acc[j] += a * B(c, j);
      }
      for (std::int64_t j = 0; j < n; ++j) C(i, j) = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * C(i, j);
    }
  }
}

}  // namespace blockeigs::spmm
