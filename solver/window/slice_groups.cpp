// Slice groups' layout and the moves of rows and vectors between it and A's
// (slice_groups.hpp).
#include "solver/window/slice_groups.hpp"

#include <utility>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {
namespace {

constexpr int kCountTag = 7101, kOffsetsTag = 7102, kColumnsTag = 7103, kValuesTag = 7104, kVectorsTag = 7105;

void wait_all(std::vector<MPI_Request>& requests) {
  if (!requests.empty())
    BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

}  // namespace

SliceGroups::SliceGroups(MPI_Comm comm, const RowPartition& world, int groups) : comm_(comm), world_(world) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  BLOCKEIGS_ASSERT(groups >= 1 && groups <= ranks_ && world.ranks() == ranks_);
  count_ = groups;
  mine_ = static_cast<int>(static_cast<std::int64_t>(rank_) * groups / ranks_);
  BLOCKEIGS_MPI_CHECK(MPI_Comm_split(comm, mine_, rank_, &group_));
  std::vector<std::int64_t> first;
  for (int j = 0; j < size(mine_); ++j) first.push_back(world_.begin(chunk_begin(mine_, j)));
  first.push_back(world_.global_rows());
  rows_ = RowPartition(std::move(first));
}

SliceGroups::~SliceGroups() {
  if (group_ != MPI_COMM_NULL) BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_free(&group_));
}

// Group g holds the ranks r with r * count / ranks == g: from ceil(g * ranks / count) on.
int SliceGroups::first_rank(int group) const {
  return static_cast<int>((static_cast<std::int64_t>(group) * ranks_ + count_ - 1) / count_);
}

int SliceGroups::size(int group) const { return first_rank(group + 1) - first_rank(group); }

int SliceGroups::chunk_begin(int group, int j) const {
  return static_cast<int>(static_cast<std::int64_t>(j) * ranks_ / size(group));
}

int SliceGroups::holder(int group, int rank) const {
  int j = 0;
  while (j + 1 < size(group) && chunk_begin(group, j + 1) <= rank) ++j;
  return first_rank(group) + j;
}

template <class V>
CsrRowsOf<V> SliceGroups::gather_rows(const CsrRowsOf<V>& mine) const {
  // Every rank's rows go to their holder in each group; this rank receives those of its chunk.
  const int j = rank_ - first_rank(mine_);
  const int from = chunk_begin(mine_, j), to = chunk_begin(mine_, j + 1);
  std::vector<std::int64_t> offsets(mine.row_offsets);
  if (offsets.empty()) offsets.push_back(0);
  std::int64_t nnz = mine.nnz();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(to - from));
  std::vector<MPI_Request> requests;
  for (int q = from; q < to; ++q)
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(&counts[q - from], 1, MPI_INT64_T, q, kCountTag, comm_, &requests.emplace_back()));
  for (int g = 0; g < count_; ++g)
    BLOCKEIGS_MPI_CHECK(MPI_Isend(&nnz, 1, MPI_INT64_T, holder(g, rank_), kCountTag, comm_, &requests.emplace_back()));
  wait_all(requests);

  // Each sender's columns and values land in place in the group's arrays; its offsets are rebased after.
  CsrRowsOf<V> out;
  out.global_rows = world_.global_rows();
  out.global_cols = mine.global_cols;
  out.first_row = rows_.begin(j);
  std::int64_t total = 0;
  for (const std::int64_t c : counts) total += c;
  out.col_indices.resize(static_cast<std::size_t>(total));
  out.values.resize(static_cast<std::size_t>(total));
  std::vector<std::vector<std::int64_t>> in_offsets(counts.size());
  std::int64_t at = 0;
  for (int q = from; q < to; ++q) {
    const std::size_t i = q - from;
    in_offsets[i].resize(static_cast<std::size_t>(world_.rows(q) + 1));
    large_irecv(comm_, in_offsets[i].data(), static_cast<std::int64_t>(in_offsets[i].size() * 8), q, kOffsetsTag,
                requests);
    large_irecv(comm_, out.col_indices.data() + at, counts[i] * 8, q, kColumnsTag, requests);
    large_irecv(comm_, out.values.data() + at, counts[i] * std::int64_t(sizeof(V)), q, kValuesTag, requests);
    at += counts[i];
  }
  for (int g = 0; g < count_; ++g) {
    const int peer = holder(g, rank_);
    large_isend(comm_, offsets.data(), static_cast<std::int64_t>(offsets.size() * 8), peer, kOffsetsTag, requests);
    large_isend(comm_, mine.col_indices.data(), nnz * 8, peer, kColumnsTag, requests);
    large_isend(comm_, mine.values.data(), nnz * std::int64_t(sizeof(V)), peer, kValuesTag, requests);
  }
  wait_all(requests);
  out.row_offsets.push_back(0);
  for (const std::vector<std::int64_t>& o : in_offsets) {
    const std::int64_t base = out.row_offsets.back();
    for (std::size_t r = 1; r < o.size(); ++r) out.row_offsets.push_back(base + o[r]);
  }
  if (out.row_offsets.size() == 1) out.row_offsets.clear();
  return out;
}

