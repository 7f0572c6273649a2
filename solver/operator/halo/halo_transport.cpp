#include "solver/operator/halo/halo_transport.hpp"

#include "core/error.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/mpi_halo.hpp"
#include "solver/operator/halo/peer_halo.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {

template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context,
                                                    const HaloPlan& plan, HaloTransport transport) {
  const bool device = context.space() == Space::device;
  switch (transport) {
    case HaloTransport::automatic:
      if (device) {
        if (auto peer = PeerHalo<T>::create(comm, context, plan)) return peer;
        if (!mpi_is_cuda_aware()) return std::make_unique<StagedMpiHalo<T>>(comm, context, plan);
      }
      return std::make_unique<MpiHalo<T>>(comm, context, plan);
    case HaloTransport::mpi:
      if (device && !mpi_is_cuda_aware())
        fail_input("halo transport mpi: device blocks need a CUDA-aware MPI (BLOCKEIGS_CUDA_AWARE_MPI=1 if it is)");
      return std::make_unique<MpiHalo<T>>(comm, context, plan);
    case HaloTransport::staged_mpi:
      return std::make_unique<StagedMpiHalo<T>>(comm, context, plan);
    case HaloTransport::peer:
      if (auto peer = PeerHalo<T>::create(comm, context, plan)) return peer;
      fail_input("halo transport peer: CUDA IPC needs device blocks, every neighbour on the same node, "
                 "and BLOCKEIGS_HALO_PEER not 0");
  }
  fail_input("unknown halo transport");
}

template std::unique_ptr<HaloExchange<float>> make_halo_exchange(MPI_Comm, const spmm::Context&, const HaloPlan&,
                                                                 HaloTransport);
template std::unique_ptr<HaloExchange<double>> make_halo_exchange(MPI_Comm, const spmm::Context&,
                                                                  const HaloPlan&, HaloTransport);

}  // namespace blockeigs::solver
