// How a distributed operator's halo rows travel, and the choice made once
// when the operator is built.
#pragma once

#include <mpi.h>

#include <memory>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

enum class HaloTransport {
  automatic,   // BLOCKEIGS_HALO_TRANSPORT, else the rules below
  mpi,         // MpiHalo: MPI on the blocks' own memory (host, or device with CUDA-aware MPI)
  staged_mpi,  // StagedMpiHalo: MPI through pinned host copies
  peer,        // PeerHalo: CUDA IPC copies between GPUs of one node, MPI tokens
  nccl,        // NcclHalo: NCCL sends and receives between GPUs (builds with NCCL)
};

// The transport BLOCKEIGS_HALO_TRANSPORT names, as rank 0 reads it: unset or
// auto -> automatic; ipc -> peer; nccl; mpi -> mpi, or staged_mpi for
// `device` blocks where MPI is not CUDA-aware; staged -> staged_mpi. Any other
// value throws InputError on every rank naming the variable and the value.
// Collective.
HaloTransport halo_transport_from_environment(MPI_Comm comm, bool device);

// The exchange for `plan` (which must outlive it). automatic: host blocks
// through MPI; device blocks through the transport BLOCKEIGS_HALO_TRANSPORT
// names, and where it names none through CUDA IPC where every rank's neighbours share
// its node and BLOCKEIGS_HALO_PEER is not 0, else (two ranks or more) through
// NCCL in builds with it, else through MPI with device pointers where MPI is
// CUDA-aware (mpi_is_cuda_aware: BLOCKEIGS_CUDA_AWARE_MPI=0|1 overrides), else
// staged through the host. Where NCCL cannot start on some rank, every rank
// takes MPI and the exchange's fallback_note() says why. Naming a transport
// that cannot run here (peer without GPUs on one node, mpi with device blocks
// and an MPI that is not CUDA-aware, nccl on host blocks or without NCCL
// compiled) throws InputError on every rank. Collective.
template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context,
                                                    const HaloPlan& plan,
                                                    HaloTransport transport = HaloTransport::automatic);

}  // namespace blockeigs::solver
