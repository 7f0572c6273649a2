// The partial sums of the device reductions added in a fixed order
// (sum_partials) straight into pinned host memory, and the transfer that
// delivers them (PinnedGramTransfer): shared by the block reductions
// (block_reductions_cuda.cu) and LOBPCG's fused ones (fused_reductions_cuda.cu).
// Private to the solver library's CUDA sources.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::device_ops {

// out[e] = sum over chunks c of partial[c * entries + e], for a slab of 32
// entries a block: thread (x, y) adds chunks y, y + 32, ... of entry x in
// order, so that each warp reads 32 neighbouring entries of one chunk (whole
// sectors), then a fixed tree over y adds the 32 sums. The shape never
// changes, so neither do the bits. (One block an entry, its threads striding
// over the chunks, read one 8-byte value per 32-byte sector; one thread per
// entry adding 1000-2000 chunks in a row waited on dependent L2 loads: both
// slower, on the path to the host's window; docs/benchmarks/block-ops.md#kernel-notes.)
constexpr int sum_slab = 32, sum_lanes = 32;

template <class T>
__global__ void __launch_bounds__(sum_slab* sum_lanes)
    sum_partials_kernel(std::int64_t chunks, std::int64_t entries, const T* partial, double* out) {
  __shared__ double sums[sum_lanes][sum_slab + 1];
  const int x = static_cast<int>(threadIdx.x) % sum_slab, y = static_cast<int>(threadIdx.x) / sum_slab;
  const std::int64_t e = std::int64_t{blockIdx.x} * sum_slab + x;
  double s = 0.0;
  if (e < entries)
    for (std::int64_t c = y; c < chunks; c += sum_lanes) s += static_cast<double>(partial[c * entries + e]);
  sums[y][x] = s;
  __syncthreads();
  for (int width = sum_lanes / 2; width > 0; width /= 2) {
    if (y < width) sums[y][x] += sums[y + width][x];
    __syncthreads();
  }
  if (y == 0 && e < entries) out[e] = sums[0][x];
}

template <class T>
inline void sum_partials(std::int64_t chunks, std::int64_t entries, const T* partial, double* out,
                         cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((entries + sum_slab - 1) / sum_slab);
  sum_partials_kernel<T><<<blocks, sum_slab * sum_lanes, 0, stream>>>(chunks, entries, partial, out);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// Pinned host blocks for Gram results, reused: page-locking memory for every
// Gram would cost more than the copy. Only a few are out at a time. Mapped,
// so that the kernel adding the partial sums writes its results straight
// into them. The events that mark their arrival are reused too. The pool is
// first used after the CUDA runtime is set up, so it is destroyed before the
// runtime's own exit handler runs, and frees its blocks then.
class PinnedPool {
 public:
  // A page-locked host block and the address kernels write it at (the
  // same block under unified addressing; asked once, when it is allocated).
  struct Block {
    std::size_t capacity = 0;
    double* host = nullptr;
    double* device = nullptr;
  };
  static PinnedPool& instance() {
    static PinnedPool pool;
    return pool;
  }
  PinnedPool() = default;
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;
  ~PinnedPool() {  // errors at exit are moot
    for (const Block& block : free_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(block.host));
    for (const auto& [device, event] : events_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event));
  }
  // A block of at least `bytes`.
  Block acquire(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < free_.size(); ++i)
        if (free_[i].capacity >= bytes) {
          const Block block = free_[i];
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          return block;
        }
    }
    Block block;
    block.capacity = std::max<std::size_t>(bytes, 64 * 1024);
    BLOCKEIGS_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&block.host), block.capacity,
                                       cudaHostAllocPortable | cudaHostAllocMapped));
    BLOCKEIGS_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&block.device), block.host, 0));
    return block;
  }
  void release(const Block& block) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(block);
  }
  // An event of `device` (events belong to the device current when made).
  cudaEvent_t acquire_event(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < events_.size(); ++i)
        if (events_[i].first == device) {
          cudaEvent_t event = events_[i].second;
          events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(i));
          return event;
        }
    }
    cudaEvent_t event = nullptr;
    BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }
  void release_event(cudaEvent_t event, int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.emplace_back(device, event);
  }

 private:
  std::mutex mutex_;
  std::vector<Block> free_;
  std::vector<std::pair<int, cudaEvent_t>> events_;
};

// The sums of `chunks` partials of `entries` values each (sum_partials),
// written by the summing kernel straight into a pinned host block: no copy
// after it, where a device buffer and a copy would put a kernel -> copy ->
// kernel hand-over on the stream, with the device idle between them
// (docs/benchmarks/solvers.md#host-window).
class PinnedGramTransfer final : public LocalGramTransfer {
 public:
  template <class T>
  PinnedGramTransfer(cudaStream_t stream, std::int64_t chunks, std::int64_t entries, const T* partial)
      : count_(static_cast<std::size_t>(entries)), block_(PinnedPool::instance().acquire(count_ * sizeof(double))) {
    sum_partials<T>(chunks, entries, partial, block_.device, stream);
    BLOCKEIGS_CUDA_CHECK(cudaGetDevice(&device_));
    arrived_ = PinnedPool::instance().acquire_event(device_);
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(arrived_, stream));
  }
  PinnedGramTransfer(const PinnedGramTransfer&) = delete;
  PinnedGramTransfer& operator=(const PinnedGramTransfer&) = delete;
  ~PinnedGramTransfer() override {
    // The sums may still be on their way when a transfer is dropped unread.
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventSynchronize(arrived_));
    PinnedPool::instance().release_event(arrived_, device_);
    PinnedPool::instance().release(block_);
  }
  void wait(double* out) override {
    BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(arrived_));
    std::copy(block_.host, block_.host + count_, out);
  }

 private:
  std::size_t count_;
  PinnedPool::Block block_;
  int device_ = 0;
  cudaEvent_t arrived_ = nullptr;
};

}  // namespace blockeigs::solver::device_ops
