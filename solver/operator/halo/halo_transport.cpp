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

int comm_size(MPI_Comm comm) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

// MPI on device blocks, by the CUDA-awareness the facts give.
TransportChoice mpi_choice(const TransportFacts& facts, const std::string& why) {
  if (facts.device && !facts.cuda_aware_mpi)
    return {HaloTransport::staged_mpi, why + (why.empty() ? "" : "; ") + "MPI is not CUDA-aware: staged"};
  return {HaloTransport::mpi, why};
}

// The transport as chosen, built; NCCL gives way to MPI (with a note) where it cannot start.
template <class T>
std::unique_ptr<HaloExchange<T>> build(const TransportChoice& choice, MPI_Comm comm, const dense::Context& context,
                                       const HaloPlan& plan, const HaloOptions& options, const TransportFacts& facts) {
  std::unique_ptr<HaloExchange<T>> out;
  switch (choice.transport) {
    case HaloTransport::nccl: {
      std::string why;
      out = NcclHalo<T>::create(comm, context, plan, why);
      if (!out) {
        const TransportChoice fallback = mpi_choice(facts, "");
        out = build<T>(fallback, comm, context, plan, options, facts);
        out->set_fallback_note("NCCL did not start: " + why);
      }
      break;
    }
    case HaloTransport::staged_mpi:
      out = std::make_unique<StagedMpiHalo<T>>(comm, context, plan, options.piece_bytes);
      break;
    default: out = std::make_unique<MpiHalo<T>>(comm, context, plan); break;
  }
  if (out->reason().empty()) out->set_reason(choice.reason);
  return out;
}

}  // namespace

TransportChoice choose_halo_transport(const HaloOptions& requested, const TransportFacts& facts) {
  if (!facts.device) {
    if (requested.transport == HaloTransport::staged_mpi) return {HaloTransport::staged_mpi, "host blocks, staged"};
    if (requested.transport == HaloTransport::automatic || requested.transport == HaloTransport::mpi)
      return {HaloTransport::mpi, "host blocks"};
    return {HaloTransport::mpi, "host blocks: execution.halo.transport " + std::string(to_string(requested.transport)) +
                                    " counts for device blocks only"};
  }
  switch (requested.transport) {
    case HaloTransport::peer:
      if (!facts.peer_refused) return {HaloTransport::peer, "execution.halo.transport ipc"};
      [[fallthrough]];  // refused at a wider block: as auto without it
    case HaloTransport::automatic:
      if (requested.peer && !facts.peer_refused) return {HaloTransport::peer, "auto: every neighbour on this node"};
      if (facts.nccl_compiled && facts.ranks > 1)
        return {HaloTransport::nccl, requested.peer ? "auto: CUDA IPC refused" : "auto: execution.halo.peer false"};
      return mpi_choice(facts, facts.nccl_compiled ? "auto" : "auto: no NCCL in this build");
    case HaloTransport::mpi: return mpi_choice(facts, "execution.halo.transport mpi");
    case HaloTransport::staged_mpi: return {HaloTransport::staged_mpi, "execution.halo.transport staged"};
    case HaloTransport::nccl: return {HaloTransport::nccl, "execution.halo.transport nccl"};
  }
  return {HaloTransport::mpi, "?"};
}

template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                                    const HaloOptions& options, bool peer_refused) {
  TransportFacts facts{context.space() == Space::device, comm_size(comm), peer_refused, nccl_compiled(),
                       mpi_is_cuda_aware(options.cuda_aware_mpi)};
  TransportChoice choice = choose_halo_transport(options, facts);
  if (choice.transport == HaloTransport::nccl && !facts.nccl_compiled)
    fail_input(
        "execution.halo.transport nccl: this build has no NCCL (configure with -DBLOCKEIGS_NCCL=ON, "
        "NCCL_ROOT pointing at NCCL)");
  if (choice.transport == HaloTransport::peer) {
    if (auto peer = PeerHalo<T>::create(comm, context, plan, options.peer)) {
      peer->set_reason(choice.reason);
      return peer;
    }
    facts.peer_refused = true;
    if (options.transport == HaloTransport::peer) {
      // One rank has no neighbour and nothing to map: its (empty) halo goes the plain way.
      if (!options.peer || facts.ranks > 1)
        fail_input(
            "execution.halo.transport ipc: CUDA IPC needs device blocks (execution.backend cuda), every "
            "neighbour on the same node, and execution.halo.peer true");
      choice = mpi_choice(facts, "one rank: nothing to map");
    } else {
      choice = choose_halo_transport(options, facts);
    }
  }
  return build<T>(choice, comm, context, plan, options, facts);
}

template std::unique_ptr<HaloExchange<float>> make_halo_exchange(MPI_Comm, const dense::Context&, const HaloPlan&,
                                                                 const HaloOptions&, bool);
template std::unique_ptr<HaloExchange<double>> make_halo_exchange(MPI_Comm, const dense::Context&, const HaloPlan&,
                                                                  const HaloOptions&, bool);

}  // namespace blockeigs::solver
