// dense/memory.hpp's CUDA half where the build has no CUDA: no devices and
// no device memory to report; asking for device memory, or to copy or fill
// it, throws.
#include "core/not_compiled.hpp"
#include "dense/memory_backend.hpp"

namespace blockeigs::dense::cuda_memory {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

bool compiled() { return false; }
int device_count() { return 0; }
bool memory_info(std::size_t*, std::size_t*) { return false; }
bool is_pageable_to_device(void*, const void*) { return false; }
// Nothing to free: allocate throws, so no device memory exists.
void free(void*) noexcept {}
// Without CUDA no memory is page-locked.
bool free_if_pinned(void*) noexcept { return false; }

BLOCKEIGS_CUDA_MEMORY_OPERATIONS(BLOCKEIGS_BACKEND_STUB)

}  // namespace blockeigs::dense::cuda_memory
