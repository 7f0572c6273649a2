// Whether the device's mixed kernels take LOBPCG's step (search_block_ops.hpp).
// The mixed Gram pair is with the other reductions (block_reductions_host.cpp),
// the mixed Ritz update with the fp64 one (ritz_update.cpp), and the
// conversions with the other block operations (block_ops_host.cpp).
#include "solver/blocks/search_block_ops.hpp"

#include "solver/blocks/cuda/block_ops_cuda.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace blockeigs::solver {

bool search_single_kernels_fit(const spmm::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                               std::int64_t nb) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) return device_ops::search_single_fits(ns, nv, m, nb);
#endif
  (void)context, (void)ns, (void)nv, (void)m, (void)nb;
  return false;
}

double memory_bytes_per_sm_cycle(const spmm::Context& context) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() != Space::device) return 0;
  const int device = context.device();
  int sms = 0, sm_khz = 0, memory_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();  // an attribute this driver does not report: unknown, not an error
    return 0;
  }
  if (sms <= 0 || sm_khz <= 0) return 0;
  // Double data rate: two transfers of bus_bits a memory clock.
  const double bytes_per_second = 2.0 * memory_khz * 1e3 * bus_bits / 8;
  return bytes_per_second / (double(sms) * sm_khz * 1e3);
#else
  (void)context;
  return 0;
#endif
}

bool search_single_pays(const spmm::Context& context) {
  // The mixed kernels move ~12% fewer bytes than the fp64 ones but issue more
  // instructions (fp32 stages widened in shared memory), and they wait on
  // them where memory feeds the SMs fast. On an H100 (3.35 TB/s: 12.8 bytes
  // an SM cycle) fp32 takes 0.09 ms off the Ritz update; on an H200 (4.8
  // TB/s: 18.8) it adds 0.2 ms to the Ritz update and 0.15 to the Gram pair,
  // and the 128^3 bar takes 1.29-1.35 s against 1.25 in fp64
  // (solvers-h200.md, session 43). Unknown rates keep fp32.
  if (context.space() != Space::device) return false;
  const double rate = memory_bytes_per_sm_cycle(context);
  return rate <= 0 || rate < 15.0;
}

}  // namespace blockeigs::solver
