// C = A B with B in fp32 (spmm/single_input_spmm.hpp): the host's loops, and
// the dispatch to the device kernel.
#include "spmm/single_input_spmm.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"

namespace blockeigs::spmm {

#ifdef BLOCKEIGS_HAVE_CUDA
namespace cuda {
void multiply_single_input(const Context& context, const CsrView<double>& A, ConstDenseView<float> B,
                           DenseView<double> C, bool accumulate);
}
#endif

void multiply_single_input(const Context& context, const CsrView<double>& A, ConstDenseView<float> B,
                           DenseView<double> C, bool accumulate) {
  if (B.rows != A.cols || C.rows != A.rows || B.cols != C.cols)
    throw Error("multiply_single_input: A is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ", B " +
                std::to_string(B.rows) + " x " + std::to_string(B.cols) + ", C " + std::to_string(C.rows) + " x " +
                std::to_string(C.cols));
  if (A.space != context.space() || B.space != context.space() || C.space != context.space())
    throw Error("multiply_single_input: A, B and C must be in the context's memory space");
  const std::int64_t n = B.cols;
  if (A.rows == 0 || n == 0) return;
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return cuda::multiply_single_input(context, A, B, C, accumulate);
#endif
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
