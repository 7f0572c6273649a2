// Memory spaces and RAII buffers. A Buffer owns memory in exactly one space;
// device buffers exist only in CUDA builds (elsewhere asking for one throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/enums.hpp"
#include "core/error.hpp"

namespace blockeigs::dense {

// True when the library was built with CUDA.
bool cuda_compiled();
// Number of usable CUDA devices (0 without CUDA, without a driver or without a GPU).
int cuda_device_count();

// Buffers' memory: every allocation here and in allocate_pinned_bytes is
// counted (memory_counters), so `bytes` must be what was allocated.
void* allocate_bytes(Space space, std::size_t bytes);
void free_bytes(Space space, void* pointer, std::size_t bytes) noexcept;
// Synchronous copy between any two spaces.
void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes);
// Copy queued on a device stream (stream may be null on the host, where the
// copy is synchronous). Host memory should be pinned for the copy to overlap.
void copy_bytes_async(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes, void* stream);
// copy_bytes from pageable host memory to the device, staged through
// page-locked buffers of chunk_bytes as copy_bytes does from 64 MiB; for tests
// of the pipeline on small copies.
void upload_staged_bytes(void* device_dst, const void* host_src, std::size_t bytes, std::size_t chunk_bytes);
// Page-locked host memory (plain host memory without CUDA).
void* allocate_pinned_bytes(std::size_t bytes);
void free_pinned_bytes(void* pointer, std::size_t bytes) noexcept;
// Fills bytes with a byte value (NaN patterns in tests use 0xff).
void fill_bytes(void* dst, Space space, int byte_value, std::size_t bytes);

// Bytes held by Buffers and PinnedBuffers in this process (pinned memory
// counts as host), now and at most since the last reset: relaxed atomic
// counters, cheap enough for every allocation. What the memory plan
// (solver/plan/memory_plan.hpp) is checked against.
struct MemoryCount {
  std::int64_t current = 0;
  std::int64_t peak = 0;
};
MemoryCount memory_counters(Space space);
// Starts a new peak at the current count (both spaces), and notes the
// device memory in use now (device_used_at_reset).
void reset_memory_peaks();
std::int64_t device_used_at_reset();
// The device's memory in use (cudaMemGetInfo: total - free, every process
// and library on it included) when the device count last reached a new
// peak; 0 before any device allocation, and without CUDA.
std::int64_t device_used_at_peak();
// The current device's free and total memory (cudaMemGetInfo); false
// without CUDA or a device.
bool device_memory(std::int64_t* free, std::int64_t* total);

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Space space, std::size_t count) : space_(space), count_(count) {
    if (count_ > 0) data_ = static_cast<T*>(allocate_bytes(space_, count_ * sizeof(T)));
  }
  // A buffer in `space` holding a copy of host data.
  Buffer(Space space, const std::vector<T>& host) : Buffer(space, host.size()) {
    copy_from_host(host.data(), host.size());
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~Buffer() { free_bytes(space_, data_, count_ * sizeof(T)); }

  Space space() const { return space_; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }

  void copy_from_host(const T* src, std::size_t count) {
    BLOCKEIGS_ASSERT(count <= count_);
    copy_bytes(data_, space_, src, Space::host, count * sizeof(T));
  }
  std::vector<T> to_host() const {
    std::vector<T> out(count_);
    copy_bytes(out.data(), Space::host, data_, space_, count_ * sizeof(T));
    return out;
  }

 private:
  void swap(Buffer& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(count_, other.count_);
    std::swap(data_, other.data_);
  }
  Space space_ = Space::host;
  std::size_t count_ = 0;
  T* data_ = nullptr;
};

// `from` in `space`: itself where it is there already, else a copy.
template <class T>
Buffer<T> in_space(Buffer<T>&& from, Space space) {
  if (from.space() == space) return std::move(from);
  Buffer<T> to(space, from.size());
  copy_bytes(to.data(), space, from.data(), from.space(), from.size() * sizeof(T));
  return to;
}

// Host memory, page-locked when CUDA is present: the staging buffers of
// asynchronous device copies.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) data_ = static_cast<T*>(allocate_pinned_bytes(count_ * sizeof(T)));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept { swap(other); }
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    PinnedBuffer moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~PinnedBuffer() { free_pinned_bytes(data_, count_ * sizeof(T)); }

  std::size_t size() const { return count_; }
  T* data() { return data_; }
  const T* data() const { return data_; }

 private:
  void swap(PinnedBuffer& other) noexcept {
    std::swap(count_, other.count_);
    std::swap(data_, other.data_);
  }
  std::size_t count_ = 0;
  T* data_ = nullptr;
};

}  // namespace blockeigs::dense
