// Row-split CSR x row-major SpMM (Yang, Buluc and Owens, Euro-Par 2018): each
// row is owned by one group of lanes (spmm_group.cuh): GC lanes over the
// columns, sized by n; GK lanes over the nonzeros, sized by the mean row length
// (for n == 1 this is a CSR-vector SpMV; skewed rows and scattered columns at
// n == 1 take the stream body of row_stream_spmv.cuh instead), or on regular rows for several
// rounds of loads (row_split_passes). A warp holds 32 / (GC * GK) rows at
// once, so short rows and narrow blocks keep every lane busy. Good when rows
// are long and regular; the merge-based kernel covers skewed and short rows.
#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/cuda/kernel_dispatch.cuh"
#include "spmm/cuda/row_stream_spmv.cuh"
#include "dense/memory.hpp"
#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {
namespace cuda::detail {

// Whether a shape loads each batch's first column indices and values one
// batch ahead (and its row offsets two ahead). It costs the batch's 2 R
// values and a row range in registers; shapes whose loop already fills the
// 64-register budget (U B rows of 8-byte scalars) would spill, and load them
// in the batch instead, with the row offsets one batch ahead. Wide shapes
// have 80 registers (3 blocks per SM) and twice the allowance.
template <class T, int V, int P, int GC, bool Wide>
inline constexpr bool prefetch_indices = index_loads<T, V, P, GC, Wide> <= 2 &&
                                         nonzero_unroll<T, V, P, Wide>*(P* V* int(sizeof(T)) + 4 + int(sizeof(T))) <=
                                             (Wide ? 256 : 128);

// Resident blocks an SM for the shapes with several vectors a lane (see launch_shape).
inline constexpr int max_blocks_per_sm_wide_rows = 3;

// Warp-uniform loop over batches of rows_per_warp consecutive rows, in one
// of two schedules (row_split_chunk_batches):
//  - chunk_batches == 0: a grid of resident blocks, each warp striding over
//    the whole matrix;
//  - chunk_batches > 0: block b takes the chunk_batches * warps_per_block
//    batches from b * that, its warps interleaved, and ends; the hardware
//    starts blocks in order, so the rows in flight stay a narrow band.
// With prefetch_indices only the B loads of a batch wait on memory; without
// it a short row was three dependent round trips (offsets, indices, B rows).
// Warps stride over batches rather than walking tiles of consecutive ones:
// the L1 reuse between nearby rows does not pay (docs/benchmarks/spmm.md).
template <class T, int V, int P, int GC, bool Wide>
__global__ void __launch_bounds__(block_threads, (min_blocks_per_sm<P, GC, Wide>))
    row_split_kernel(const SpmmArgs<T> a, const int gk, const int chunk_batches) {
  constexpr int R = index_loads<T, V, P, GC, Wide>;
  constexpr int warps_per_block = block_threads / warp_size;
  const GroupLayout g = make_group_layout<GC>(gk);
  const LaneColumns<V, P, GC> cols(g.lane_c, a.n);
  const int rows_per_warp = warp_size / g.size;
  const std::int64_t block_rows = std::int64_t(warps_per_block) * rows_per_warp;
  const int warp_in_block = threadIdx.x / warp_size;
  std::int64_t first, stride, end;
  if (chunk_batches == 0) {
    first = (std::int64_t(blockIdx.x) * warps_per_block + warp_in_block) * rows_per_warp;
    stride = std::int64_t(gridDim.x) * block_rows;
    end = a.rows;
  } else {
    const std::int64_t chunk_first = std::int64_t(blockIdx.x) * chunk_batches * block_rows;
    first = chunk_first + std::int64_t(warp_in_block) * rows_per_warp;
    stride = block_rows;
    end = min(a.rows, chunk_first + chunk_batches * block_rows);
  }
  auto range_of = [&](std::int64_t first) {
    return load_row_range(a.row_offsets, first + g.group, first + g.group < a.rows);
  };
  auto finish = [&](std::int64_t first, T(&acc)[P][V]) {
    reduce_nonzero_lanes<T, V, P, GC>(g, acc);
    const std::int64_t row = first + g.group;
    if (row < a.rows && g.lane_k == 0) store_result<T, V, P, GC>(a, cols, row, acc);
  };
  RowRange range = range_of(first);
  if constexpr (prefetch_indices<T, V, P, GC, Wide>) {
    RowRange next = range_of(first + stride);
    IndexBatch<T, R> indices = load_index_batch<T, R>(a, g, range.begin, range.end - range.begin, 0);
    for (; first < end; first += stride) {
      const RowRange after = range_of(first + 2 * stride);
      const IndexBatch<T, R> next_indices = load_index_batch<T, R>(a, g, next.begin, next.end - next.begin, 0);
      T acc[P][V] = {};
      accumulate_nonzeros<T, V, P, GC, Wide>(a, g, cols, range.begin, range.end, indices, acc);
      finish(first, acc);
      range = next, next = after;
      indices = next_indices;
    }
  } else {
    for (; first < end; first += stride) {
      const RowRange next = range_of(first + stride);
      T acc[P][V] = {};
      accumulate_nonzeros<T, V, P, GC, Wide>(a, g, cols, range.begin, range.end, acc);
      finish(first, acc);
      range = next;
    }
  }
}

}  // namespace cuda::detail

namespace {

using namespace cuda::detail;

// T is the element type of the interface; the kernels run on D = device_t<T>
// (complex values as DeviceComplex). The heuristics' widths count reals.
template <class T>
class RowSplitSpmm final : public LocalSpmm<T> {
  using D = cuda::device_t<T>;

 public:
  RowSplitSpmm(const dense::Context& context, const CsrView<T>& A, const cuda::RowShape* shape)
      : context_(context), A_(A) {
    if (context.space() != Space::device || A.space != Space::device)
      throw Error("row_split SpMM: the context and the matrix must be on the device");
    if (A.rows > INT32_MAX - 1) throw Error("row_split SpMM: more than 2^31 - 2 rows");
    BLOCKEIGS_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, context.device()));
    // The wide variants' choice needs the longest row.
    shape_ = shape ? *shape : cuda::row_shape(A.row_offsets, A.rows, A.cols, A.nnz, A.col_indices);
    // Skewed rows or scattered columns: the n = 1 stream body's layout, from
    // the row offsets on the host, once.
    if (cuda::row_stream_pays(shape_)) {
      std::vector<std::int32_t> offsets(static_cast<std::size_t>(A.rows + 1));
      context.synchronize();  // the matrix may still be on its way on the context's stream
      dense::copy_bytes(offsets.data(), Space::host, A.row_offsets, Space::device,
                        offsets.size() * sizeof(std::int32_t));
      stream_spmv_ =
          std::make_unique<RowStreamSpmv<D>>(cuda::row_stream_layout(offsets, cuda::row_stream_tile(sizeof(T))));
    }
  }

  void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) override {
    check_operands("row_split SpMM", A_, B, C);
    if (C.rows == 0 || C.cols == 0) return;
    if (alpha == T(0) || A_.nnz == 0) {  // C = beta * C without touching A or B
      cuda::scale_block(C, beta, context_.stream());
      return;
    }
    for_each_column_slab(
        B, C, [&](const dense::ConstDenseView<T>& b, const dense::DenseView<T>& c) { launch(alpha, b, beta, c); });
  }

 private:
  void launch(T alpha, const dense::ConstDenseView<T>& B, T beta, const dense::DenseView<T>& C) {
    const SpmmArgs<D> args = make_spmm_args(A_, B, alpha, beta, C);
    if (B.cols == 1 && stream_spmv_) {
      stream_spmv_->multiply(args, static_cast<cudaStream_t>(context_.stream()));
      return;
    }
    const int v = vector_width<T>(B.data, B.ld, C.data, C.ld, B.cols);
    dispatch_shape<D, ShapeFor::row_split>(static_cast<int>(B.cols), v, [&](auto shape) {
      using S = decltype(shape);
      if constexpr (has_wide_unroll<D, S::V, S::P, S::GC>)
        if (wide_unroll_pays(S::GC)) return launch_shape<S::V, S::P, S::GC, true>(args);
      launch_shape<S::V, S::P, S::GC, false>(args);
    });
  }

  template <int V, int P, int GC, bool Wide>
  void launch_shape(const SpmmArgs<D>& args) {
    const int reals = args.n * reals_per_value<T>;
    const int gk = cuda::nonzero_lanes(A_.mean_row_length(), GC, nonzero_unroll<D, V, P, Wide>,
                                       cuda::row_split_passes(shape_, reals, precision_of<T>()));
    const std::int64_t rows_per_block = std::int64_t(block_threads / (GC * gk));
    const std::int64_t wanted = (A_.rows + rows_per_block - 1) / rows_per_block;
    const auto kernel = row_split_kernel<D, V, P, GC, Wide>;
    const cudaStream_t stream = static_cast<cudaStream_t>(context_.stream());
    int per_sm = resident_blocks_per_sm(reinterpret_cast<const void*>(kernel));
    static_assert(block_threads / warp_size == cuda::row_split_block_warps);
    const int chunk = cuda::row_split_chunk_batches(reals, precision_of<T>(), shape_, wanted,
                                                    std::int64_t(multiprocessors_) * std::max(per_sm, 1),
                                                    static_cast<int>(rows_per_block / cuda::row_split_block_warps));
    if (chunk > 0) {  // blocks in row order, each for `chunk` batches a warp
      const auto blocks = static_cast<unsigned>((wanted + chunk - 1) / chunk);
      kernel<<<blocks, block_threads, 0, stream>>>(args, gk, chunk);
      BLOCKEIGS_CUDA_CHECK_LAUNCH();
      return;
    }
    // Otherwise at most the blocks that are resident at once: every warp then
    // loops over many row batches (so the offset prefetch pays), and none
    // waits for a free SM while others finish.
    // Several vectors a lane: each resident warp's rows gather n-wide B rows, and past 3 blocks
    // an SM they outgrow what L2 keeps for reuse (docs/benchmarks/spmm.md#kernel-notes).
    if constexpr (several_vectors_a_lane<P, GC>) per_sm = std::min(per_sm, max_blocks_per_sm_wide_rows);
    const std::int64_t resident = std::int64_t(multiprocessors_) * std::max(per_sm, 1);
    const int blocks = static_cast<int>(std::clamp<std::int64_t>(wanted, 1, resident));
    kernel<<<blocks, block_threads, 0, stream>>>(args, gk, 0);
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
  }

  // Blocks of `kernel` an SM holds at once: asked of the runtime once per
  // kernel shape, not on every multiply.
  int resident_blocks_per_sm(const void* kernel) {
    auto it = blocks_per_sm_.find(kernel);
    if (it == blocks_per_sm_.end()) {
      int per_sm = 0;
      BLOCKEIGS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
      it = blocks_per_sm_.emplace(kernel, per_sm).first;
    }
    return it->second;
  }

  bool wide_unroll_pays(int column_lanes) const {
    return cuda::wide_unroll_pays(Algorithm::row_split, shape_, column_lanes);
  }

  const dense::Context& context_;
  CsrView<T> A_;
  int multiprocessors_ = 1;
  cuda::RowShape shape_;
  std::unordered_map<const void*, int> blocks_per_sm_;  // resident_blocks_per_sm
  std::unique_ptr<RowStreamSpmv<D>> stream_spmv_;       // the n = 1 body where row_stream_pays
};

}  // namespace

template <class T>
std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context& context, const CsrView<T>& A,
                                                  const cuda::RowShape* shape) {
  return std::make_unique<RowSplitSpmm<T>>(context, A, shape);
}

#define BLOCKEIGS_INSTANTIATE(T) template BLOCKEIGS_SPMM_MAKE_ROW_SPLIT(T);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm
