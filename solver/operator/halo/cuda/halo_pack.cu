#include "solver/operator/halo/cuda/halo_pack.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

// One thread per packed element; consecutive threads read consecutive
// columns of a row (coalesced) and write consecutive output.
template <class T>
__global__ void pack_rows_kernel(const T* __restrict__ X, std::int64_t ld, std::int64_t k,
                                 const std::int32_t* __restrict__ rows, std::int64_t count, T* __restrict__ out,
                                 std::int64_t out_ld) {
  const std::int64_t total = count * k;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t s = e / k, j = e - s * k;
    out[s * out_ld + j] = X[std::int64_t(rows[s]) * ld + j];
  }
}

template <class T>
__global__ void scatter_add_rows_kernel(const T* __restrict__ src, std::int64_t k,
                                        const std::int32_t* __restrict__ rows, std::int64_t count, T* __restrict__ Y,
                                        std::int64_t ld) {
  const std::int64_t total = count * k;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t s = e / k, j = e - s * k;
    Y[std::int64_t(rows[s]) * ld + j] += src[e];
  }
}

}  // namespace

template <class T>
void scatter_add_rows(const T* src, std::int64_t k, const std::int32_t* rows, std::int64_t count, T* Y, std::int64_t ld,
                      void* stream) {
  const std::int64_t total = count * k;
  if (total == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 16));
  scatter_add_rows_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(src, k, rows, count, Y, ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void scatter_add_rows(const float*, std::int64_t, const std::int32_t*, std::int64_t, float*, std::int64_t,
                               void*);
template void scatter_add_rows(const double*, std::int64_t, const std::int32_t*, std::int64_t, double*, std::int64_t,
                               void*);

template <class T>
void pack_rows(const T* X, std::int64_t ld, std::int64_t k, const std::int32_t* rows, std::int64_t count, T* out,
               std::int64_t out_ld, void* stream) {
  const std::int64_t total = count * k;
  if (total == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 16));
  pack_rows_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(X, ld, k, rows, count, out, out_ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template void pack_rows(const float*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, float*,
                        std::int64_t, void*);
template void pack_rows(const double*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, double*,
                        std::int64_t, void*);

}  // namespace blockeigs::solver::cuda
