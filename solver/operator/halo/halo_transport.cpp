#include "solver/operator/halo/halo_transport.hpp"

#include <string>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/mpi_halo.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/operator/halo/peer_halo.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {
namespace {

// MPI on device blocks: their own pointers where MPI is CUDA-aware, else staged.
template <class T>
std::unique_ptr<HaloExchange<T>> mpi_halo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan,
                                          const HaloOptions& options) {
  if (context.space() == Space::device && !mpi_is_cuda_aware(options.cuda_aware_mpi))
    return std::make_unique<StagedMpiHalo<T>>(comm, context, plan, options.piece_bytes);
  return std::make_unique<MpiHalo<T>>(comm, context, plan);
}

// NCCL, or MPI with a note where NCCL cannot start.
template <class T>
std::unique_ptr<HaloExchange<T>> nccl_or_mpi(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan,
                                             const HaloOptions& options) {
  std::string why;
  if (auto nccl = NcclHalo<T>::create(comm, context, plan, why)) return nccl;
  auto fallback = mpi_halo<T>(comm, context, plan, options);
  fallback->set_fallback_note("NCCL did not start: " + why);
  return fallback;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace

HaloOptions user_halo_options(HaloOptions chosen, Space space) {
  if (space != Space::device)
    chosen.transport = HaloTransport::automatic;
  else if (chosen.transport == HaloTransport::mpi && !mpi_is_cuda_aware(chosen.cuda_aware_mpi))
    chosen.transport = HaloTransport::staged_mpi;
  return chosen;
}

template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan,
                                                    const HaloOptions& options) {
  const bool device = context.space() == Space::device;
  switch (options.transport) {
    case HaloTransport::automatic:
      if (device) {
        if (auto peer = PeerHalo<T>::create(comm, context, plan, options.peer)) return peer;
        if (nccl_compiled() && comm_size(comm) > 1) return nccl_or_mpi<T>(comm, context, plan, options);
      }
      return mpi_halo<T>(comm, context, plan, options);
    case HaloTransport::mpi:
      if (device && !mpi_is_cuda_aware(options.cuda_aware_mpi))
        fail_input(
            "execution.halo.transport mpi: device blocks need a CUDA-aware MPI "
            "(execution.halo.cuda_aware_mpi: true if it is)");
      return std::make_unique<MpiHalo<T>>(comm, context, plan);
    case HaloTransport::staged_mpi: return std::make_unique<StagedMpiHalo<T>>(comm, context, plan, options.piece_bytes);
    case HaloTransport::peer:
      if (auto peer = PeerHalo<T>::create(comm, context, plan, options.peer)) return peer;
      // One rank has no neighbour and nothing to map: its (empty) halo goes the plain way.
      if (device && options.peer && comm_size(comm) == 1) return mpi_halo<T>(comm, context, plan, options);
      fail_input(
          "execution.halo.transport ipc: CUDA IPC needs device blocks (execution.backend cuda), every "
          "neighbour on the same node, and execution.halo.peer true");
    case HaloTransport::nccl:
      if (!nccl_compiled())
        fail_input(
            "execution.halo.transport nccl: this build has no NCCL (configure with -DBLOCKEIGS_NCCL=ON, "
            "NCCL_ROOT pointing at NCCL)");
      if (!device) fail_input("execution.halo.transport nccl: NCCL needs device blocks (execution.backend cuda)");
      return nccl_or_mpi<T>(comm, context, plan, options);
  }
  fail_input("unknown halo transport");
}

template std::unique_ptr<HaloExchange<float>> make_halo_exchange(MPI_Comm, const spmm::Context&, const HaloPlan&,
                                                                 const HaloOptions&);
template std::unique_ptr<HaloExchange<double>> make_halo_exchange(MPI_Comm, const spmm::Context&, const HaloPlan&,
                                                                  const HaloOptions&);

}  // namespace blockeigs::solver
