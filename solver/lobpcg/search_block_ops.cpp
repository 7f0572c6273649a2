// Whether the device's mixed kernels take LOBPCG's step (search_block_ops.hpp).
// The mixed Gram pair is with the other reductions (block_reductions_host.cpp),
// the mixed Ritz update with the fp64 one (ritz_update.cpp), and the
// conversions with the other block operations (block_ops_host.cpp).
#include "solver/lobpcg/search_block_ops.hpp"

#include "solver/blocks/cuda/block_ops_cuda.hpp"

namespace blockeigs::solver {

bool search_single_kernels_fit(const dense::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                               std::int64_t nb) {
  return context.space() == Space::device && device_ops::search_single_fits(ns, nv, m, nb);
}

double memory_bytes_per_sm_cycle(const dense::Context& context) {
  return context.space() == Space::device ? device_ops::memory_bytes_per_sm_cycle(context.device()) : 0;
}

bool search_single_pays(const dense::Context& context) {
  // The mixed kernels move ~12% fewer bytes than the fp64 ones but issue more
  // instructions, and wait on them where memory feeds the SMs fast: fp32 pays
  // on an H100 (12.8 bytes an SM cycle), not on an H200 (18.8;
  // docs/benchmarks/solvers.md#search-precision). Unknown rates keep fp32.
  if (context.space() != Space::device) return false;
  const double rate = memory_bytes_per_sm_cycle(context);
  return rate <= 0 || rate < 15.0;
}

}  // namespace blockeigs::solver
