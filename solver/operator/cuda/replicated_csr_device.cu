// The passes of replicated_csr.hpp on device arrays: a thread a row (offset
// a thread an offset), the first offending position taken by atomicMin, and
// only that position's few numbers read back. The host loops of
// replicated_csr.cpp are the twin: the same tests in the same arithmetic.
#include <cmath>
#include <cstdint>
#include <limits>

#include "solver/operator/cuda/row_search.cuh"
#include "solver/operator/replicated_csr.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {
namespace {

using row_search::blocks_for;
using row_search::first_at_least;
using row_search::threads;
using Kind = CsrProblem::Kind;

constexpr unsigned long long none = std::numeric_limits<unsigned long long>::max();

template <class Index>
struct Arrays {
  const Index* offsets;
  const Index* columns;
  const double* values;  // (re, im) pairs where complex
  bool complex;
  std::int64_t n, begin, end;

  // Part p (0 real, 1 imaginary) of entry k's value.
  __device__ double part(std::int64_t k, int p) const { return complex ? values[2 * k + p] : values[k]; }
  __device__ bool finite(std::int64_t k) const { return isfinite(part(k, 0)) && isfinite(part(k, complex ? 1 : 0)); }
};

template <class Index>
Arrays<Index> arrays(const ReplicatedCsr& a) {
  return {static_cast<const Index*>(a.offsets),
          static_cast<const Index*>(a.columns),
          a.values,
          a.complex,
          a.n,
          a.begin,
          a.end};
}

// Part p of A(row, col), 0 where it is not stored.
template <class Index>
__device__ double stored(const Arrays<Index>& a, std::int64_t row, std::int64_t col, int p = 0) {
  const std::int64_t end = a.offsets[row + 1], k = first_at_least(a.columns, a.offsets[row], end, col);
  return k < end && a.columns[k] == col ? a.part(k, p) : 0.0;
}

__device__ bool close(double aij, double aji) { return fabs(aij - aji) <= 1e-12 * fmax(fabs(aij), fabs(aji)); }

template <class Index>
__global__ void decrease_kernel(Arrays<Index> a, unsigned long long* first) {
  for (std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; r < a.n;
       r += std::int64_t(gridDim.x) * blockDim.x)
    if (a.offsets[r + 1] < a.offsets[r]) atomicMin(first, static_cast<unsigned long long>(r));
}

template <class Index>
__global__ void entry_kernel(Arrays<Index> a, unsigned long long* first) {
  for (std::int64_t i = a.begin + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < a.end;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t lo = a.offsets[i], hi = a.offsets[i + 1];
    for (std::int64_t k = lo; k < hi; ++k) {
      const std::int64_t c = a.columns[k];
      if (c < 0 || c >= a.n || (k > lo && c <= a.columns[k - 1]) || !a.finite(k)) {
        atomicMin(first, static_cast<unsigned long long>(k));
        break;
      }
    }
  }
}

template <class Index>
__global__ void asymmetry_kernel(Arrays<Index> a, unsigned long long* first) {
  for (std::int64_t i = a.begin + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < a.end;
       i += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
      const std::int64_t j = a.columns[k];
      if (j != i && !close(a.values[k], stored(a, j, i))) {
        atomicMin(first, static_cast<unsigned long long>(k));
        break;
      }
    }
}

// Complex values: the first entry that fails the Hermitian test of `part` (HermitianPart's order).
template <class Index>
__global__ void hermitian_kernel(Arrays<Index> a, HermitianPart part, unsigned long long* first) {
  for (std::int64_t i = a.begin + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < a.end;
       i += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
      const std::int64_t j = a.columns[k];
      bool bad = false;
      if (part == HermitianPart::diagonal)
        bad = j == i && a.part(k, 1) != 0;
      else if (part == HermitianPart::real)
        bad = j != i && !close(a.part(k, 0), stored(a, j, i, 0));
      else
        bad = j != i && !close(a.part(k, 1), -stored(a, j, i, 1));
      if (bad) {
        atomicMin(first, static_cast<unsigned long long>(k));
        break;
      }
    }
}

// The row of this rank's rows that holds entry k, its column, value and transpose (part p of them; one thread).
template <class Index>
__global__ void describe_kernel(Arrays<Index> a, std::int64_t k, bool transpose, int p, CsrProblem* out) {
  std::int64_t lo = a.begin, hi = a.end;  // the last row whose offset is <= k
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (a.offsets[mid] <= k)
      lo = mid;
    else
      hi = mid;
  }
  out->row = lo;
  out->position = k;
  out->column = a.columns[k];
  out->value = a.part(k, p);
  out->transpose = transpose ? stored(a, out->column, lo, p) : 0.0;
}

