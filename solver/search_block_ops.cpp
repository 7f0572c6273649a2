// Whether the device's mixed kernels take LOBPCG's step (search_block_ops.hpp).
// The mixed Gram pair is with the other reductions (block_reductions_host.cpp),
// the mixed Ritz update with the fp64 one (ritz_update.cpp), and the
// conversions with the other block operations (block_ops_host.cpp).
#include "solver/search_block_ops.hpp"

#include "solver/block_ops_cuda.hpp"

namespace blockeigs::solver {

bool search_single_kernels_fit(const spmm::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                               std::int64_t nb) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return device_ops::search_single_fits(ns, nv, m, nb);
#endif
  (void)context, (void)ns, (void)nv, (void)m, (void)nb;
  return false;
}

bool search_single_pays(const spmm::Context& context) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return device_ops::search_single_pays(context);
#endif
  (void)context;
  return false;
}

}  // namespace blockeigs::solver
