// The CUDA half of dense/memory.hpp, behind plain functions: memory_cuda.cpp
// implements them, memory_stub.cpp (a build without CUDA) answers the
// queries (no devices, no device memory) and throws "not compiled with
// CUDA" from the rest. Private to dense/.
#pragma once

#include <cstddef>

#include "core/backend_lists.hpp"

namespace blockeigs::dense::cuda_memory {

// The queries, which a build without CUDA answers (no devices, no device
// memory, none page-locked), and the releases, which never throw.
bool compiled();
// 0 without a driver or a GPU.
int device_count();
// The current device's free and total bytes; false where it cannot say.
bool memory_info(std::size_t* free, std::size_t* total);
// Whether dst is device memory and src pageable host memory.
bool is_pageable_to_device(void* dst, const void* src);
void free(void* pointer) noexcept;
// Frees `pointer` when it is page-locked memory and says whether it was.
bool free_if_pinned(void* pointer) noexcept;

// What needs a device, each as OP(signature, name) (core/backend_lists.hpp): allocations, and copies and fills
// where at least one side is device memory; upload_staged is a synchronous copy from pageable host memory to the
// device through two page-locked buffers of chunk_bytes (staged_upload_cuda.cpp); page-locked host memory is
// only asked for with a device.
#define BLOCKEIGS_CUDA_MEMORY_OPERATIONS(OP)                                                             \
  OP(void* allocate(std::size_t bytes), "allocate device memory")                                        \
  OP(void copy(void* dst, const void* src, std::size_t bytes), "copy device memory")                     \
  OP(void copy_async(void* dst, const void* src, std::size_t bytes, void* stream), "copy device memory") \
  OP(void fill(void* dst, int byte_value, std::size_t bytes), "fill device memory")                      \
  OP(void upload_staged(void* dst, const void* src, std::size_t bytes, std::size_t chunk_bytes),         \
     "upload to device memory")                                                                          \
  OP(void* allocate_pinned(std::size_t bytes), "allocate_pinned_bytes")
BLOCKEIGS_CUDA_MEMORY_OPERATIONS(BLOCKEIGS_BACKEND_DECLARE)

}  // namespace blockeigs::dense::cuda_memory
