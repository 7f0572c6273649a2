#include "solver/operator/distributed_operator.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/local_blocks.hpp"
#include "spmm/single_input_spmm.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "solver/operator/cuda/halo_pack.hpp"
#endif

namespace blockeigs::solver {
namespace {

template <class T>
MPI_Datatype mpi_type() {
  return sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT;
}

int message_count(std::int64_t rows, std::int64_t k) {
  const std::int64_t count = rows * k;
  if (count > std::numeric_limits<int>::max())
    throw InputError("a halo message of " + std::to_string(count) +
                     " values exceeds MPI's int count: use more ranks or a narrower block");
  return static_cast<int>(count);
}

}  // namespace

template <class T>
DistributedOperator<T>::DistributedOperator(MPI_Comm comm, const spmm::Context& context,
                                            const io::CsrRows& rows, const RowPartition& partition,
                                            Algorithm algorithm)
    : comm_(comm), context_(context), partition_(partition) {
  MPI_Comm_rank(comm_, &rank_);
  LocalBlocks<T> blocks = collectively(comm_, [&] {
    if (rows.first_row != partition_.begin(rank_) || rows.local_rows() != partition_.rows(rank_))
      throw Error("DistributedOperator: the rows given do not match the partition");
    return split_local_rows<T>(rows);
  });
  halo_ = build_halo_plan(comm_, partition_, blocks.halo_columns);
  cuda_aware_ = context_.space() == Space::device && mpi_is_cuda_aware();

  const Space space = context_.space();
  diagonal_nnz_ = blocks.diagonal.nnz();
  off_diagonal_nnz_ = blocks.off_diagonal.nnz();
  diagonal_block_ = spmm::CsrMatrix<T>(space, blocks.diagonal);
  off_diagonal_block_ = spmm::CsrMatrix<T>(space, blocks.off_diagonal);
  diagonal_entries_ = spmm::Buffer<T>(space, blocks.diagonal_entries);
  send_rows_ = spmm::Buffer<std::int32_t>(space, halo_.send_rows);
  packed_ = std::make_unique<spmm::Event>(context_);
  peer_ = PeerHalo::create(comm_, context_, halo_);
  off_diagonal_rows_ = spmm::Buffer<std::int32_t>(space, blocks.off_diagonal_rows);
  collectively(comm_, [&] {
    diagonal_plan_.emplace(context_, diagonal_block_.view(), algorithm);
    off_diagonal_plan_.emplace(context_, off_diagonal_block_.view(), algorithm);
  });
}

template <class T>
DistributedOperator<T>::~DistributedOperator() = default;

template <class T>
double DistributedOperator<T>::now() const {
  if (profiling_) context_.synchronize();
  return MPI_Wtime();
}

template <class T>
void DistributedOperator<T>::diagonal(T* out) const {
  spmm::copy_bytes(out, context_.space(), diagonal_entries_.data(), context_.space(),
                   diagonal_entries_.size() * sizeof(T));
}

template <class T>
void DistributedOperator<T>::ensure_buffers(std::int64_t k) {
  if (k <= width_) return;
  const Space space = context_.space();
  const auto packed = static_cast<std::size_t>(halo_.packed_rows() * k);
  const auto received = static_cast<std::size_t>(halo_.halo_rows() * k);
  // Mapped by the neighbours before the old buffer is freed (collective).
  spmm::Buffer<T> send(space, packed);
  if (peer_ && !peer_->publish(send.data())) peer_.reset();
  send_buffer_ = std::move(send);
  halo_block_ = spmm::DenseBlock<T>(space, halo_.halo_rows(), k);
  halo_product_ = spmm::DenseBlock<T>(space, off_diagonal_block_.rows(), k);
  if (staged()) {
    send_staging_ = spmm::PinnedBuffer<T>(packed);
    recv_staging_ = spmm::PinnedBuffer<T>(received);
  }
  width_ = k;
}

template <class T>
void DistributedOperator<T>::post_receives(std::int64_t k, std::vector<MPI_Request>& requests) {
  T* receive = staged() ? recv_staging_.data() : halo_block_.data();
  requests.clear();
  for (std::size_t q = 0; q < halo_.recv_ranks.size(); ++q) {
    const std::int64_t first = halo_.recv_offsets[q];
    const int count = message_count(halo_.recv_offsets[q + 1] - first, k);
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(receive + first * k, count, mpi_type<T>(), halo_.recv_ranks[q], 0, comm_,
                                  &requests.back()));
  }
}

