// The device half of StagedMpiHalo (staged_mpi_halo.hpp): the copy streams,
// the events and the pipelined copies between device, pinned host staging
// and MPI.
#include <cuda_runtime.h>

#include "core/checks.hpp"
#include "core/cuda_checks.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {
namespace {

cudaStream_t stream_of(void* p) { return static_cast<cudaStream_t>(p); }
cudaEvent_t event_of(void* p) { return static_cast<cudaEvent_t>(p); }
void* new_event() {
  cudaEvent_t event = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

}  // namespace

template <class T>
void StagedMpiHalo<T>::create_copy_streams() {
  cudaStream_t out = nullptr, in = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking));
  to_host_ = out;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&in, cudaStreamNonBlocking));
  to_device_ = in;
  packed_ = new_event();
  copied_in_ = new_event();
}

template <class T>
void StagedMpiHalo<T>::release_copy_streams() noexcept {
  for (void* e : staged_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_of(e)));
  for (void* e : {packed_, copied_in_})
    if (e) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_of(e)));
  for (void* s : {to_host_, to_device_})
    if (s) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_of(s)));
}

template <class T>
void StagedMpiHalo<T>::wait_for_copies_in() {
  BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(event_of(copied_in_)));
}

// Both copy streams wait for the pack, queued behind the previous exchange's
// halo multiply: neither the send buffer nor the halo block is overwritten early.
template <class T>
void StagedMpiHalo<T>::start_on_device() {
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
}

template <class T>
void StagedMpiHalo<T>::pipeline_on_device() {
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
}

#define BLOCKEIGS_STAGED_DEVICE_HALF(T)                                                    \
  BLOCKEIGS_STAGED_MPI_HALO_DEVICE_HALF(StagedMpiHalo<T>::, BLOCKEIGS_BACKEND_INSTANTIATE) \
  template void StagedMpiHalo<T>::release_copy_streams() noexcept;
BLOCKEIGS_STAGED_DEVICE_HALF(float)
BLOCKEIGS_STAGED_DEVICE_HALF(double)
#undef BLOCKEIGS_STAGED_DEVICE_HALF

}  // namespace blockeigs::solver
