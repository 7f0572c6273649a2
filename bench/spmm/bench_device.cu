#include "bench/spmm/bench_device.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>

#include "bench/spmm/bench_values.cuh"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_complex.cuh"

namespace blockeigs::spmm::bench {
namespace {

// Entry (i, j) of a hash-valued block in the kernels' element type D.
template <class D>
__device__ D entry(std::uint64_t seed, std::int64_t i, std::int64_t j, bool nan) {
  if constexpr (std::is_same_v<D, float> || std::is_same_v<D, double>) {
    return nan ? std::numeric_limits<D>::quiet_NaN() : static_cast<D>(bench_value(seed, i, j));
  } else {
    using R = decltype(D{}.re);
    const R not_a_number = std::numeric_limits<R>::quiet_NaN();
    return nan ? D(not_a_number, not_a_number) : D(R(bench_value(seed, i, j)), R(bench_value_im(seed, i, j)));
  }
}

template <class T>
__global__ void fill_kernel(Strided<T> b, std::uint64_t seed, bool nan) {
  const std::int64_t total = b.rows * b.cols;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    // Walk the storage order, so writes are coalesced in either layout.
    const bool row_major = b.col_stride == 1;
    const std::int64_t i = row_major ? e / b.cols : e % b.rows;
    const std::int64_t j = row_major ? e % b.cols : e / b.rows;
    b.data[i * b.row_stride + j * b.col_stride] = entry<T>(seed, i, j, nan);
  }
}

template <class T>
__global__ void gather_kernel(Strided<T> b, const std::int64_t* rows, std::int64_t count, T* out) {
  const std::int64_t total = count * b.cols;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t s = e / b.cols, j = e % b.cols;
    out[e] = b.data[rows[s] * b.row_stride + j * b.col_stride];
  }
}

int blocks_for(std::int64_t total) { return static_cast<int>(std::clamp<std::int64_t>((total + 255) / 256, 1, 65536)); }

}  // namespace

template <class T>
void fill_block(const Strided<T>& block, std::uint64_t seed, bool nan, void* stream) {
  if (block.rows == 0 || block.cols == 0) return;
  using D = cuda::device_t<T>;
  const Strided<D> d{cuda::device_pointer(block.data), block.rows, block.cols, block.row_stride, block.col_stride};
  fill_kernel<<<blocks_for(block.rows * block.cols), 256, 0, static_cast<cudaStream_t>(stream)>>>(d, seed, nan);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
std::vector<T> gather_rows(const Strided<T>& block, const std::int64_t* device_rows, std::int64_t count, T* device_out,
                           void* stream) {
  std::vector<T> host(static_cast<std::size_t>(count * block.cols));
  if (host.empty()) return host;
  const auto s = static_cast<cudaStream_t>(stream);
  using D = cuda::device_t<T>;
  const Strided<D> d{cuda::device_pointer(block.data), block.rows, block.cols, block.row_stride, block.col_stride};
  gather_kernel<<<blocks_for(count * block.cols), 256, 0, s>>>(d, device_rows, count, cuda::device_pointer(device_out));
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(host.data(), device_out, host.size() * sizeof(T), cudaMemcpyDeviceToHost, s));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s));
  return host;
}

double copy_bandwidth(std::size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&src, bytes));
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&dst, bytes));
  BLOCKEIGS_CUDA_CHECK(cudaMemset(src, 1, bytes));
  cudaStream_t stream = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
  const double seconds = median_seconds(stream, 10, [&](int) {
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  BLOCKEIGS_CUDA_CHECK(cudaStreamDestroy(stream));
  BLOCKEIGS_CUDA_CHECK(cudaFree(src));
  BLOCKEIGS_CUDA_CHECK(cudaFree(dst));
  return 2.0 * static_cast<double>(bytes) / seconds;
}

std::string device_description(int device) {
  cudaDeviceProp p{};
  BLOCKEIGS_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs, " +
         std::to_string(p.l2CacheSize >> 20) + " MB L2, " + std::to_string(p.totalGlobalMem >> 30) + " GB";
}

void synchronize_device() { BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize()); }

std::size_t l2_bytes(int device) {
  int bytes = 0;
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return static_cast<std::size_t>(bytes);
}

std::size_t free_device_bytes() {
  std::size_t free = 0, total = 0;
  BLOCKEIGS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

double median_seconds(void* stream, int reps, const std::function<void(int)>& run) {
  const auto s = static_cast<cudaStream_t>(stream);
  reps = std::max(reps, 1);
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(reps));
  for (auto& e : events) BLOCKEIGS_CUDA_CHECK(cudaEventCreate(&e));
  for (int r = 0; r < reps; ++r) {
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(events[2 * r], s));
    run(r);
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(events[2 * r + 1], s));
  }
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> seconds(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    float ms = 0.0f;
    BLOCKEIGS_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * r], events[2 * r + 1]));
    seconds[static_cast<std::size_t>(r)] = 1e-3 * ms;
  }
  for (auto& e : events) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
  std::nth_element(seconds.begin(), seconds.begin() + reps / 2, seconds.end());
  return seconds[static_cast<std::size_t>(reps / 2)];
}

template void fill_block(const Strided<float>&, std::uint64_t, bool, void*);
template void fill_block(const Strided<double>&, std::uint64_t, bool, void*);
template std::vector<float> gather_rows(const Strided<float>&, const std::int64_t*, std::int64_t, float*, void*);
template std::vector<double> gather_rows(const Strided<double>&, const std::int64_t*, std::int64_t, double*, void*);
template void fill_block(const Strided<std::complex<float>>&, std::uint64_t, bool, void*);
template void fill_block(const Strided<std::complex<double>>&, std::uint64_t, bool, void*);
template std::vector<std::complex<float>> gather_rows(const Strided<std::complex<float>>&, const std::int64_t*,
                                                      std::int64_t, std::complex<float>*, void*);
template std::vector<std::complex<double>> gather_rows(const Strided<std::complex<double>>&, const std::int64_t*,
                                                       std::int64_t, std::complex<double>*, void*);

}  // namespace blockeigs::spmm::bench
