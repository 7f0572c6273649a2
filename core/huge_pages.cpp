#include "core/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace blockeigs {

void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (data && end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void touch_pages_in_parallel(void* data, std::size_t bytes) {
  constexpr std::int64_t page = 4096;
  auto* const first = static_cast<volatile char*>(data);
  const auto pages = static_cast<std::int64_t>((bytes + page - 1) / page);
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pages; ++p) first[p * page] = 0;
}

}  // namespace blockeigs