template <class T>
template <class U>
void DistributedOperator<T>::queue_pack(spmm::ConstDenseView<U> X) {
  const std::int64_t k = X.cols;
  const Space space = context_.space();
  U* packed = reinterpret_cast<U*>(send_buffer_.data());  // U is T or narrower
  if (space == Space::host) {
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < halo_.packed_rows(); ++s) {
      const U* from = X.data + std::int64_t(halo_.send_rows[s]) * X.ld;
      std::copy(from, from + k, packed + s * k);
    }
    return;
  }
  if (halo_.packed_rows() == 0) return;  // nothing to send: nothing to wait for either
#ifdef BLOCKEIGS_HAVE_CUDA
  cuda::pack_rows(X.data, X.ld, k, send_rows_.data(), halo_.packed_rows(), packed, context_.stream());
#endif
  if (staged())
    spmm::copy_bytes_async(send_staging_.data(), Space::host, packed, space,
                           static_cast<std::size_t>(halo_.packed_rows() * k) * sizeof(U), context_.stream());
  packed_->record();
}

template <class T>
void DistributedOperator<T>::wait_for_pack() {
  if (halo_.packed_rows() > 0) packed_->synchronize();
}

template <class T>
void DistributedOperator<T>::post_sends(std::int64_t k, std::vector<MPI_Request>& requests) {
  const T* packed = staged() ? send_staging_.data() : send_buffer_.data();
  for (std::size_t q = 0; q < halo_.send_ranks.size(); ++q) {
    const std::int64_t first = halo_.send_offsets[q];
    const int count = message_count(halo_.send_offsets[q + 1] - first, k);
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(packed + first * k, count, mpi_type<T>(), halo_.send_ranks[q], 0, comm_,
                                  &requests.back()));
  }
}

