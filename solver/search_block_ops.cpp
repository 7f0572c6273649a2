// Conversions between LOBPCG's fp32 residual block and fp64 blocks, and
// whether the device's mixed kernels take a step (search_block_ops.hpp). The
// mixed Gram pair is with the other reductions (block_reductions_host.cpp),
// the mixed Ritz update with the fp64 one (ritz_update.cpp).
#include "solver/search_block_ops.hpp"

#include "core/error.hpp"
#include "solver/block_ops_cuda.hpp"
#include "solver/block_ops_host_support.hpp"

namespace blockeigs::solver {
using host_support::on_device;

template <class From, class To>
void convert_block(const spmm::Context& context, spmm::ConstDenseView<From> src, spmm::DenseView<To> dst) {
  host_support::require_same_space("convert_block", src, dst);
  host_support::require_same_rows("convert_block", src, dst);
  BLOCKEIGS_ASSERT(src.cols == dst.cols);
  if (dst.rows == 0 || dst.cols == 0) return;
#ifdef BLOCKEIGS_HAVE_CUDA
  if (on_device(dst.space)) return device_ops::convert_block(context, src, dst);
#endif
  (void)context;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dst.rows; ++i)
    for (std::int64_t j = 0; j < dst.cols; ++j) dst.data[i * dst.ld + j] = static_cast<To>(src.data[i * src.ld + j]);
}

template void convert_block(const spmm::Context&, spmm::ConstDenseView<float>, spmm::DenseView<double>);
template void convert_block(const spmm::Context&, spmm::ConstDenseView<double>, spmm::DenseView<float>);
template void convert_block(const spmm::Context&, spmm::ConstDenseView<float>, spmm::DenseView<float>);
template void convert_block(const spmm::Context&, spmm::ConstDenseView<double>, spmm::DenseView<double>);

bool search_single_kernels_fit(const spmm::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                               std::int64_t nb) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return device_ops::search_single_fits(ns, nv, m, nb);
#endif
  (void)context, (void)ns, (void)nv, (void)m, (void)nb;
  return false;
}

}  // namespace blockeigs::solver
