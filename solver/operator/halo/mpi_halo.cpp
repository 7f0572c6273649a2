#include "solver/operator/halo/mpi_halo.hpp"

#include "solver/base/collective.hpp"
#include "solver/operator/halo/halo_transport.hpp"

namespace blockeigs::solver {

template <class T>
MpiHalo<T>::MpiHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan) {}

template <class T>
HaloTransport MpiHalo<T>::transport() const {
  return HaloTransport::mpi;
}

template <class T>
std::string MpiHalo<T>::name() const {
  return this->context_.space() == Space::host ? "host memory through MPI" : "CUDA-aware MPI";
}

template <class T>
void MpiHalo<T>::start(const typename HaloExchange<T>::Source& X) {
  words_ = X.words;
  requests_.clear();
  this->post_receives(this->halo_block_.data(), words_, requests_);
  this->pack(X);
  // Host rows are packed on return: send them now.
  sent_ = this->context_.space() == Space::host;
  if (sent_) this->post_sends(this->send_buffer_.data(), words_, requests_);
}

template <class T>
dense::ConstDenseView<T> MpiHalo<T>::end() {
  this->wait_for_pack();
  this->marks_.packed = this->now();
  if (!sent_) this->post_sends(this->send_buffer_.data(), words_, requests_);
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  this->marks_.arrived = this->now();
  return this->halo_block(words_);
}

template class MpiHalo<float>;
template class MpiHalo<double>;

}  // namespace blockeigs::solver
