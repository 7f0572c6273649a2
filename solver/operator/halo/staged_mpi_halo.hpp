// Halo rows through MPI staged through pinned host memory, for device blocks
// where MPI is not CUDA-aware: the packed rows are copied to the host behind
// the pack kernel, sent once both are done (in end(), after the caller queued
// its diagonal multiply), and the received rows copied to the device.
#pragma once

#include <vector>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

template <class T>
class StagedMpiHalo final : public HaloExchange<T> {
 public:
  StagedMpiHalo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan);

  HaloTransport transport() const override;
  std::string name() const override { return "MPI, staged through host"; }
  spmm::ConstDenseView<T> end() override;

 protected:
  void start(const typename HaloExchange<T>::Source& X) override;
  bool on_reserve(std::int64_t cols, const T* send_buffer) override;

 private:
  spmm::PinnedBuffer<T> send_staging_;  // host copy of the packed rows
  spmm::PinnedBuffer<T> recv_staging_;  // received rows before their copy to the halo block
  std::vector<MPI_Request> requests_;
  std::int64_t words_ = 0;
};

}  // namespace blockeigs::solver
