// C = alpha A B + beta C for column-major blocks (spmm/column_major_spmm.hpp):
// the host's loops, and the dispatch to the device kernel.
#include "spmm/column_major_spmm.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace blockeigs::spmm {

#ifdef BLOCKEIGS_HAVE_CUDA
namespace cuda {
void multiply_column_major(const Context& context, const CsrView<double>& A, double alpha,
                           ColumnMajorView<const double> B, double beta, ColumnMajorView<double> C);
}
#endif

void multiply_column_major(const Context& context, const CsrView<double>& A, double alpha,
                           ColumnMajorView<const double> B, double beta, ColumnMajorView<double> C) {
  if (B.rows != A.cols || C.rows != A.rows || B.cols != C.cols)
    throw Error("multiply_column_major: A is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ", B " +
                std::to_string(B.rows) + " x " + std::to_string(B.cols) + ", C " + std::to_string(C.rows) + " x " +
                std::to_string(C.cols));
  if (B.ld < B.rows || C.ld < C.rows)
    throw Error("multiply_column_major: leading dimensions " + std::to_string(B.ld) + " and " + std::to_string(C.ld) +
                " below the blocks' " + std::to_string(B.rows) + " and " + std::to_string(C.rows) + " rows");
  if (A.space != context.space() || B.space != context.space() || C.space != context.space())
    throw Error("multiply_column_major: A, B and C must be in the context's memory space");
  const std::int64_t n = B.cols;
  if (A.rows == 0 || n == 0) return;
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return cuda::multiply_column_major(context, A, alpha, B, beta, C);
#endif
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
