#include "solver/operator/halo/staged_mpi_halo.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/halo/halo_transport.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::solver {
namespace {

void wait_all(std::vector<MPI_Request>& requests) {
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

}  // namespace

template <class T>
StagedMpiHalo<T>::StagedMpiHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                std::int64_t piece_bytes)
    : HaloExchange<T>(comm, context, plan),
      piece_bytes_(std::min(piece_bytes > 0 ? piece_bytes : default_halo_piece_bytes, mpi_chunk_limit())) {
  if (context.space() == Space::device) create_copy_streams();
}

template <class T>
StagedMpiHalo<T>::~StagedMpiHalo() {
  if (this->context_.space() == Space::device) release_copy_streams();
}

template <class T>
HaloTransport StagedMpiHalo<T>::transport() const {
  return HaloTransport::staged_mpi;
}

template <class T>
bool StagedMpiHalo<T>::on_reserve(std::int64_t cols, const T*) {
  send_staging_ = dense::PinnedBuffer<T>(static_cast<std::size_t>(this->plan_.packed_rows() * cols));
  recv_staging_ = dense::PinnedBuffer<T>(static_cast<std::size_t>(this->plan_.halo_rows() * cols));
  return true;
}

template <class T>
auto StagedMpiHalo<T>::cut(const std::vector<int>& ranks, const std::vector<std::int64_t>& offsets) const
    -> std::vector<Piece> {
  const std::int64_t row_bytes = words_ * std::int64_t{sizeof(T)};
  std::vector<Piece> pieces;
  for (std::size_t q = 0; q < ranks.size(); ++q)
    for (std::int64_t at = offsets[q] * row_bytes, end = offsets[q + 1] * row_bytes; at < end; at += piece_bytes_)
      pieces.push_back({at, std::min(piece_bytes_, end - at), ranks[q]});
  return pieces;
}

template <class T>
void StagedMpiHalo<T>::start(const typename HaloExchange<T>::Source& X) {
  words_ = X.words;
  send_pieces_ = cut(this->plan_.send_ranks, this->plan_.send_offsets);
  recv_pieces_ = cut(this->plan_.recv_ranks, this->plan_.recv_offsets);
  // The previous exchange's copies to the device read the receive staging.
  if (copies_in_queued_) wait_for_copies_in();
  auto* into = reinterpret_cast<char*>(recv_staging_.data());
  recv_requests_.assign(recv_pieces_.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < recv_pieces_.size(); ++i)
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(into + recv_pieces_[i].offset, static_cast<int>(recv_pieces_[i].bytes), MPI_BYTE,
                                  recv_pieces_[i].rank, 0, this->comm_, &recv_requests_[i]));
  send_requests_.assign(send_pieces_.size(), MPI_REQUEST_NULL);
  this->queue_pack(X);
  if (this->context_.space() == Space::device) return start_on_device();
  // Host rows are packed on return: staged and sent at once.
  const auto* from = reinterpret_cast<const char*>(send_staging_.data());
  dense::copy_bytes(send_staging_.data(), Space::host, this->send_buffer_.data(), Space::host,
                    static_cast<std::size_t>(this->plan_.packed_rows() * words_) * sizeof(T));
  for (std::size_t i = 0; i < send_pieces_.size(); ++i)
    BLOCKEIGS_MPI_CHECK(MPI_Isend(from + send_pieces_[i].offset, static_cast<int>(send_pieces_[i].bytes), MPI_BYTE,
                                  send_pieces_[i].rank, 0, this->comm_, &send_requests_[i]));
}

template <class T>
dense::ConstDenseView<T> StagedMpiHalo<T>::end() {
  this->marks_ = {};
  if (this->context_.space() == Space::device) {
    pipeline_on_device();
  } else {
    this->marks_.packed = this->now();
    wait_all(recv_requests_);
    this->marks_.arrived = this->now();
    dense::copy_bytes(this->halo_block_.data(), Space::host, recv_staging_.data(), Space::host,
                      static_cast<std::size_t>(this->plan_.halo_rows() * words_) * sizeof(T));
  }
  // The next exchange overwrites the send staging.
  wait_all(send_requests_);
  return this->halo_block(words_);
}

template class StagedMpiHalo<float>;
template class StagedMpiHalo<double>;

}  // namespace blockeigs::solver
