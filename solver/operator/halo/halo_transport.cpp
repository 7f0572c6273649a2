#include "solver/operator/halo/halo_transport.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/mpi_halo.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/operator/halo/peer_halo.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {
namespace {

// MPI on device blocks: their own pointers where MPI is CUDA-aware, else staged.
template <class T>
std::unique_ptr<HaloExchange<T>> mpi_halo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan) {
  if (context.space() == Space::device && !mpi_is_cuda_aware())
    return std::make_unique<StagedMpiHalo<T>>(comm, context, plan);
  return std::make_unique<MpiHalo<T>>(comm, context, plan);
}

// NCCL, or MPI with a note where NCCL cannot start.
template <class T>
std::unique_ptr<HaloExchange<T>> nccl_or_mpi(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan) {
  std::string why;
  if (auto nccl = NcclHalo<T>::create(comm, context, plan, why)) return nccl;
  auto fallback = mpi_halo<T>(comm, context, plan);
  fallback->set_fallback_note("NCCL did not start: " + why);
  return fallback;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace

HaloTransport halo_transport_from_environment(MPI_Comm comm, bool device) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  int chosen = static_cast<int>(HaloTransport::automatic);
  collectively(comm, [&] {
    const char* env = rank == 0 ? std::getenv("BLOCKEIGS_HALO_TRANSPORT") : nullptr;
    if (!env || !*env) return;
    const std::string value(env);
    if (value == "auto") return;
    if (value == "ipc")
      chosen = static_cast<int>(HaloTransport::peer);
    else if (value == "nccl")
      chosen = static_cast<int>(HaloTransport::nccl);
    else if (value == "mpi")
      chosen = static_cast<int>(device && !mpi_is_cuda_aware() ? HaloTransport::staged_mpi : HaloTransport::mpi);
    else if (value == "staged")
      chosen = static_cast<int>(HaloTransport::staged_mpi);
    else
      fail_input("BLOCKEIGS_HALO_TRANSPORT=", value, " is not a halo transport (auto, ipc, nccl, mpi or staged)");
  });
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&chosen, 1, MPI_INT, 0, comm));
  return static_cast<HaloTransport>(chosen);
}

template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context,
                                                    const HaloPlan& plan, HaloTransport transport) {
  const bool device = context.space() == Space::device;
  if (device && transport == HaloTransport::automatic) transport = halo_transport_from_environment(comm, device);
  switch (transport) {
    case HaloTransport::automatic:
      if (device) {
        if (auto peer = PeerHalo<T>::create(comm, context, plan)) return peer;
        if (nccl_compiled() && comm_size(comm) > 1) return nccl_or_mpi<T>(comm, context, plan);
      }
      return mpi_halo<T>(comm, context, plan);
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
    case HaloTransport::nccl:
      if (!nccl_compiled())
        fail_input("halo transport nccl: this build has no NCCL (configure with -DBLOCKEIGS_NCCL=ON, "
                   "NCCL_ROOT pointing at NCCL)");
      if (!device) fail_input("halo transport nccl: NCCL needs device blocks (execution.backend cuda)");
      return nccl_or_mpi<T>(comm, context, plan);
  }
  fail_input("unknown halo transport");
}

template std::unique_ptr<HaloExchange<float>> make_halo_exchange(MPI_Comm, const spmm::Context&, const HaloPlan&,
                                                                 HaloTransport);
template std::unique_ptr<HaloExchange<double>> make_halo_exchange(MPI_Comm, const spmm::Context&,
                                                                  const HaloPlan&, HaloTransport);

}  // namespace blockeigs::solver
