// How a distributed operator's halo rows travel, and the choice made once
// when the operator is built.
#pragma once

#include <mpi.h>

#include <memory>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

enum class HaloTransport {
  automatic,   // the rules below
  mpi,         // MpiHalo: MPI on the blocks' own memory (host, or device with CUDA-aware MPI)
  staged_mpi,  // StagedMpiHalo: MPI through pinned host copies
  peer,        // PeerHalo: CUDA IPC copies between GPUs of one node, MPI tokens
};

// The exchange for `plan` (which must outlive it). automatic: host blocks
// through MPI; device blocks through CUDA IPC where every rank's neighbours
// share its node and BLOCKEIGS_HALO_PEER is not 0, else through MPI with
// device pointers where MPI is CUDA-aware (mpi_is_cuda_aware:
// BLOCKEIGS_CUDA_AWARE_MPI=0|1 overrides), else staged through the host.
// Naming a transport that cannot run here (peer without GPUs on one node,
// mpi with device blocks and an MPI that is not CUDA-aware) throws InputError
// on every rank. Collective.
template <class T>
std::unique_ptr<HaloExchange<T>> make_halo_exchange(MPI_Comm comm, const spmm::Context& context,
                                                    const HaloPlan& plan,
                                                    HaloTransport transport = HaloTransport::automatic);

}  // namespace blockeigs::solver
