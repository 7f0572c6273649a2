#include "spmm/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#ifdef BLOCKEIGS_HAVE_CUDA
#include "spmm/cuda/cuda_check.hpp"
#endif

namespace blockeigs::spmm {

bool cuda_compiled() {
#ifdef BLOCKEIGS_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef BLOCKEIGS_HAVE_CUDA
  int count = 0;
  // No driver or no GPU is not an error here: the CPU backend runs instead.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

namespace {
[[noreturn]] void no_device() {
  throw Error("device memory requested, but block-eigs was built without CUDA");
}
}  // namespace

void* allocate_bytes(Space space, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (space == Space::host) {
    // 64-byte alignment: vector loads in the reference kernels, and pinned-like behaviour for staging.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  void* p = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
#else
  no_device();
#endif
}

void free_bytes(Space space, void* pointer) noexcept {
  if (!pointer) return;
  if (space == Space::host) {
    std::free(pointer);
    return;
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  cudaFree(pointer);
#endif
}

void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_space == Space::host && src_space == Space::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  BLOCKEIGS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
#else
  no_device();
#endif
}

void copy_bytes_async(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes,
                      void* stream) {
  if (bytes == 0) return;
  if (dst_space == Space::host && src_space == Space::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  BLOCKEIGS_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
#else
  (void)stream;
  no_device();
#endif
}

void* allocate_pinned_bytes(std::size_t bytes) {
  if (bytes == 0) return nullptr;
#ifdef BLOCKEIGS_HAVE_CUDA
  if (cuda_device_count() > 0) {
    void* p = nullptr;
    BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
#endif
  return allocate_bytes(Space::host, bytes);
}

void free_pinned_bytes(void* pointer) noexcept {
  if (!pointer) return;
#ifdef BLOCKEIGS_HAVE_CUDA
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) == cudaSuccess &&
      attributes.type == cudaMemoryTypeHost) {
    cudaFreeHost(pointer);
    return;
  }
  (void)cudaGetLastError();
#endif
  free_bytes(Space::host, pointer);
}

void fill_bytes(void* dst, Space space, int byte_value, std::size_t bytes) {
  if (bytes == 0) return;
  if (space == Space::host) {
    std::memset(dst, byte_value, bytes);
    return;
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  BLOCKEIGS_CUDA_CHECK(cudaMemset(dst, byte_value, bytes));
#else
  no_device();
#endif
}

}  // namespace blockeigs::spmm
