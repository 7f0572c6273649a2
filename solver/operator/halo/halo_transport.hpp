// How a distributed operator's halo rows travel, and the choice made once
// when the operator is built.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/enums.hpp"
#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

// HaloTransport (core/enums.hpp): automatic, the rules below; mpi: MpiHalo,
// MPI on the blocks' own memory (host, or device with CUDA-aware MPI);
// staged_mpi: StagedMpiHalo, MPI through pinned host copies; peer: PeerHalo,
// CUDA IPC copies between GPUs of one node with MPI tokens; nccl: NcclHalo,
// NCCL sends and receives between GPUs (builds with NCCL).

// The halo's options (execution.halo, docs/config.md). Every rank passes the same.
struct HaloOptions {
  HaloTransport transport = HaloTransport::automatic;
  bool peer = true;                                     // false: automatic never takes CUDA IPC
  std::optional<bool> cuda_aware_mpi = std::nullopt;    // whether MPI takes device pointers; none: as MPI says
  std::int64_t piece_bytes = default_halo_piece_bytes;  // staged_mpi's pieces; at most mpi_chunk_limit()
};

// What a transport depends on beside the user's request.
struct TransportFacts {
  bool device = false;          // the blocks are in device memory
  int ranks = 1;                // of the communicator
  bool peer_refused = false;    // CUDA IPC was tried and refused (a neighbour on another node, mapping failed)
  bool nccl_compiled = false;   // the build has NCCL
  bool cuda_aware_mpi = false;  // mpi_is_cuda_aware(requested.cuda_aware_mpi)
};

struct TransportChoice {
  HaloTransport transport = HaloTransport::mpi;
  std::string reason;  // for the summary: "auto: every neighbour on this node"
};

// The one place a halo transport is decided, from the user's request
// (execution.halo) and the facts. Host blocks travel by MPI (staged where
// named: pieces through a pinned buffer); ipc and nccl count for device blocks
// only. automatic on device
// blocks: CUDA IPC unless refused or `peer` is false; else NCCL where compiled
// and there are two ranks or more; else MPI on the device blocks where MPI is
// CUDA-aware; else MPI staged through the host. A named transport is taken
// as named, mpi turning staged where MPI is not CUDA-aware. Local.
TransportChoice choose_halo_transport(const HaloOptions& requested, const TransportFacts& facts);

// The exchange for `plan` (which must outlive it), as choose_halo_transport
// decides: peer first tried (PeerHalo::create, collective) and, refused, the
// choice made again without it; where NCCL cannot start on some rank, every
// rank takes MPI and the exchange's fallback_note() says why. Its reason()
// says why the transport was taken. Naming a transport that cannot run here
// (peer without GPUs on one node, nccl on host blocks or without NCCL
// compiled) throws InputError on every rank. `peer_refused`: the choice
// after CUDA IPC refused memory it had accepted (DistributedOperator's
// first wider apply). Collective.
template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                                    const HaloOptions& options = {}, bool peer_refused = false);

}  // namespace blockeigs::solver
