#include "solver/operator/partition/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace blockeigs::solver {

void advise_huge_pages(void* data, std::size_t bytes) {
  constexpr std::uintptr_t kPage = 4096, kHuge = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  // madvise takes whole pages: the pages wholly inside the range.
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
}

}  // namespace blockeigs::solver
