#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <limits>

#include "solver/operator/cuda/row_search.cuh"
#include "solver/operator/symmetry_check_device.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {
namespace {

using row_search::blocks_for;
using row_search::threads;

struct Rows {
  const std::int64_t* offsets;
  const std::int64_t* cols;
  const double* values;
  std::int64_t m, first;
};

// A(first + row, col), 0 where it is not stored (a row's columns ascend).
__device__ double stored(const Rows& r, std::int64_t row, std::int64_t col) {
  const std::int64_t end = r.offsets[row + 1], at = row_search::first_at_least(r.cols, r.offsets[row], end, col);
  return at < end && r.cols[at] == col ? r.values[at] : 0.0;
}

// The host check's test (symmetry_check.cpp), in the same arithmetic.
__device__ bool close(double aij, double aji) { return fabs(aij - aji) <= 1e-12 * fmax(fabs(aij), fabs(aji)); }

// Each local row's entries with local columns against their transposes;
// remote[i] = 1 where row i has a column owned elsewhere.
__global__ void local_kernel(Rows r, int* mismatch, int* remote) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < r.m;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int has_remote = 0, bad = 0;
    for (std::int64_t k = r.offsets[i]; k < r.offsets[i + 1]; ++k) {
      const std::int64_t j = r.cols[k] - r.first;
      if (j < 0 || j >= r.m)
        has_remote = 1;
      else if (j != i && !close(r.values[k], stored(r, j, r.first + i)))
        bad = 1;
    }
    remote[i] = has_remote;
    if (bad) atomicOr(mismatch, 1);
  }
}

template <class Index>
__global__ void received_kernel(Rows r, const Index* row, const Index* col, const double* value, std::int64_t count,
                                int* mismatch) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < count;
       e += std::int64_t(gridDim.x) * blockDim.x)
    if (!close(value[e], stored(r, row[e], col[e]))) atomicOr(mismatch, 1);
}

int read_flag(const dense::Buffer<int>& flag, cudaStream_t stream) {
  int value = 0;
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&value, flag.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

struct DeviceSymmetryRows::Impl {
  cudaStream_t stream;
  std::int64_t m, first;
  dense::Buffer<std::int64_t> offsets, cols;
  dense::Buffer<double> values;
  Rows rows() const { return {offsets.data(), cols.data(), values.data(), m, first}; }
};

bool DeviceSymmetryRows::fits(const CsrRows& rows, std::int64_t received) {
  std::int64_t free = 0, total = 0;
  if (!dense::device_memory(&free, &total)) return false;
  const std::int64_t need = 8 * (rows.local_rows() + 1) + 16 * rows.nnz() + 12 * rows.local_rows() + 24 * received;
  return need + total / 8 <= free;
}

DeviceSymmetryRows::DeviceSymmetryRows(const dense::Context& context, const CsrRows& rows)
    : impl_(std::make_unique<Impl>()) {
  impl_->stream = static_cast<cudaStream_t>(context.stream());
  impl_->m = rows.local_rows();
  impl_->first = rows.first_row;
  impl_->offsets = dense::Buffer<std::int64_t>(Space::device, rows.row_offsets);
  impl_->cols = dense::Buffer<std::int64_t>(Space::device, rows.col_indices);
  impl_->values = dense::Buffer<double>(Space::device, rows.values);
}

DeviceSymmetryRows::~DeviceSymmetryRows() {
  if (impl_) cudaStreamSynchronize(impl_->stream);  // the Buffers go with work done
}

DeviceLocalPass DeviceSymmetryRows::local_pass() const {
  DeviceLocalPass out;
  const std::int64_t m = impl_->m;
  if (m == 0) return out;
  const cudaStream_t stream = impl_->stream;
  dense::Buffer<int> mismatch(Space::device, 1), remote(Space::device, static_cast<std::size_t>(m));
  dense::Buffer<std::int64_t> listed(Space::device, static_cast<std::size_t>(m)), count(Space::device, 1);
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(mismatch.data(), 0, sizeof(int), stream));
  local_kernel<<<blocks_for(m), threads, 0, stream>>>(impl_->rows(), mismatch.data(), remote.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  // The rows with remote entries, listed in order.
  const thrust::counting_iterator<std::int64_t> row_ids(0);
  std::size_t bytes = 0;
  BLOCKEIGS_CUDA_CHECK(
      cub::DeviceSelect::Flagged(nullptr, bytes, row_ids, remote.data(), listed.data(), count.data(), m, stream));
  dense::Buffer<unsigned char> work(Space::device, bytes);
  BLOCKEIGS_CUDA_CHECK(
      cub::DeviceSelect::Flagged(work.data(), bytes, row_ids, remote.data(), listed.data(), count.data(), m, stream));
  std::int64_t n = 0;
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&n, count.data(), sizeof(n), cudaMemcpyDeviceToHost, stream));
  out.mismatch = read_flag(mismatch, stream) != 0;
  out.remote_rows.resize(static_cast<std::size_t>(n));
  dense::copy_bytes_async(out.remote_rows.data(), Space::host, listed.data(), Space::device,
                          static_cast<std::size_t>(n) * sizeof(std::int64_t), stream);
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

template <class Index>
bool DeviceSymmetryRows::received_mismatch(const std::vector<Index>& row, const std::vector<Index>& col,
                                           const std::vector<double>& value) const {
  const auto count = static_cast<std::int64_t>(row.size());
  if (count == 0) return false;
  const cudaStream_t stream = impl_->stream;
  const dense::Buffer<Index> r(Space::device, row), c(Space::device, col);
  const dense::Buffer<double> v(Space::device, value);
  dense::Buffer<int> mismatch(Space::device, 1);
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(mismatch.data(), 0, sizeof(int), stream));
  received_kernel<Index>
      <<<blocks_for(count), threads, 0, stream>>>(impl_->rows(), r.data(), c.data(), v.data(), count, mismatch.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  return read_flag(mismatch, stream) != 0;
}

template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int32_t>&, const std::vector<std::int32_t>&,
                                                    const std::vector<double>&) const;
template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,
                                                    const std::vector<double>&) const;

}  // namespace blockeigs::solver
