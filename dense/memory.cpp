#include "dense/memory.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dense/memory_backend.hpp"

namespace blockeigs::dense {

bool cuda_compiled() { return cuda_memory::compiled(); }

int cuda_device_count() { return cuda_memory::device_count(); }

namespace {

// Per space (host, device): bytes held now and the most held since a reset.
std::atomic<std::int64_t> held[2];
std::atomic<std::int64_t> peak_held[2];
std::atomic<std::int64_t> device_used_then{0};
std::atomic<std::int64_t> device_used_before{0};

int slot(Space space) { return space == Space::host ? 0 : 1; }

void record_used_on_device() {
  std::size_t free = 0, total = 0;
  if (cuda_memory::memory_info(&free, &total))
    device_used_then.store(static_cast<std::int64_t>(total - free), std::memory_order_relaxed);
}

void count_allocated(Space space, std::size_t bytes) {
  const int s = slot(space);
  const std::int64_t now =
      held[s].fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed) + static_cast<std::int64_t>(bytes);
  std::int64_t peak = peak_held[s].load(std::memory_order_relaxed);
  while (now > peak && !peak_held[s].compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  // A new device peak: what the device holds in all (contexts, libraries, other processes) at it.
  if (now > peak && space == Space::device) record_used_on_device();
}

void count_freed(Space space, std::size_t bytes) {
  held[slot(space)].fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace

MemoryCount memory_counters(Space space) {
  return {held[slot(space)].load(std::memory_order_relaxed), peak_held[slot(space)].load(std::memory_order_relaxed)};
}

void reset_memory_peaks() {
  for (int s = 0; s < 2; ++s) peak_held[s].store(held[s].load(std::memory_order_relaxed), std::memory_order_relaxed);
  device_used_then.store(0, std::memory_order_relaxed);
  std::int64_t free = 0, total = 0;
  device_used_before.store(device_memory(&free, &total) ? total - free : 0, std::memory_order_relaxed);
}

std::int64_t device_used_at_reset() { return device_used_before.load(std::memory_order_relaxed); }

std::int64_t device_used_at_peak() { return device_used_then.load(std::memory_order_relaxed); }

bool device_memory(std::int64_t* free, std::int64_t* total) {
  std::size_t f = 0, t = 0;
  if (cuda_device_count() == 0 || !cuda_memory::memory_info(&f, &t)) return false;
  *free = static_cast<std::int64_t>(f);
  *total = static_cast<std::int64_t>(t);
  return true;
}

void* allocate_bytes(Space space, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (space == Space::host) {
    // 64-byte alignment: vector loads in the reference kernels, and pinned-like behaviour for staging.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    count_allocated(space, bytes);
    return p;
  }
  void* p = cuda_memory::allocate(bytes);
  count_allocated(space, bytes);
  return p;
}

void free_bytes(Space space, void* pointer, std::size_t bytes) noexcept {
  if (!pointer) return;
  count_freed(space, bytes);
  if (space == Space::host) {
    std::free(pointer);
    return;
  }
  cuda_memory::free(pointer);
}

void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_space == Space::host && src_space == Space::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
  cuda_memory::copy(dst, src, bytes);
}

void copy_bytes_async(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  if (dst_space == Space::host && src_space == Space::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
  cuda_memory::copy_async(dst, src, bytes, stream);
}

void upload_staged_bytes(void* device_dst, const void* host_src, std::size_t bytes, std::size_t chunk_bytes) {
  cuda_memory::upload_staged(device_dst, host_src, bytes, chunk_bytes);
}

void* allocate_pinned_bytes(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (cuda_device_count() == 0) return allocate_bytes(Space::host, bytes);
  void* p = cuda_memory::allocate_pinned(bytes);
  count_allocated(Space::host, bytes);
  return p;
}

void free_pinned_bytes(void* pointer, std::size_t bytes) noexcept {
  if (!pointer) return;
  if (cuda_memory::free_if_pinned(pointer)) {
    count_freed(Space::host, bytes);
    return;
  }
  free_bytes(Space::host, pointer, bytes);
}

void fill_bytes(void* dst, Space space, int byte_value, std::size_t bytes) {
  if (bytes == 0) return;
  if (space == Space::host) {
    std::memset(dst, byte_value, bytes);
    return;
  }
  cuda_memory::fill(dst, byte_value, bytes);
}

}  // namespace blockeigs::dense
