// Halo rows through MPI straight from and into the blocks' own memory: host
// memory on the CPU backend, device memory where MPI is CUDA-aware.
//
// begin: receives posted, rows packed; on the host the sends follow at once.
// On the device they are posted in end(), once the pack kernel is done, so
// that the caller's diagonal multiply is queued right behind the pack and
// runs while the rows move.
#pragma once

#include <vector>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

template <class T>
class MpiHalo final : public HaloExchange<T> {
 public:
  MpiHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan);

  HaloTransport transport() const override;
  std::string name() const override;
  dense::ConstDenseView<T> end() override;

 protected:
  void start(const typename HaloExchange<T>::Source& X) override;

 private:
  std::vector<MPI_Request> requests_;  // capacity kept across exchanges
  std::int64_t words_ = 0;             // of the exchange in flight
  bool sent_ = false;                  // sends already posted by start()
};

}  // namespace blockeigs::solver
