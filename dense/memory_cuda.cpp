// The CUDA half of dense/memory.hpp (dense/memory_backend.hpp).
#include "core/cuda_checks.hpp"
#include "dense/memory_backend.hpp"

namespace blockeigs::dense::cuda_memory {

bool compiled() { return true; }

int device_count() {
  int count = 0;
  // No driver or no GPU is not an error here: the CPU backend runs instead.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

bool memory_info(std::size_t* free, std::size_t* total) {
  if (cudaMemGetInfo(free, total) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void free(void* pointer) noexcept { cudaFree(pointer); }

// Uploads from pageable memory of this size and more go through the staging
// buffers (staged_upload_cuda.cpp), in pieces of kStageChunk.
constexpr std::size_t kStagedFrom = std::size_t(64) << 20, kStageChunk = std::size_t(16) << 20;

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes >= kStagedFrom && is_pageable_to_device(dst, src)) return upload_staged(dst, src, bytes, kStageChunk);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

void copy_async(void* dst, const void* src, std::size_t bytes, void* stream) {
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}

void fill(void* dst, int byte_value, std::size_t bytes) { BLOCKEIGS_CUDA_CHECK(cudaMemset(dst, byte_value, bytes)); }

void* allocate_pinned(std::size_t bytes) {
  void* p = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

bool free_if_pinned(void* pointer) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) == cudaSuccess && attributes.type == cudaMemoryTypeHost) {
    cudaFreeHost(pointer);
    return true;
  }
  (void)cudaGetLastError();
  return false;
}

}  // namespace blockeigs::dense::cuda_memory
