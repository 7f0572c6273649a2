// Large copies from pageable host memory to the device, staged through two
// page-locked buffers: the host's threads fill one while the copy engine
// empties the other: a pageable cudaMemcpy runs at a fraction of a pinned
// one's rate (docs/benchmarks/time-to-solution.md#staged-upload).
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "core/cuda_checks.hpp"
#include "dense/memory_backend.hpp"

namespace blockeigs::dense::cuda_memory {
namespace {

// The staging buffers, made at the first staged copy and kept for the process
// (page-locking them costs about what the copy saves on 300 MB), with the
// stream and events of the pipeline. Copies take turns through the mutex.
struct Staging {
  std::mutex mutex;
  void* buffer[2] = {nullptr, nullptr};
  std::size_t bytes = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t emptied[2] = {nullptr, nullptr};
  int device = -1;
};

Staging& staging() {
  static Staging s;
  return s;
}

// Buffers of at least `bytes` each on the current device's context.
void ready(Staging& s, std::size_t bytes) {
  int device = 0;
  BLOCKEIGS_CUDA_CHECK(cudaGetDevice(&device));
  if (s.bytes >= bytes && s.device == device) return;
  // The stream and events of the device they were made on, released there.
  if (s.device >= 0 && s.device != device) BLOCKEIGS_CUDA_CHECK(cudaSetDevice(s.device));
  for (void*& b : s.buffer) {
    if (b) cudaFreeHost(b);
    b = nullptr;
  }
  for (cudaEvent_t& e : s.emptied) {
    if (e) cudaEventDestroy(e);
    e = nullptr;
  }
  if (s.stream) cudaStreamDestroy(s.stream);
  s.stream = nullptr;
  s.bytes = 0;
  s.device = -1;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(device));
  for (void*& b : s.buffer) BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&b, bytes));
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  for (cudaEvent_t& e : s.emptied) BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  s.bytes = bytes;
  s.device = device;
}

// memcpy by every thread of the rank, each a contiguous part.
void parallel_copy(char* dst, const char* src, std::size_t bytes) {
  const int threads = static_cast<int>(std::min<std::size_t>(omp_get_max_threads(), bytes / (1 << 20) + 1));
#pragma omp parallel num_threads(threads)
  {
    const std::size_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const std::size_t begin = bytes * t / n, end = bytes * (t + 1) / n;
    std::memcpy(dst + begin, src + begin, end - begin);
  }
}

}  // namespace

bool is_pageable_to_device(void* dst, const void* src) {
  cudaPointerAttributes to{}, from{};
  const bool known =
      cudaPointerGetAttributes(&to, dst) == cudaSuccess && cudaPointerGetAttributes(&from, src) == cudaSuccess;
  if (!known) (void)cudaGetLastError();
  return known && to.type == cudaMemoryTypeDevice && from.type == cudaMemoryTypeUnregistered;
}

void upload_staged(void* dst, const void* src, std::size_t bytes, std::size_t chunk_bytes) {
  if (bytes == 0) return;
  Staging& s = staging();
  std::lock_guard<std::mutex> lock(s.mutex);
  chunk_bytes = std::max<std::size_t>(1, std::min(chunk_bytes, bytes));
  ready(s, chunk_bytes);
  // Work queued before on the legacy stream comes first, as with cudaMemcpy.
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  int turn = 0;
  for (std::size_t done = 0; done < bytes; done += chunk_bytes, turn ^= 1) {
    const std::size_t piece = std::min(chunk_bytes, bytes - done);
    BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(s.emptied[turn]));  // its last copy out has finished
    parallel_copy(static_cast<char*>(s.buffer[turn]), from + done, piece);
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(to + done, s.buffer[turn], piece, cudaMemcpyHostToDevice, s.stream));
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(s.emptied[turn], s.stream));
  }
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s.stream));  // synchronous, as cudaMemcpy
}

}  // namespace blockeigs::dense::cuda_memory
