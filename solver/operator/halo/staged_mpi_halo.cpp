#include "solver/operator/halo/staged_mpi_halo.hpp"

#include "solver/operator/collective.hpp"
#include "solver/operator/halo/halo_transport.hpp"

namespace blockeigs::solver {

template <class T>
StagedMpiHalo<T>::StagedMpiHalo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan) {}

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
void StagedMpiHalo<T>::start(const typename HaloExchange<T>::Source& X) {
  words_ = X.words;
  requests_.clear();
  this->post_receives(recv_staging_.data(), words_, requests_);
  this->queue_pack(X);
  if (this->plan_.packed_rows() > 0)
    spmm::copy_bytes_async(send_staging_.data(), Space::host, this->send_buffer_.data(), this->context_.space(),
                           static_cast<std::size_t>(this->plan_.packed_rows() * words_) * sizeof(T),
                           this->context_.stream());
  this->record_packed();
}

template <class T>
spmm::ConstDenseView<T> StagedMpiHalo<T>::end() {
  this->wait_for_pack();
  this->marks_.packed = this->now();
  this->post_sends(send_staging_.data(), words_, requests_);
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  this->marks_.arrived = this->now();
  spmm::copy_bytes_async(this->halo_block_.data(), this->context_.space(), recv_staging_.data(), Space::host,
                         static_cast<std::size_t>(this->plan_.halo_rows() * words_) * sizeof(T),
                         this->context_.stream());
  return this->halo_block(words_);
}

template class StagedMpiHalo<float>;
template class StagedMpiHalo<double>;

}  // namespace blockeigs::solver
