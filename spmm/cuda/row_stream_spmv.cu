// Row-split's n = 1 stream body (row_stream_spmv.cuh).
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/row_stream_spmv.cuh"

namespace blockeigs::spmm::cuda::detail {

namespace {

template <class T>
__device__ __forceinline__ void store_y(const SpmmArgs<T>& a, std::int64_t row, T sum) {
  T* y = a.C + row * a.ldc;
  *y = a.beta == T(0) ? a.alpha * sum : fma(a.alpha, sum, a.beta * *y);
}

template <class T>
__device__ __forceinline__ T product(const SpmmArgs<T>& a, int p) {
  return __ldg(a.values + p) * __ldg(b_row(a.B, __ldg(a.col_indices + p), a.ldb_bytes));
}

// The sum of every thread's `sum` over the block, by a fixed tree (a
// butterfly in each warp, then the warps in order), to thread 0.
template <class T>
__device__ __forceinline__ T block_sum(T sum, T* warp_sums) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int o = warp_size / 2; o > 0; o /= 2) sum += __shfl_xor_sync(full_mask, sum, o);
  if (tid % warp_size == 0) warp_sums[tid / warp_size] = sum;
  __syncthreads();
  T total = T(0);
  if (tid == 0) {
#pragma unroll
    for (int w = 0; w < row_stream_threads / warp_size; ++w) total += warp_sums[w];
  }
  return total;
}

// The sum over [begin, end) of load(i), by the block's threads striding with
// row_stream_items loads in flight each, then by a fixed tree; to thread 0.
template <class T, class Load>
__device__ __forceinline__ T block_strided_sum(int begin, int end, Load load, T* warp_sums) {
  T sum = T(0);
  int i = begin + int(threadIdx.x);
  // Compared as distances from end, so that no index passes 2^31 - 1.
  for (; end - i > (row_stream_items - 1) * row_stream_threads; i += row_stream_items * row_stream_threads) {
    T v[row_stream_items];
#pragma unroll
    for (int k = 0; k < row_stream_items; ++k) v[k] = load(i + k * row_stream_threads);
#pragma unroll
    for (int k = 0; k < row_stream_items; ++k) sum += v[k];
  }
  for (; i < end; i += row_stream_threads) sum += load(i);
  return block_sum(sum, warp_sums);
}

// Blocks [0, pieces): a piece of a split row each (in the layout's
// piece_order), its partial sum to partials. Blocks from pieces on: the
// layout's blocks of rows.
template <class T>
__global__ void __launch_bounds__(row_stream_threads)
    row_stream_spmv_kernel(const SpmmArgs<T> a, const std::int32_t* block_rows, const std::int32_t* piece_rows,
                           const std::int32_t* piece_begins, const std::int32_t* piece_order, const int pieces,
                           T* partials) {
  constexpr int tile_items = row_stream_tile_items(sizeof(T));
  __shared__ T products[row_stream_tile(sizeof(T))];
  __shared__ T warp_sums[row_stream_threads / warp_size];
  const int tid = threadIdx.x;
  if (int(blockIdx.x) < pieces) {
    const int piece = __ldg(piece_order + blockIdx.x), row = __ldg(piece_rows + piece);
    const int s = __ldg(piece_begins + piece);
    const int e = piece + 1 < pieces && __ldg(piece_rows + piece + 1) == row ? __ldg(piece_begins + piece + 1)
                                                                             : __ldg(a.row_offsets + row + 1);
    const T total = block_strided_sum<T>(
        s, e, [&](int p) { return product(a, p); }, warp_sums);
    if (tid == 0) partials[piece] = total;
    return;
  }
  const int block = blockIdx.x - pieces;
  const int r0 = __ldg(block_rows + block), r1 = __ldg(block_rows + block + 1);
  const int s = __ldg(a.row_offsets + r0), e = __ldg(a.row_offsets + r1);
  const int rows = r1 - r0;
  if (rows == 1 && e - s > row_stream_long_row) {
    if (e - s > row_stream_piece) return;  // split: its pieces above
    const T total = block_strided_sum<T>(
        s, e, [&](int p) { return product(a, p); }, warp_sums);
    if (tid == 0) store_y(a, r0, total);
    return;
  }
  // Stream: every product of the block into shared memory, loads coalesced.
  T v[tile_items];
#pragma unroll
  for (int k = 0; k < tile_items; ++k) {
    const int i = k * row_stream_threads + tid;
    v[k] = i < e - s ? product(a, s + i) : T(0);
  }
#pragma unroll
  for (int k = 0; k < tile_items; ++k) products[k * row_stream_threads + tid] = v[k];
  __syncthreads();
  // Groups of g lanes a row, g the largest power of two up to 32 with
  // g * rows <= 256: log2 g = 8 - ceil(log2 rows), at most 5. Shifts and
  // masks, not a search loop and divisions by g: fewer instructions
  // (docs/benchmarks/spmm.md#kernel-notes). A group adds its row's products, strided,
  // then by a butterfly.
  static_assert(row_stream_threads == 256 && warp_size == 32);
  const int log_g = min(5, __clz(rows - 1) - 24);
  const int g = 1 << log_g;
  const int row = tid >> log_g, lane = tid & (g - 1);
  T sum = T(0);
  int begin = 0, end = 0;
  if (row < rows) {
    begin = __ldg(a.row_offsets + r0 + row) - s;
    end = __ldg(a.row_offsets + r0 + row + 1) - s;
  }
  for (int i = begin + lane; i < end; i += g) sum += products[i];
#pragma unroll
  for (int o = warp_size / 2; o > 0; o /= 2)
    if (o < g) sum += __shfl_xor_sync(full_mask, sum, o);  // g is the block's: no divergence
  if (lane == 0 && row < rows) store_y(a, std::int64_t(r0) + row, sum);
}

// A block a split row: its partials added by block_strided_sum, in a fixed
// order whatever the piece count. (A warp a row, one load at a time, was
// slower: docs/benchmarks/spmm.md#kernel-notes.)
template <class T>
__global__ void __launch_bounds__(row_stream_threads)
    row_stream_split_rows_kernel(const SpmmArgs<T> a, const std::int32_t* split_rows, const std::int32_t* first_piece,
                                 const T* partials) {
  __shared__ T warp_sums[row_stream_threads / warp_size];
  const int p0 = __ldg(first_piece + blockIdx.x), p1 = __ldg(first_piece + blockIdx.x + 1);
  const T total = block_strided_sum<T>(
      p0, p1, [&](int p) { return partials[p]; }, warp_sums);
  if (threadIdx.x == 0) store_y(a, __ldg(split_rows + blockIdx.x), total);
}

}  // namespace

template <class T>
RowStreamSpmv<T>::RowStreamSpmv(const RowStreamLayout& layout)
    : blocks_(std::int64_t(layout.block_rows.size()) - 1),
      pieces_(std::int64_t(layout.piece_rows.size())),
      split_rows_(std::int64_t(layout.split_rows.size())),
      block_rows_(Space::device, layout.block_rows),
      piece_rows_(Space::device, layout.piece_rows),
      piece_begins_(Space::device, layout.piece_begins),
      piece_order_(Space::device, layout.piece_order),
      split_rows_list_(Space::device, layout.split_rows),
      split_first_piece_(Space::device, layout.split_first_piece),
      partials_(Space::device, static_cast<std::size_t>(pieces_)) {
  if (blocks_ + pieces_ > INT32_MAX) throw Error("row_split SpMM: too many blocks for the n = 1 stream body");
}

template <class T>
void RowStreamSpmv<T>::multiply(const SpmmArgs<T>& args, cudaStream_t stream) {
  if (blocks_ + pieces_ == 0) return;
  row_stream_spmv_kernel<T><<<static_cast<unsigned>(blocks_ + pieces_), row_stream_threads, 0, stream>>>(
      args, block_rows_.data(), piece_rows_.data(), piece_begins_.data(), piece_order_.data(),
      static_cast<int>(pieces_), partials_.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  if (split_rows_ == 0) return;
  row_stream_split_rows_kernel<T><<<static_cast<unsigned>(split_rows_), row_stream_threads, 0, stream>>>(
      args, split_rows_list_.data(), split_first_piece_.data(), partials_.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T) template class RowStreamSpmv<device_t<T>>;
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm::cuda::detail
