// The split of local_blocks.hpp on the device: host rows are uploaded once as
// loaded, a replicated matrix's device arrays (replicated_csr.hpp) are read in
// place; each row's diagonal-block run is found by binary search (columns
// ascend within a row); CUB's scans place the rows, its radix sort and unique
// give the halo columns; the fill writes each array once. The host split
// (local_blocks.cpp) is its twin: the same arrays, bit for bit.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <functional>
#include <complex>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "core/scalar.hpp"
#include "solver/operator/cuda/row_search.cuh"
#include "solver/operator/local_blocks.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {
namespace {

using row_search::blocks_for;
using row_search::first_at_least;
using row_search::threads;

// The rank's rows: local row i's entries are [offsets[i], offsets[i + 1]) of
// cols and the values (positions into whole arrays for a replicated matrix).
template <class Index>
struct Rows {
  const Index* offsets;
  const Index* cols;
  std::int64_t m, begin, end;
};

// Each row's diagonal-block and off-diagonal counts, and whether it has
// off-diagonal entries (entry m of each stays 0 for the exclusive scans).
template <class Index>
__global__ void count_kernel(Rows<Index> r, std::int32_t* diagonal, std::int32_t* off, std::int32_t* has_off) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < r.m;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t lo = r.offsets[i], hi = r.offsets[i + 1];
    const std::int64_t first = first_at_least(r.cols, lo, hi, r.begin);
    const std::int64_t last = first_at_least(r.cols, first, hi, r.end);
    diagonal[i] = static_cast<std::int32_t>(last - first);
    off[i] = static_cast<std::int32_t>((hi - lo) - (last - first));
    has_off[i] = off[i] > 0 ? 1 : 0;
  }
}

struct Placement {
  const std::int32_t* d_offsets;  // the diagonal block's row offsets
  const std::int32_t* off_start;  // each row's first off-diagonal entry
  const std::int32_t* off_row;    // each row's row in the off-diagonal block
};

// How the device stores a block's values: T, or a complex double as double2
// (std::complex's layout), read from (re, im) pairs.
template <class T>
using Stored = std::conditional_t<is_complex_v<T>, double2, T>;

template <class S>
__device__ S value_at(const double* values, std::int64_t k) {
  if constexpr (std::is_same_v<S, double2>)
    return make_double2(values[2 * k], values[2 * k + 1]);
  else
    return static_cast<S>(values[k]);
}

// The diagonal block's columns and values, the diagonal entries, the
// off-diagonal block's row list, offsets and values, and each off-diagonal
// entry's global column (renumbered once the halo columns are known).
template <class T, class Index>
__global__ void fill_kernel(Rows<Index> r, const double* values, Placement p, std::int32_t* dc, T* dv,
                            T* diagonal_entries, std::int32_t* off_rows, std::int32_t* o_offsets,
                            std::int64_t* off_global, T* ov) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < r.m;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t lo = r.offsets[i], hi = r.offsets[i + 1];
    const std::int64_t first = first_at_least(r.cols, lo, hi, r.begin);
    const std::int64_t last = first_at_least(r.cols, first, hi, r.end);
    std::int64_t d = p.d_offsets[i];
    for (std::int64_t k = first; k < last; ++k, ++d) {
      const std::int64_t c = r.cols[k] - r.begin;
      dc[d] = static_cast<std::int32_t>(c);
      dv[d] = value_at<T>(values, k);
      if (c == i) diagonal_entries[i] = dv[d];
    }
    std::int64_t o = p.off_start[i];
    if (o == p.off_start[i + 1]) continue;
    const std::int32_t row = p.off_row[i];
    off_rows[row] = static_cast<std::int32_t>(i);
    o_offsets[row + 1] = p.off_start[i + 1];
    for (std::int64_t k = lo; k < hi; ++k) {
      if (k == first) k = last;
      if (k >= hi) break;
      off_global[o] = r.cols[k];
      ov[o] = value_at<T>(values, k);
      ++o;
    }
  }
}

// Each off-diagonal entry's column: its global column's place among the halo columns.
__global__ void renumber_kernel(const std::int64_t* off_global, std::int64_t count, const std::int64_t* halo,
                                std::int64_t halo_count, std::int32_t* oc) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < count;
       e += std::int64_t(gridDim.x) * blockDim.x)
    oc[e] = static_cast<std::int32_t>(first_at_least(halo, 0, halo_count, off_global[e]));
}

template <class U>
dense::Buffer<U> device_buffer(std::int64_t count) {
  return dense::Buffer<U>(Space::device, static_cast<std::size_t>(count));
}

template <class U>
U read_back(const U* device_value, cudaStream_t stream) {
  U value{};
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&value, device_value, sizeof(U), cudaMemcpyDeviceToHost, stream));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

// CUB's two-call form: the first call sizes the work space, the second runs.
class CubWorkspace {
 public:
  template <class Call>
  void run(Call call, cudaStream_t stream) {
    std::size_t bytes = 0;
    BLOCKEIGS_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes, stream));
    if (bytes > space_.size()) {
      BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the earlier call may still use the old space
      space_ = device_buffer<unsigned char>(static_cast<std::int64_t>(bytes));
    }
    BLOCKEIGS_CUDA_CHECK(call(static_cast<void*>(space_.data()), bytes, stream));
  }

 private:
  dense::Buffer<unsigned char> space_;
};

// An exclusive scan of count[0..n] (count[n] == 0) into out[0..n].
void exclusive_scan(CubWorkspace& work, const std::int32_t* count, std::int32_t* out, std::int64_t n,
                    cudaStream_t stream) {
  work.run([&](void* space, std::size_t& bytes,
               cudaStream_t s) { return cub::DeviceScan::ExclusiveSum(space, bytes, count, out, n, s); },
           stream);
}

// The halo columns: the off-diagonal entries' global columns, sorted and
// unique, into `halo_columns` (host); each entry's column (o_cols) renumbered
// as its place among them.
void number_halo_columns(CubWorkspace& work, const std::int64_t* off_global, std::int64_t off_nnz, std::int32_t* o_cols,
                         std::vector<std::int64_t>& halo_columns, cudaStream_t stream) {
  dense::Buffer<std::int64_t> sorted = device_buffer<std::int64_t>(off_nnz);
  dense::Buffer<std::int64_t> halo = device_buffer<std::int64_t>(off_nnz);
  dense::Buffer<std::int64_t> halo_count = device_buffer<std::int64_t>(1);
  work.run(
      [&](void* space, std::size_t& bytes, cudaStream_t s) {
        return cub::DeviceRadixSort::SortKeys(space, bytes, off_global, sorted.data(), off_nnz, 0, 64, s);
      },
      stream);
  work.run(
      [&](void* space, std::size_t& bytes, cudaStream_t s) {
        return cub::DeviceSelect::Unique(space, bytes, sorted.data(), halo.data(), halo_count.data(), off_nnz, s);
      },
      stream);
  const std::int64_t count = read_back(halo_count.data(), stream);
  renumber_kernel<<<blocks_for(off_nnz), threads, 0, stream>>>(off_global, off_nnz, halo.data(), count, o_cols);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  halo_columns.resize(static_cast<std::size_t>(count));
  dense::copy_bytes_async(halo_columns.data(), Space::host, halo.data(), Space::device,
                          static_cast<std::size_t>(count) * sizeof(std::int64_t), stream);
}

// The split of rows `r` (positions into `values`); `uploaded`, where the rows
// were uploaded for it, is freed once the fill is done, to make room for the sort.
template <class T, class Index>
LocalBlocks<T> split_on_device(const dense::Context& context, const Rows<Index>& r, const double* values,
                               std::int64_t nnz, std::function<void()> release_uploaded) {
  constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
  if (nnz > int32_max)
    fail_input("one rank holds ", nnz, " nonzeros; local blocks are limited to 2^31 - 1: ", "run with more ranks");
  const auto stream = static_cast<cudaStream_t>(context.stream());
  const std::int64_t m = r.m;
  LocalBlocks<T> out;
  dense::Buffer<std::int32_t> d_offsets = device_buffer<std::int32_t>(m + 1);
  dense::Buffer<std::int32_t> off_start = device_buffer<std::int32_t>(m + 1);
  dense::Buffer<std::int32_t> off_row = device_buffer<std::int32_t>(m + 1);
  std::int64_t diagonal_nnz = 0, off_nnz = 0, off_rows = 0;
  CubWorkspace work;
  if (m > 0) {
    dense::Buffer<std::int32_t> diagonal = device_buffer<std::int32_t>(m + 1), off = device_buffer<std::int32_t>(m + 1),
                                has_off = device_buffer<std::int32_t>(m + 1);
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(diagonal.data() + m, 0, sizeof(std::int32_t), stream));
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(off.data() + m, 0, sizeof(std::int32_t), stream));
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(has_off.data() + m, 0, sizeof(std::int32_t), stream));
    count_kernel<Index><<<blocks_for(m), threads, 0, stream>>>(r, diagonal.data(), off.data(), has_off.data());
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
    exclusive_scan(work, diagonal.data(), d_offsets.data(), m + 1, stream);
    exclusive_scan(work, off.data(), off_start.data(), m + 1, stream);
    exclusive_scan(work, has_off.data(), off_row.data(), m + 1, stream);
    diagonal_nnz = read_back(d_offsets.data() + m, stream);
    off_nnz = read_back(off_start.data() + m, stream);
    off_rows = read_back(off_row.data() + m, stream);
  } else {
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(d_offsets.data(), 0, sizeof(std::int32_t), stream));
  }

  dense::Buffer<std::int32_t> d_cols = device_buffer<std::int32_t>(diagonal_nnz);
  dense::Buffer<T> d_values = device_buffer<T>(diagonal_nnz);
  dense::Buffer<std::int32_t> o_offsets = device_buffer<std::int32_t>(off_rows + 1);
  dense::Buffer<std::int32_t> o_cols = device_buffer<std::int32_t>(off_nnz);
  dense::Buffer<T> o_values = device_buffer<T>(off_nnz);
  out.off_diagonal_rows = device_buffer<std::int32_t>(off_rows);
  out.diagonal_entries = device_buffer<T>(m);
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(o_offsets.data(), 0, sizeof(std::int32_t), stream));
  if (m > 0) {
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(out.diagonal_entries.data(), 0, m * sizeof(T), stream));
    dense::Buffer<std::int64_t> off_global = device_buffer<std::int64_t>(off_nnz);
    const Placement p{d_offsets.data(), off_start.data(), off_row.data()};
    using S = Stored<T>;
    static_assert(sizeof(S) == sizeof(T));
    fill_kernel<S, Index><<<blocks_for(m), threads, 0, stream>>>(
        r, values, p, d_cols.data(), reinterpret_cast<S*>(d_values.data()),
        reinterpret_cast<S*>(out.diagonal_entries.data()), out.off_diagonal_rows.data(), o_offsets.data(),
        off_global.data(), reinterpret_cast<S*>(o_values.data()));
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
    if (off_nnz > 0) {
      // The halo columns: the off-diagonal entries' global columns, sorted and
      // unique, in the room the rows as uploaded leave once the fill is done.
      BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (release_uploaded) release_uploaded();
      number_halo_columns(work, off_global.data(), off_nnz, o_cols.data(), out.halo_columns, stream);
    }
  }
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.diagonal = spmm::CsrMatrix<T>(m, m, std::move(d_offsets), std::move(d_cols), std::move(d_values));
  out.off_diagonal = spmm::CsrMatrix<T>(off_rows, static_cast<std::int64_t>(out.halo_columns.size()),
                                        std::move(o_offsets), std::move(o_cols), std::move(o_values));
  return out;
}

}  // namespace

template <class T>
LocalBlocks<T> split_local_rows_on_device(const dense::Context& context, const CsrRows& rows) {
  const std::int64_t m = rows.local_rows();
  dense::Buffer<std::int64_t> offsets, cols;
  dense::Buffer<double> values;
  if (m > 0) {
    offsets = dense::Buffer<std::int64_t>(Space::device, rows.row_offsets);
    cols = dense::Buffer<std::int64_t>(Space::device, rows.col_indices);
    values = dense::Buffer<double>(Space::device, rows.values);
  }
  const Rows<std::int64_t> r{offsets.data(), cols.data(), m, rows.first_row, rows.first_row + m};
  return split_on_device<T>(context, r, values.data(), rows.nnz(), [&] {
    values = dense::Buffer<double>();
    cols = dense::Buffer<std::int64_t>();
  });
}

template <class T>
LocalBlocks<T> split_replicated_on_device(const dense::Context& context, const ReplicatedCsr& a) {
  if (a.space != Space::device) throw Error("split_replicated_on_device: the arrays are not in device memory");
  if (a.complex != is_complex_v<T>)
    throw Error(std::string("split_replicated_on_device: ") + (a.complex ? "complex" : "real") + " values for a " +
                (is_complex_v<T> ? "complex" : "real") + " operator");
  std::int64_t first = 0, last = 0;  // the rank's entries
  const auto stream = static_cast<cudaStream_t>(context.stream());
  if (a.wide) {
    const auto* offsets = static_cast<const std::int64_t*>(a.offsets);
    first = read_back(offsets + a.begin, stream);
    last = read_back(offsets + a.end, stream);
    const Rows<std::int64_t> r{offsets + a.begin, static_cast<const std::int64_t*>(a.columns), a.local_rows(), a.begin,
                               a.end};
    return split_on_device<T>(context, r, a.values, last - first, {});
  }
  const auto* offsets = static_cast<const std::int32_t*>(a.offsets);
  first = read_back(offsets + a.begin, stream);
  last = read_back(offsets + a.end, stream);
  const Rows<std::int32_t> r{offsets + a.begin, static_cast<const std::int32_t*>(a.columns), a.local_rows(), a.begin,
                             a.end};
  return split_on_device<T>(context, r, a.values, last - first, {});
}

BLOCKEIGS_DEVICE_SPLITS(float, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_DEVICE_SPLITS(double, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_DEVICE_COMPLEX_SPLITS(BLOCKEIGS_BACKEND_INSTANTIATE)

}  // namespace blockeigs::solver
