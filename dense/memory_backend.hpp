// The CUDA half of dense/memory.hpp, behind plain functions: memory_cuda.cpp
// implements them, memory_stub.cpp (a build without CUDA) answers the
// queries (no devices, no device memory) and throws "not compiled with
// CUDA" from the rest. Private to dense/.
#pragma once

#include <cstddef>

namespace blockeigs::dense::cuda_memory {

bool compiled();
// 0 without a driver or a GPU.
int device_count();
// The current device's free and total bytes; false where it cannot say.
bool memory_info(std::size_t* free, std::size_t* total);

void* allocate(std::size_t bytes);
void free(void* pointer) noexcept;
// Copies and fills where at least one side is device memory.
void copy(void* dst, const void* src, std::size_t bytes);
void copy_async(void* dst, const void* src, std::size_t bytes, void* stream);
void fill(void* dst, int byte_value, std::size_t bytes);
// Whether dst is device memory and src pageable host memory.
bool is_pageable_to_device(void* dst, const void* src);
// A synchronous copy from pageable host memory to the device through two
// page-locked buffers of chunk_bytes (staged_upload_cuda.cpp).
void upload_staged(void* dst, const void* src, std::size_t bytes, std::size_t chunk_bytes);

// Page-locked host memory; only with a device.
void* allocate_pinned(std::size_t bytes);
// Frees `pointer` when it is page-locked memory and says whether it was.
bool free_if_pinned(void* pointer) noexcept;

}  // namespace blockeigs::dense::cuda_memory