// One pass's first position (none where nothing), read back.
class FirstPosition {
 public:
  explicit FirstPosition(const dense::Context& context)
      : stream_(static_cast<cudaStream_t>(context.stream())), first_(Space::device, 1) {
    BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(first_.data(), 0xff, sizeof(unsigned long long), stream_));
  }
  unsigned long long* data() { return first_.data(); }
  cudaStream_t stream() const { return stream_; }
  unsigned long long read() const {
    unsigned long long value = none;
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&value, first_.data(), sizeof(value), cudaMemcpyDeviceToHost, stream_));
    BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return value;
  }

 private:
  cudaStream_t stream_;
  dense::Buffer<unsigned long long> first_;
};

template <class Index>
CsrProblem describe(const ReplicatedCsr& a, std::int64_t k, Kind kind, cudaStream_t stream) {
  dense::Buffer<CsrProblem> out(Space::device, 1);
  const bool transpose = kind == Kind::asymmetric || kind == Kind::real_part || kind == Kind::imaginary_part;
  const int part = kind == Kind::imaginary_diagonal || kind == Kind::imaginary_part ? 1 : 0;
  describe_kernel<Index><<<1, 1, 0, stream>>>(arrays<Index>(a), k, transpose, part, out.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  CsrProblem p;
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&p, out.data(), sizeof(p), cudaMemcpyDeviceToHost, stream));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  p.kind = kind;
  return p;
}

template <class Index>
std::int64_t read_index(const Index* device_value, cudaStream_t stream) {
  Index value{};
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(&value, device_value, sizeof(Index), cudaMemcpyDeviceToHost, stream));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

template <class Index>
CsrProblem offsets_problem(const ReplicatedCsr& a, const dense::Context& context) {
  FirstPosition first(context);
  const Arrays<Index> d = arrays<Index>(a);
  if (read_index(d.offsets, first.stream()) != 0) return {Kind::offsets_start};
  if (read_index(d.offsets + a.n, first.stream()) != a.nnz) return {Kind::offsets_end};
  if (a.n == 0) return {};
  decrease_kernel<Index><<<blocks_for(a.n), threads, 0, first.stream()>>>(d, first.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  const unsigned long long r = first.read();
  if (r == none) return {};
  return {Kind::offsets_decrease, static_cast<std::int64_t>(r)};
}

template <class Index, class Kernel, class... Extra>
CsrProblem rows_pass(const ReplicatedCsr& a, const dense::Context& context, Kernel kernel, Kind kind, Extra... extra) {
  if (a.local_rows() == 0) return {};
  FirstPosition first(context);
  kernel<<<blocks_for(a.local_rows()), threads, 0, first.stream()>>>(arrays<Index>(a), extra..., first.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  const unsigned long long k = first.read();
  if (k == none) return {};
  return describe<Index>(a, static_cast<std::int64_t>(k), kind, first.stream());
}

}  // namespace

CsrProblem find_offsets_problem_on_device(const ReplicatedCsr& a, const dense::Context& context) {
  return a.wide ? offsets_problem<std::int64_t>(a, context) : offsets_problem<std::int32_t>(a, context);
}

CsrProblem find_entry_problem_on_device(const ReplicatedCsr& a, const dense::Context& context) {
  if (a.wide) return rows_pass<std::int64_t>(a, context, entry_kernel<std::int64_t>, Kind::entry);
  return rows_pass<std::int32_t>(a, context, entry_kernel<std::int32_t>, Kind::entry);
}

CsrProblem find_asymmetry_on_device(const ReplicatedCsr& a, const dense::Context& context) {
  if (a.wide) return rows_pass<std::int64_t>(a, context, asymmetry_kernel<std::int64_t>, Kind::asymmetric);
  return rows_pass<std::int32_t>(a, context, asymmetry_kernel<std::int32_t>, Kind::asymmetric);
}

CsrProblem find_hermitian_problem_on_device(const ReplicatedCsr& a, HermitianPart part, const dense::Context& context) {
  const Kind kind = part == HermitianPart::diagonal ? Kind::imaginary_diagonal
                    : part == HermitianPart::real   ? Kind::real_part
                                                    : Kind::imaginary_part;
  if (a.wide) return rows_pass<std::int64_t>(a, context, hermitian_kernel<std::int64_t>, kind, part);
  return rows_pass<std::int32_t>(a, context, hermitian_kernel<std::int32_t>, kind, part);
}

}  // namespace blockeigs::solver
