// Merge-based CSR x row-major SpMM (after Yang, Buluc and Owens, Euro-Par
// 2018, with Merrill and Garland's merge path): the merge path over rows +
// nonzeros is cut into segments of equal length, one per warp, so every warp
// gets the same work however skewed the rows (one row of 100k nonzeros is
// shared by hundreds of warps). Inside its segment a warp runs the row-split
// groups of spmm_group.cuh over the rows, clipped to the segment.
//
// Boundaries snap back to a row start when that is close (merge_partition.cuh),
// so only long rows are cut. The pieces of a cut row are written as raw sums
// to carry slots; the fix-up (merge_fixup.cuh) adds each row's slots in a
// fixed order and applies alpha and beta. No atomics: the bits are the same
// run to run.
// The partitions and their carry plans are built once, in the constructor:
// one for every segment length that some block width takes
// (merge_segment_items: shorter segments for wide B rows). For
// long regular rows (dense blocks) warps take the segments across rows
// (merge_order_across_rows), so that those running together share B's rows;
// the order changes no sum.
#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/cuda/kernel_dispatch.cuh"
#include "spmm/cuda/merge_fixup.cuh"
#include "spmm/cuda/merge_partition.cuh"
#include "spmm/cuda/merge_spmv.cuh"
#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {
namespace cuda::detail {

__global__ void merge_boundaries_kernel(const std::int32_t* row_offsets, std::int64_t rows, std::int64_t nnz,
                                        std::int64_t items, std::int64_t slack, std::int64_t boundaries,
                                        std::int32_t* row, std::int32_t* nonzero, std::int32_t* row_start) {
  for (std::int64_t b = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; b < boundaries;
       b += std::int64_t(gridDim.x) * blockDim.x) {
    const MergeCoordinate c = merge_segment_start(b, items, slack, row_offsets, rows, nnz);
    row[b] = static_cast<std::int32_t>(c.row);
    nonzero[b] = static_cast<std::int32_t>(c.nonzero);
    row_start[b] = c.row < rows ? row_offsets[c.row] : static_cast<std::int32_t>(nnz);
  }
}

// The segment bookkeeping costs a few registers more than row-split: narrow
// shapes that hold 8 index loads and 8 B loads per lane (values of 8 bytes or more, or GC == 1)
// get 3 blocks per SM, so that they need not spill.
template <class T, int P, int GC>
inline constexpr int merge_min_blocks_per_sm = several_vectors_a_lane<P, GC> ? min_blocks_per_sm<P, GC>
                                               : (sizeof(T) >= 8 || GC == 1) ? 3
                                                                             : 4;

template <class T, int V, int P, int GC, bool Wide>
__global__ void __launch_bounds__(block_threads, (merge_min_blocks_per_sm<T, P, GC>))
    merge_kernel(const SpmmArgs<T> a, const MergeSegments m, T* const carry, const int gk) {
  const GroupLayout g = make_group_layout<GC>(gk);
  const LaneColumns<V, P, GC> cols(g.lane_c, a.n);
  const int rows_per_warp = warp_size / g.size;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_size;
  for (std::int64_t place = warp; place < m.segments; place += warps) {  // warp-uniform
    const std::int64_t seg = m.order ? __ldg(m.order + place) : place;
    const auto [rb, re, jb, je, head, tail, last] = load_segment(m, seg);
    // Row offsets are loaded one batch of rows ahead (see row_split.cu).
    int row = rb + g.group;
    RowRange range = load_row_range(a.row_offsets, row, row <= last);
    for (int first = rb; first <= last; first += rows_per_warp, row += rows_per_warp) {  // warp-uniform
      const RowRange next = load_row_range(a.row_offsets, row + rows_per_warp, row + rows_per_warp <= last);
      const bool active = row <= last;
      // Clipped to the segment: only the first and the last row can be cut.
      const int begin = active ? max(range.begin, jb) : 0;
      const int end = active ? min(range.end, je) : 0;
      range = next;
      T acc[P][V];
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[p][e] = T(0);
      accumulate_nonzeros<T, V, P, GC, Wide>(a, g, cols, begin, end, acc);
      reduce_nonzero_lanes<T, V, P, GC>(g, acc);
      if (!active || g.lane_k != 0) continue;
      if (row == rb && head >= 0)
        store_carry<T, V, P, GC>(carry + std::int64_t(head) * a.n, cols, acc);
      else if (row == re && tail >= 0)
        store_carry<T, V, P, GC>(carry + std::int64_t(tail) * a.n, cols, acc);
      else
        store_result<T, V, P, GC>(a, cols, row, acc);
    }
  }
}

}  // namespace cuda::detail

namespace {

using namespace cuda::detail;

// Carry slots are allocated with the plan for blocks up to this width when
// that costs at most this much memory; otherwise on first use.
constexpr std::size_t eager_carry_bytes = std::size_t(64) << 20;

// T is the element type of the interface; the kernels run on D = device_t<T>
// (complex values as DeviceComplex). The heuristics' widths count reals.
template <class T>
class MergeBasedSpmm final : public LocalSpmm<T> {
  using D = cuda::device_t<T>;

