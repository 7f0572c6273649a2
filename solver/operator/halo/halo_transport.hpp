// How a distributed operator's halo rows travel, and the choice made once
// when the operator is built.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>

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

// The options that a user's choice (execution.halo) means for blocks in
// `space`: its transport counts for device blocks only (host blocks take
// automatic, which is MPI), and mpi there means CUDA-aware MPI where MPI is,
// else staged_mpi (where make_halo_exchange would refuse mpi).
HaloOptions user_halo_options(HaloOptions chosen, Space space);

// The exchange for `plan` (which must outlive it), by options.transport.
// automatic: host blocks through MPI; device blocks through CUDA IPC where
// every rank's neighbours share its node and options.peer holds, else (two
// ranks or more) through NCCL in builds with it, else through MPI with device
// pointers where MPI is CUDA-aware (mpi_is_cuda_aware(options.cuda_aware_mpi)),
// else staged through the host. Where NCCL cannot start on some rank, every
// rank takes MPI and the exchange's fallback_note() says why. Naming a
// transport that cannot run here (peer without GPUs on one node, mpi with
// device blocks and an MPI that is not CUDA-aware, nccl on host blocks or
// without NCCL compiled) throws InputError on every rank. Collective.
template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan,
                                                    const HaloOptions& options = {});

}  // namespace blockeigs::solver