template <class T>
void SliceGroups::to_world(const dense::Context& context, int group, std::int64_t cols, dense::ConstDenseView<T> held,
                           dense::DenseView<T> out) const {
  BLOCKEIGS_ASSERT(out.rows == world_.rows(rank_) && out.cols == cols);
  if (cols == 0) return;
  const auto row_bytes = static_cast<std::int64_t>(cols * sizeof(T));
  std::vector<MPI_Request> requests;
  // Received straight into `out` where it is compact host memory, else staged on the host.
  const bool direct = out.space == Space::host && out.ld == cols;
  std::vector<T> staged(direct ? 0 : static_cast<std::size_t>(out.rows * cols));
  T* received = direct ? out.data : staged.data();
  large_irecv(comm_, received, out.rows * row_bytes, holder(group, rank_), kVectorsTag, requests);
  dense::DenseBlock<T> compact;
  std::vector<T> sent;
  if (mine_ == group) {
    // This rank's rows of the group's block, compact, on the host; each rank of its chunk gets its range.
    BLOCKEIGS_ASSERT(held.rows == rows_.rows(rank_ - first_rank(group)) && held.cols == cols);
    if (held.ld != cols) {
      compact = dense::DenseBlock<T>(held.space, held.rows, cols);
      copy_block(context, held, compact.view());
      held = compact.cview();
    }
    context.synchronize();  // the block's producers (and the copy) queued on the stream
    const T* from = held.data;
    if (held.space != Space::host) {
      sent.resize(static_cast<std::size_t>(held.rows * cols));
      dense::copy_bytes(sent.data(), Space::host, held.data, held.space, sent.size() * sizeof(T));
      from = sent.data();
    }
    const int j = rank_ - first_rank(group);
    for (int q = chunk_begin(group, j); q < chunk_begin(group, j + 1); ++q) {
      const std::int64_t at = world_.begin(q) - rows_.begin(j);
      large_isend(comm_, from + at * cols, world_.rows(q) * row_bytes, q, kVectorsTag, requests);
    }
  }
  wait_all(requests);
  if (direct) return;
  if (out.ld == cols) {
    dense::copy_bytes(out.data, out.space, staged.data(), Space::host, staged.size() * sizeof(T));
    return;
  }
  dense::DenseBlock<T> arrived(out.space, out.rows, cols);
  dense::copy_bytes(arrived.data(), arrived.space(), staged.data(), Space::host, staged.size() * sizeof(T));
  copy_block(context, arrived.cview(), out);
}

template CsrRows SliceGroups::gather_rows(const CsrRows&) const;
template ComplexCsrRows SliceGroups::gather_rows(const ComplexCsrRows&) const;

template <class T>
GroupOperatorFactory<T> distributed_group_operator(const RowsFor<T>& rows, const dense::Context& context,
                                                   Algorithm algorithm, HaloOptions halo) {
  return [&rows, &context, algorithm, halo](const SliceGroups& groups) -> std::unique_ptr<LinearOperator<T>> {
    const RowsFor<T> held = groups.gather_rows(rows);
    return std::make_unique<DistributedOperator<T>>(groups.group_comm(), context, held, groups.rows(), algorithm, halo);
  };
}

#define BLOCKEIGS_SLICE_GROUPS(T)                                                                                  \
  template void SliceGroups::to_world(const dense::Context&, int, std::int64_t, dense::ConstDenseView<T>,          \
                                      dense::DenseView<T>) const;                                                  \
  template GroupOperatorFactory<T> distributed_group_operator(const RowsFor<T>&, const dense::Context&, Algorithm, \
                                                              HaloOptions);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SLICE_GROUPS)
#undef BLOCKEIGS_SLICE_GROUPS

}  // namespace blockeigs::solver