 public:
  MergeBasedSpmm(const dense::Context& context, const CsrView<T>& A, const cuda::RowShape* shape)
      : context_(context), A_(A) {
    if (context.space() != Space::device || A.space != Space::device)
      throw Error("merge_based SpMM: the context and the matrix must be on the device");
    if (A.rows > INT32_MAX - 1) throw Error("merge_based SpMM: more than 2^31 - 2 rows");
    int multiprocessors = 1;
    BLOCKEIGS_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, context.device()));
    multiprocessors_ = multiprocessors;
    // Its rules read row lengths only: no column count (RowShape::scattered).
    shape_ = shape ? *shape : cuda::row_shape(A.row_offsets, A.rows, A.cols, A.nnz);
    if (A.rows > 0 && A.nnz > 0) build_partitions();
  }

  void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) override {
    check_operands("merge_based SpMM", A_, B, C);
    if (C.rows == 0 || C.cols == 0) return;
    if (alpha == T(0) || A_.nnz == 0) {  // C = beta * C without touching A or B
      cuda::scale_block(C, beta, context_.stream());
      return;
    }
    for_each_column_slab(B, C, [&](const dense::ConstDenseView<T>& b, const dense::DenseView<T>& c) {
      reserve_carry(partition_for(b.cols).slots * b.cols);
      launch(alpha, b, beta, c);
    });
  }

 private:
  // Segments of `items` merge steps, boundaries snapped back by up to
  // `slack`, and their carry plan.
  struct Partition {
    std::int64_t items = 0;     // merge steps a segment
    std::int64_t segments = 0;  // one warp each
    std::int64_t slots = 0;     // carry slots (pieces of rows cut by a boundary)
    dense::Buffer<std::int32_t> row, nonzero, head_slot, tail_slot, split_rows, split_first_slot;
    dense::Buffer<std::int32_t> tree_rows;  // the cut rows of many slots (merge_fixup_tree_rows)
    dense::Buffer<std::int32_t> order;      // empty: segments in path order
    MergeSegments view() const {
      return {row.data(),       nonzero.data(), head_slot.data(),
              tail_slot.data(), segments,       order.size() ? order.data() : nullptr};
    }
    MergeFixupRows fixup_rows() const {
      return {split_rows.data(), split_first_slot.data(), static_cast<std::int64_t>(split_rows.size()),
              tree_rows.data(), static_cast<std::int64_t>(tree_rows.size())};
    }
  };

  Partition make_partition(std::int64_t items, std::int64_t slack, bool across_rows = false) {
    Partition p;
    p.items = items;
    p.segments = cuda::merge_segment_count(A_.rows, A_.nnz, items);
    const std::int64_t boundaries = p.segments + 1;
    dense::Buffer<std::int32_t> row(Space::device, boundaries), nonzero(Space::device, boundaries),
        row_start(Space::device, boundaries);
    const auto stream = static_cast<cudaStream_t>(context_.stream());
    const int blocks = static_cast<int>(std::min<std::int64_t>((boundaries + 255) / 256, 65536));
    merge_boundaries_kernel<<<blocks, 256, 0, stream>>>(A_.row_offsets, A_.rows, A_.nnz, items, slack, boundaries,
                                                        row.data(), nonzero.data(), row_start.data());
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
    context_.synchronize();
    const std::vector<std::int32_t> boundary_row = row.to_host();
    const cuda::MergeCarryPlan plan =
        cuda::plan_merge_carries(boundary_row, nonzero.to_host(), row_start.to_host(), A_.rows);
    if (across_rows) p.order = dense::Buffer<std::int32_t>(Space::device, cuda::merge_order_across_rows(boundary_row));
    p.row = std::move(row);
    p.nonzero = std::move(nonzero);
    p.head_slot = dense::Buffer<std::int32_t>(Space::device, plan.head_slot);
    p.tail_slot = dense::Buffer<std::int32_t>(Space::device, plan.tail_slot);
    p.split_rows = dense::Buffer<std::int32_t>(Space::device, plan.split_rows);
    p.split_first_slot = dense::Buffer<std::int32_t>(Space::device, plan.split_first_slot);
    p.tree_rows = dense::Buffer<std::int32_t>(Space::device, merge_fixup_tree_rows(plan));
    p.slots = plan.slots();
    // Uploads from pageable memory may still be in flight on the legacy
    // stream, which the context's non-blocking stream does not wait for.
    BLOCKEIGS_CUDA_CHECK(cudaDeviceSynchronize());
    return p;
  }

  void build_partitions() {
    // One per distinct segment length over the widths one launch takes,
    // the widest first (the widths of a length are contiguous).
    std::int64_t eager_carry = 0;
    for (int n = launch_columns<D>; n >= 1; --n) {
      const std::int64_t items =
          cuda::merge_segment_items(shape_, n * reals_per_value<T>, precision_of<T>(), multiprocessors_);
      if (general_.empty() || general_.back().items != items) {
        general_.push_back(make_partition(items, items / 2, cuda::merge_order_pays(shape_, items)));
        eager_carry = std::max(eager_carry, general_.back().slots * n);
      }
      partition_of_width_[n] = static_cast<int>(general_.size() - 1);
    }
    if (std::size_t(eager_carry) * sizeof(T) <= eager_carry_bytes) reserve_carry(eager_carry);
    // The narrow body (n = 1, 2, 4 in fp32; skewed rows) walks longer segments of its own (real values).
    if (!is_complex_v<T> && cuda::merge_uses_spmv_body(shape_)) {
      const std::int64_t spmv_items = cuda::merge_spmv_items_per_segment(A_.rows, A_.nnz, multiprocessors_);
      spmv_ = make_partition(spmv_items, cuda::merge_spmv_slack(spmv_items));
      spmv_carry_ = dense::Buffer<D>(Space::device, static_cast<std::size_t>(spmv_.slots * cuda::merge_spmv_max_width));
      spmv_body_ = true;
    }
  }

  // The partition for blocks of `width` columns (at most max_launch_width).
  const Partition& partition_for(std::int64_t width) const {
    return general_[partition_of_width_[static_cast<std::size_t>(std::max<std::int64_t>(width, 1))]];
  }

  void reserve_carry(std::int64_t elements) {
    const auto needed = static_cast<std::size_t>(elements);
    if (needed <= carry_.size()) return;
    context_.synchronize();  // the old buffer may still be in use
    carry_ = dense::Buffer<D>(Space::device, needed);
  }

  void launch(T alpha, const dense::ConstDenseView<T>& B, T beta, const dense::DenseView<T>& C) {
    const SpmmArgs<D> args = make_spmm_args(A_, B, alpha, beta, C);
    const auto stream = static_cast<cudaStream_t>(context_.stream());
    if constexpr (!is_complex_v<T>) {
      if (spmv_body_ && cuda::merge_spmv_takes(B.cols, precision_of<T>())) {
        launch_merge_spmv<T>(args, spmv_.view(), spmv_carry_.data(), multiprocessors_, stream);
        launch_merge_fixup<T>(spmv_.fixup_rows(), spmv_carry_.data(), static_cast<int>(B.cols), C.data, C.ld, alpha,
                              beta, stream);
        return;
      }
    }
    const Partition& partition = partition_for(B.cols);
    const MergeSegments segments = partition.view();
    const std::int64_t warps_per_block = block_threads / warp_size;
    const int v = vector_width<T>(B.data, B.ld, C.data, C.ld, B.cols);
    const int blocks = static_cast<int>(std::clamp<std::int64_t>(
        (segments.segments + warps_per_block - 1) / warps_per_block, 1, std::int64_t(multiprocessors_) * 2048));
    dispatch_shape<D, ShapeFor::merge_based>(static_cast<int>(B.cols), v, [&](auto shape) {
      using S = decltype(shape);
      auto run = [&](auto wide) {
        constexpr bool Wide = decltype(wide)::value;
        const int gk = cuda::nonzero_lanes(A_.mean_row_length(), S::GC, nonzero_unroll<D, S::V, S::P, Wide>);
        merge_kernel<D, S::V, S::P, S::GC, Wide>
            <<<blocks, block_threads, 0, stream>>>(args, segments, carry_.data(), gk);
        BLOCKEIGS_CUDA_CHECK_LAUNCH();
      };
      if constexpr (has_wide_unroll<D, S::V, S::P, S::GC>)
        if (cuda::wide_unroll_pays(Algorithm::merge_based, shape_, S::GC)) return run(std::true_type{});
      run(std::false_type{});
    });
    // The pieces of the rows that the partition's boundaries cut.
    launch_merge_fixup<D>(partition.fixup_rows(), carry_.data(), static_cast<int>(B.cols), args.C, C.ld, args.alpha,
                          args.beta, stream);
  }

  const dense::Context& context_;
  CsrView<T> A_;
  int multiprocessors_ = 1;
  bool spmv_body_ = false;                                      // narrow blocks through merge_spmv.cu (skewed rows)
  cuda::RowShape shape_;                                        // mean and longest row
  std::vector<Partition> general_;                              // the general body's, longest segments last
  std::array<int, max_launch_width + 1> partition_of_width_{};  // index into general_ by width
  Partition spmv_;                                              // the SpMV body's, when it has one
  dense::Buffer<D> carry_;       // slots x (block width) raw partial sums, for any partition
  dense::Buffer<D> spmv_carry_;  // spmv_.slots x merge_spmv_max_width raw partial sums
};

}  // namespace

template <class T>
std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context& context, const CsrView<T>& A,
                                                    const cuda::RowShape* shape) {
  return std::make_unique<MergeBasedSpmm<T>>(context, A, shape);
}

#define BLOCKEIGS_INSTANTIATE(T) template BLOCKEIGS_SPMM_MAKE_MERGE_BASED(T);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm
