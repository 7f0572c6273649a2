// Helpers shared by the device block operations (solver/blocks/cuda/block_ops_cuda.cu)
// and reductions (solver/blocks/cuda/block_reductions_cuda.cu): the context's stream and
// cuBLAS handle, grid sizes and stream-ordered scratch memory. Private to the solver library's CUDA sources.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dense/context.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::device_ops::support {

inline constexpr int threads_per_block = 256;
inline cudaStream_t stream_of(const dense::Context& context) { return static_cast<cudaStream_t>(context.stream()); }

inline cublasHandle_t cublas_of(const dense::Context& context) {
  auto handle = static_cast<cublasHandle_t>(context.cublas_handle());
  // alpha and beta are host scalars; set every time, as the handle is shared.
  BLOCKEIGS_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  return handle;
}

inline int grid_for(std::int64_t total) {
  return static_cast<int>(std::clamp<std::int64_t>((total + threads_per_block - 1) / threads_per_block, 1, 65535));
}

// Device memory for the call's duration, ordered on the stream (the pool makes
// it cheap after the first iterations).
template <class T>
class StreamArray {
 public:
  StreamArray(cudaStream_t stream, std::size_t count) : stream_(stream) {
    if (count > 0) BLOCKEIGS_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream_));
  }
  // A device copy of host values, converted to T. A pageable-host copy is
  // staged before cudaMemcpyAsync returns, so `host` may go away afterwards.
  template <class U>
  StreamArray(cudaStream_t stream, const U* host, std::size_t count) : StreamArray(stream, count) {
    if (count == 0) return;
    std::vector<T> converted(host, host + count);
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(data_, converted.data(), count * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }
  StreamArray(const StreamArray&) = delete;
  StreamArray& operator=(const StreamArray&) = delete;
  ~StreamArray() {
    if (data_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeAsync(data_, stream_));
  }
  T* data() const { return data_; }

 private:
  cudaStream_t stream_;
  T* data_ = nullptr;
};

}  // namespace blockeigs::solver::device_ops::support
