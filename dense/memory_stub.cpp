// dense/memory.hpp's CUDA half where the build has no CUDA: no devices and
// no device memory to report; asking for device memory, or to copy or fill
// it, throws.
#include <string>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "dense/memory_backend.hpp"

namespace blockeigs::dense::cuda_memory {
namespace {
[[noreturn]] void no_device() { throw NotCompiled("device memory", "CUDA", "requested"); }
[[noreturn]] void not_compiled(const std::string& what) { throw NotCompiled(what, "CUDA"); }
}  // namespace

bool compiled() { return false; }
int device_count() { return 0; }
bool memory_info(std::size_t*, std::size_t*) { return false; }

void* allocate(std::size_t) { no_device(); }
// Nothing to free: allocate throws, so no device memory exists.
void free(void*) noexcept {}
void copy(void*, const void*, std::size_t) { no_device(); }
void copy_async(void*, const void*, std::size_t, void*) { no_device(); }
void fill(void*, int, std::size_t) { no_device(); }
bool is_pageable_to_device(void*, const void*) { return false; }
void upload_staged(void*, const void*, std::size_t, std::size_t) { no_device(); }

// Reached only with a device (device_count() > 0).
void* allocate_pinned(std::size_t) { not_compiled("allocate_pinned_bytes"); }
// Without CUDA no memory is page-locked.
bool free_if_pinned(void*) noexcept { return false; }

}  // namespace blockeigs::dense::cuda_memory
