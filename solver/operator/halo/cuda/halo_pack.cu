#include "solver/operator/halo/cuda/halo_pack.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::cuda {
namespace {

// Element e of count x k: (s, j) with consecutive threads along a row where
// the block's rows are contiguous (coalesced), else down a column.
__device__ inline void element(std::int64_t e, std::int64_t count, std::int64_t k, bool along_rows, std::int64_t* s,
                               std::int64_t* j) {
  if (along_rows) {
    *s = e / k;
    *j = e - *s * k;
  } else {
    *j = e / count;
    *s = e - *j * count;
  }
}

// One thread per packed element.
template <class T>
__global__ void pack_rows_kernel(const T* __restrict__ X, std::int64_t row_stride, std::int64_t col_stride,
                                 std::int64_t k, const std::int32_t* __restrict__ rows, std::int64_t count,
                                 T* __restrict__ out, std::int64_t out_ld) {
  const std::int64_t total = count * k;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t s = 0, j = 0;
    element(e, count, k, col_stride == 1, &s, &j);
    out[s * out_ld + j] = X[std::int64_t(rows[s]) * row_stride + j * col_stride];
  }
}

template <class T>
__global__ void scatter_add_rows_kernel(const T* __restrict__ src, std::int64_t k,
                                        const std::int32_t* __restrict__ rows, std::int64_t count, T* __restrict__ Y,
                                        std::int64_t row_stride, std::int64_t col_stride) {
  const std::int64_t total = count * k;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t s = 0, j = 0;
    element(e, count, k, col_stride == 1, &s, &j);
    Y[std::int64_t(rows[s]) * row_stride + j * col_stride] += src[s * k + j];
  }
}

}  // namespace

template <class T>
void scatter_add_rows(const T* src, std::int64_t k, const std::int32_t* rows, std::int64_t count, T* Y,
                      std::int64_t row_stride, std::int64_t col_stride, void* stream) {
  const std::int64_t total = count * k;
  if (total == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 16));
  scatter_add_rows_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(src, k, rows, count, Y, row_stride,
                                                                                     col_stride);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void pack_rows(const T* X, std::int64_t row_stride, std::int64_t col_stride, std::int64_t k, const std::int32_t* rows,
               std::int64_t count, T* out, std::int64_t out_ld, void* stream) {
  const std::int64_t total = count * k;
  if (total == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 16));
  pack_rows_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(X, row_stride, col_stride, k, rows, count,
                                                                              out, out_ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

BLOCKEIGS_HALO_PACK_KERNELS(float, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_HALO_PACK_KERNELS(double, BLOCKEIGS_BACKEND_INSTANTIATE)

}  // namespace blockeigs::solver::cuda
