// C = A B with B in fp32 (spmm/single_input_spmm.hpp): the host's loops, and
// the dispatch to the device kernel.
#include "spmm/single_input_spmm.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "spmm/cuda/device_products.hpp"
#include "spmm/reference/product_checks.hpp"

namespace blockeigs::spmm {

void multiply_single_input(const dense::Context& context, const CsrView<double>& A, dense::ConstDenseView<float> B,
                           dense::DenseView<double> C, bool accumulate) {
  check_product("multiply_single_input", context, A, {B.rows, B.cols, B.space}, {C.rows, C.cols, C.space});
  const std::int64_t n = B.cols;
  if (A.rows == 0 || n == 0) return;
  if (context.space() == Space::device) return cuda::multiply_single_input(context, A, B, C, accumulate);
#pragma omp parallel
  {
    std::vector<double> acc(static_cast<std::size_t>(n));
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < A.rows; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t k = A.row_offsets[i]; k < A.row_offsets[i + 1]; ++k) {
        const double a = A.values[k];
        const float* b = B.data + std::int64_t(A.col_indices[k]) * B.ld;
        for (std::int64_t j = 0; j < n; ++j) acc[j] += a * double(b[j]);
      }
      double* c = C.data + i * C.ld;
      for (std::int64_t j = 0; j < n; ++j) c[j] = accumulate ? c[j] + acc[j] : acc[j];
    }
  }
}

}  // namespace blockeigs::spmm
