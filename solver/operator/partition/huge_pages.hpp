// Fresh memory in transparent huge pages. The first touch of a fresh page
// costs a page fault, and in 4 KiB pages that bounds writing fresh memory far
// below the memory's bandwidth (about 1 GB/s against 20 GB/s for a warm
// memset on the CPU box of docs/benchmarks/partition.md). Vectors that the
// partition code fills anew ask the kernel for 2 MiB pages before their
// first touch (madvise; nothing changes where the kernel does not offer them).
#pragma once

#include <cstddef>
#include <vector>

namespace blockeigs::solver {

// Asks for huge pages for [data, data + bytes), which must not have been
// touched yet; small ranges are left alone.
void advise_huge_pages(void* data, std::size_t bytes);

// `v` with room for `n` elements, fresh ones in huge pages (v must be empty).
template <class T>
void reserve_in_huge_pages(std::vector<T>& v, std::size_t n) {
  if (!v.empty() || v.capacity() >= n) {
    v.reserve(n);
    return;
  }
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
}

}  // namespace blockeigs::solver
