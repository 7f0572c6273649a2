#include "solver/operator/halo/staged_mpi_halo.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/halo/halo_transport.hpp"
#include "solver/base/large_messages.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "spmm/cuda/cuda_check.hpp"
#endif

namespace blockeigs::solver {
namespace {

void wait_all(std::vector<MPI_Request>& requests) {
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

#ifdef BLOCKEIGS_HAVE_CUDA
cudaStream_t stream_of(void* p) { return static_cast<cudaStream_t>(p); }
cudaEvent_t event_of(void* p) { return static_cast<cudaEvent_t>(p); }
void* new_event() {
  cudaEvent_t event = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}
#endif

}  // namespace

template <class T>
StagedMpiHalo<T>::StagedMpiHalo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan,
                                std::int64_t piece_bytes)
    : HaloExchange<T>(comm, context, plan),
      piece_bytes_(std::min(piece_bytes > 0 ? piece_bytes : default_halo_piece_bytes, mpi_chunk_limit())) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() != Space::device) return;
  cudaStream_t out = nullptr, in = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking));
  to_host_ = out;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&in, cudaStreamNonBlocking));
  to_device_ = in;
  packed_ = new_event();
  copied_in_ = new_event();
#endif
}

template <class T>
StagedMpiHalo<T>::~StagedMpiHalo() {
#ifdef BLOCKEIGS_HAVE_CUDA
  for (void* e : staged_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_of(e)));
  for (void* e : {packed_, copied_in_})
    if (e) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_of(e)));
  for (void* s : {to_host_, to_device_})
    if (s) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_of(s)));
#endif
}

template <class T>
HaloTransport StagedMpiHalo<T>::transport() const {
  return HaloTransport::staged_mpi;
}

template <class T>
bool StagedMpiHalo<T>::on_reserve(std::int64_t cols, const T*) {
  send_staging_ = spmm::PinnedBuffer<T>(static_cast<std::size_t>(this->plan_.packed_rows() * cols));
  recv_staging_ = spmm::PinnedBuffer<T>(static_cast<std::size_t>(this->plan_.halo_rows() * cols));
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
#ifdef BLOCKEIGS_HAVE_CUDA
  // The previous exchange's copies to the device read the receive staging.
  if (copies_in_queued_) BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(event_of(copied_in_)));
#endif
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
  spmm::copy_bytes(send_staging_.data(), Space::host, this->send_buffer_.data(), Space::host,
                   static_cast<std::size_t>(this->plan_.packed_rows() * words_) * sizeof(T));
  for (std::size_t i = 0; i < send_pieces_.size(); ++i)
    BLOCKEIGS_MPI_CHECK(MPI_Isend(from + send_pieces_[i].offset, static_cast<int>(send_pieces_[i].bytes), MPI_BYTE,
                                  send_pieces_[i].rank, 0, this->comm_, &send_requests_[i]));
}

// Both copy streams wait for the pack, queued behind the previous exchange's
// halo multiply: neither the send buffer nor the halo block is overwritten early.
template <class T>
void StagedMpiHalo<T>::start_on_device() {
#ifdef BLOCKEIGS_HAVE_CUDA
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(event_of(packed_), stream_of(this->context_.stream())));
  for (void* s : {to_host_, to_device_}) BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(stream_of(s), event_of(packed_), 0));
  while (staged_.size() < send_pieces_.size()) staged_.push_back(new_event());
  auto* to = reinterpret_cast<char*>(send_staging_.data());
  const auto* from = reinterpret_cast<const char*>(this->send_buffer_.data());
  for (std::size_t i = 0; i < send_pieces_.size(); ++i) {
    const Piece& p = send_pieces_[i];
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(to + p.offset, from + p.offset, static_cast<std::size_t>(p.bytes),
                                         cudaMemcpyDeviceToHost, stream_of(to_host_)));
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(event_of(staged_[i]), stream_of(to_host_)));
  }
#endif
}

template <class T>
void StagedMpiHalo<T>::pipeline_on_device() {
#ifdef BLOCKEIGS_HAVE_CUDA
  const auto* from = reinterpret_cast<const char*>(send_staging_.data());
  const auto* staged_in = reinterpret_cast<const char*>(recv_staging_.data());
  auto* halo = reinterpret_cast<char*>(this->halo_block_.data());
  std::size_t sent = 0, arrived = 0;
  std::vector<int> done(recv_pieces_.size());
  while (sent < send_pieces_.size() || arrived < recv_pieces_.size()) {
    for (; sent < send_pieces_.size(); ++sent) {
      const cudaError_t state = cudaEventQuery(event_of(staged_[sent]));
      if (state == cudaErrorNotReady) break;
      BLOCKEIGS_CUDA_CHECK(state);
      const Piece& p = send_pieces_[sent];
      BLOCKEIGS_MPI_CHECK(MPI_Isend(from + p.offset, static_cast<int>(p.bytes), MPI_BYTE, p.rank, 0, this->comm_,
                                    &send_requests_[sent]));
    }
    if (sent == send_pieces_.size() && this->marks_.packed == 0) this->marks_.packed = MPI_Wtime();
    if (arrived == recv_pieces_.size()) continue;  // only sends left: their copies to the host
    int count = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Testsome(static_cast<int>(recv_requests_.size()), recv_requests_.data(), &count,
                                     done.data(), MPI_STATUSES_IGNORE));
    for (int j = 0; j < count && count != MPI_UNDEFINED; ++j) {
      const Piece& p = recv_pieces_[static_cast<std::size_t>(done[j])];
      BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(halo + p.offset, staged_in + p.offset, static_cast<std::size_t>(p.bytes),
                                           cudaMemcpyHostToDevice, stream_of(to_device_)));
      ++arrived;
    }
  }
  this->marks_.arrived = MPI_Wtime();
  if (this->marks_.packed == 0) this->marks_.packed = this->marks_.arrived;  // nothing to send
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(event_of(copied_in_), stream_of(to_device_)));
  copies_in_queued_ = true;
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(stream_of(this->context_.stream()), event_of(copied_in_), 0));
#endif
}

template <class T>
spmm::ConstDenseView<T> StagedMpiHalo<T>::end() {
  this->marks_ = {};
  if (this->context_.space() == Space::device) {
    pipeline_on_device();
  } else {
    this->marks_.packed = this->now();
    wait_all(recv_requests_);
    this->marks_.arrived = this->now();
    spmm::copy_bytes(this->halo_block_.data(), Space::host, recv_staging_.data(), Space::host,
                     static_cast<std::size_t>(this->plan_.halo_rows() * words_) * sizeof(T));
  }
  // The next exchange overwrites the send staging.
  wait_all(send_requests_);
  return this->halo_block(words_);
}

template class StagedMpiHalo<float>;
template class StagedMpiHalo<double>;

}  // namespace blockeigs::solver