template <class T>
void DistributedOperator<T>::finish_exchange(std::vector<MPI_Request>& requests) {
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

template <class T>
void DistributedOperator<T>::apply(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) {
  const std::int64_t m = local_rows();
  if (X.rows != m || Y.rows != m || X.cols != Y.cols)
    throw Error("DistributedOperator::apply: X is " + std::to_string(X.rows) + " x " +
                std::to_string(X.cols) + " and Y is " + std::to_string(Y.rows) + " x " +
                std::to_string(Y.cols) + ", but this rank owns " + std::to_string(m) + " rows");
  exchange_around(
      X, [&] { diagonal_plan_->multiply(alpha, X, beta, Y); }, [&] { add_halo_product(alpha, X.cols, Y); });
}

template <class T>
template <class U, class Diagonal, class Halo>
void DistributedOperator<T>::exchange_around(spmm::ConstDenseView<U> X, Diagonal multiply_diagonal, Halo add_halo) {
  const std::int64_t k = X.cols;
  // The halo buffers and messages move whole T values: k U's a row are
  // k_moved of them (apply_single sends an even width).
  const std::int64_t k_moved = k * std::int64_t(sizeof(U)) / std::int64_t(sizeof(T));
  ensure_buffers(k);
  const double t0 = now();
  if (peer_) {
    peer_->post_packed_receives();
    queue_pack(X);
    const double t1 = now();
    multiply_diagonal();
    wait_for_pack();
    const double t2 = now();
    pull_peer_rows(k_moved);
    const double t3 = now();
    peer_->stream_waits_for_copies();
    const double t4 = now();
    add_halo();
    peer_->halo_block_released();
    peer_->finish();
    timings_.add({t0, t1, t2, t3, t4, now()});
    return;
  }
  std::vector<MPI_Request> requests;
  post_receives(k_moved, requests);
  queue_pack(X);
  const double t1 = now();
  // The diagonal block needs no remote data: it runs while messages move.
  // Only the pack (and its copy to the host) must be done before the sends;
  // the multiply queued after it keeps running.
  multiply_diagonal();
  wait_for_pack();
  const double t2 = now();
  post_sends(k_moved, requests);
  finish_exchange(requests);
  const double t3 = now();
  if (staged())
    spmm::copy_bytes_async(halo_block_.data(), Space::device, recv_staging_.data(), Space::host,
                           static_cast<std::size_t>(halo_.halo_rows() * k) * sizeof(U), context_.stream());
  const double t4 = now();
  add_halo();
  timings_.add({t0, t1, t2, t3, t4, now()});
}

// Once this rank's pack is done: tell the receivers, wait for the senders'
// word, and queue the copies of their rows on the side stream.
template <class T>
void DistributedOperator<T>::pull_peer_rows(std::int64_t k) {
  peer_->announce_packed();
  peer_->queue_copies(halo_block_.data(), static_cast<std::size_t>(k) * sizeof(T));
}

template <class T>
void DistributedOperator<T>::apply_single(spmm::ConstDenseView<float> X, spmm::DenseView<T> Y) {
  const std::int64_t m = local_rows(), k = X.cols;
  if (X.rows != m || Y.rows != m || X.cols != Y.cols)
    throw Error("DistributedOperator::apply_single: X is " + std::to_string(X.rows) + " x " +
                std::to_string(X.cols) + " and Y is " + std::to_string(Y.rows) + " x " +
                std::to_string(Y.cols) + ", but this rank owns " + std::to_string(m) + " rows");
  // fp64 only; the halo buffers move whole doubles, so an odd width widens.
  if constexpr (!std::is_same_v<T, double>) {
    LinearOperator<T>::apply_single(X, Y);
  } else {
    if (k % 2 != 0) return LinearOperator<T>::apply_single(X, Y);
    exchange_around(
        X, [&] { spmm::multiply_single_input(context_, diagonal_block_.view(), X, Y); },
        [&] { add_halo_product(T(1), k, Y, true); });
  }
}

template <class T>
std::string DistributedOperator<T>::halo_transport() const {
  if (context_.space() == Space::host) return "host memory through MPI";
  if (peer_) return "device to device (CUDA IPC)";
  return cuda_aware_ ? "CUDA-aware MPI" : "MPI, staged through host";
}

template <class T>
void DistributedOperator<T>::add_halo_product(T alpha, std::int64_t k, spmm::DenseView<T> Y, bool single) {
  const std::int64_t rows = off_diagonal_block_.rows();
  if (halo_.halo_rows() == 0 || rows == 0) return;
  const Space space = context_.space();
  const spmm::DenseView<T> product{space, rows, k, k, halo_product_.data()};
  if constexpr (std::is_same_v<T, double>) {
    if (single) {
      const spmm::ConstDenseView<float> halo{space, halo_.halo_rows(), k, k,
                                             reinterpret_cast<const float*>(halo_block_.data())};
      spmm::multiply_single_input(context_, off_diagonal_block_.view(), halo, product);
    }
  }
  if (!single) {
    const spmm::DenseView<T> halo{space, halo_.halo_rows(), k, k, halo_block_.data()};
    off_diagonal_plan_->multiply(alpha, halo, T(0), product);
  }
  if (space == Space::host) {
    const std::int32_t* target = off_diagonal_rows_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      T* y = Y.data + std::int64_t(target[r]) * Y.ld;
      const T* p = product.data + r * k;
      for (std::int64_t j = 0; j < k; ++j) y[j] += p[j];
    }
  } else {
#ifdef BLOCKEIGS_HAVE_CUDA
    cuda::scatter_add_rows(product.data, k, off_diagonal_rows_.data(), rows, Y.data, Y.ld, context_.stream());
#endif
  }
}

template <class T>
void DistributedOperator<T>::exchange_only(spmm::ConstDenseView<T> X) {
  ensure_buffers(X.cols);
  if (peer_) {
    peer_->post_packed_receives();
    queue_pack(X);
    wait_for_pack();
    pull_peer_rows(X.cols);
    peer_->stream_waits_for_copies();
    peer_->halo_block_released();
    peer_->finish();
    context_.synchronize();
    return;
  }
  std::vector<MPI_Request> requests;
  post_receives(X.cols, requests);
  queue_pack(X);
  wait_for_pack();
  post_sends(X.cols, requests);
  finish_exchange(requests);
  if (staged())
    spmm::copy_bytes_async(halo_block_.data(), Space::device, recv_staging_.data(), Space::host,
                           static_cast<std::size_t>(halo_.halo_rows() * X.cols) * sizeof(T),
                           context_.stream());
  context_.synchronize();
}

template <class T>
void DistributedOperator<T>::multiply_only(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) {
  ensure_buffers(X.cols);
  diagonal_plan_->multiply(alpha, X, beta, Y);
  add_halo_product(alpha, X.cols, Y);
  context_.synchronize();
}

template class DistributedOperator<float>;
template class DistributedOperator<double>;

}  // namespace blockeigs::solver
