// Fresh host memory in transparent huge pages. The first touch of a fresh
// 4 KiB page costs a page fault, which bounds filling fresh memory far below
// the memory's bandwidth (docs/benchmarks/partition.md#fresh-memory). Large
// buffers that are filled anew ask the
// kernel for 2 MiB pages before their first touch (madvise; advice only:
// nothing changes where the kernel offers none).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace blockeigs {

// Asks for huge pages for the whole 2 MiB pages inside [data, data + bytes),
// which should not have been touched yet; the advice never reaches memory
// outside the range.
void advise_huge_pages(const void* data, std::size_t bytes);

// `v` with room for `n` elements, fresh ones in huge pages: an empty vector
// with less room is replaced by a fresh one (nothing is copied).
template <class T>
void reserve_in_huge_pages(std::vector<T>& v, std::size_t n) {
  if (!v.empty() || v.capacity() >= n) {
    v.reserve(n);
    return;
  }
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

// Touches every 4 KiB page of [data, data + bytes) once, on all of the
// calling rank's threads (each a contiguous share), so that the page faults
// of fresh memory run in parallel.
void touch_pages_in_parallel(void* data, std::size_t bytes);

// `v` resized to `n` for the caller's threads to fill: its fresh pages in
// huge pages, faulted in by every thread, then the new elements
// value-initialised (on one thread, over pages already present).
template <class T>
void resize_for_parallel_fill(std::vector<T>& v, std::size_t n) {
  reserve_in_huge_pages(v, n);
  if (v.size() < n) touch_pages_in_parallel(v.data() + v.size(), (n - v.size()) * sizeof(T));
  v.resize(n);
}

// `n` elements left uninitialised, shared, in fresh huge pages where n spans several.
template <class T>
std::shared_ptr<T[]> shared_array_in_huge_pages(std::size_t n) {
  std::shared_ptr<T[]> array = std::make_shared_for_overwrite<T[]>(n);
  advise_huge_pages(array.get(), n * sizeof(T));
  return array;
}

}  // namespace blockeigs
