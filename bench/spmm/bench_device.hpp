// Device helpers of spmm-bench: hash-valued fills, gathering sampled rows,
// the device-to-device copy bandwidth, and per-run CUDA event timing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dense/context.hpp"

namespace blockeigs::spmm::bench {

// A rows x cols block with element (i, j) at data[i * row_stride + j * col_stride]:
// row-major is (ld, 1), column-major (1, ld).
template <class T>
struct Strided {
  T* data = nullptr;
  std::int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 1;
};

// Element (i, j) = T(bench_value(seed, i, j)); NaN everywhere when `nan`.
template <class T>
void fill_block(const Strided<T>& block, std::uint64_t seed, bool nan, void* stream);

// out[s * cols + j] = block(rows[s], j) for the sampled rows (device `rows`,
// device `out`), then copied to the host.
template <class T>
std::vector<T> gather_rows(const Strided<T>& block, const std::int64_t* device_rows, std::int64_t count, T* device_out,
                           void* stream);

// Device-to-device cudaMemcpy bandwidth in bytes/s, counting read + write.
double copy_bandwidth(std::size_t bytes);

// "NVIDIA H100 80GB HBM3, 132 SMs, 50 MB L2".
std::string device_description(int device);

// cudaDeviceSynchronize, checked.
void synchronize_device();

// L2 size in bytes and free device memory.
std::size_t l2_bytes(int device);
std::size_t free_device_bytes();

// Median of per-run times (event pairs around each call) in seconds; `run`
// gets the run number (for rotating inputs).
double median_seconds(void* stream, int reps, const std::function<void(int)>& run);

}  // namespace blockeigs::spmm::bench
