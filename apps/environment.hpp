// What the apps hand the library from the environment and the config's
// execution section: the environment's config overrides as rank 0 reads them
// (core/env_overrides.hpp lists the variables), NCCL's defaults, the halo's
// options and the MPI message limit.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/enums.hpp"
#include "core/env_overrides.hpp"
#include "config/run_config.hpp"
#include "solver/operator/halo/halo_transport.hpp"

namespace blockeigs::apps {

// Rank 0's config overrides from the environment, on every rank (other
// ranks' environments may lack them: mpirun passes only what -x names to
// other nodes). Collective.
std::vector<env::KeyOverride> environment_overrides(MPI_Comm comm);

// NCCL takes two settings only from the environment (ncclConfig_t has no
// field for them), read at its first communicator: NCCL_CUMEM_ENABLE=0 and
// NCCL_MAX_P2P_NCHANNELS=2, set here unless the user set them. With NCCL's
// defaults (cuMem buffers, every channel to a peer) its host call for a
// grouped send/receive holds the host inside every apply of the solvers
// (docs/benchmarks/scaling.md#nccl-host-calls).
// Call first in main, before any thread starts; nothing in builds without NCCL.
void set_nccl_defaults();

// Open MPI's own choice of messaging layer (pml) makes MPI_Init far slower
// than ob1 over shared memory on the GPU machines (Open MPI 4.1 with its
// network components; docs/benchmarks/time-to-solution.md#ob1). Where Open
// MPI's launcher says that every rank of the job is on this node,
// OMPI_MCA_pml=ob1 is set here unless the user set a pml (with --mca pml or
// the variable). Call first in main, before any thread starts.
void set_mpi_defaults();
// The pml that set_mpi_defaults sets for an environment: "ob1" where Open
// MPI's launcher puts every rank on this node, else null.
const char* default_mpi_pml(const env::Environment& environment);

// execution.mpi_chunk_bytes as the process's MPI message limit for a scope
// (solver::set_mpi_chunk_limit); the limit before comes back after it.
class MpiChunkLimit {
 public:
  explicit MpiChunkLimit(std::int64_t bytes);
  ~MpiChunkLimit();
  MpiChunkLimit(const MpiChunkLimit&) = delete;
  MpiChunkLimit& operator=(const MpiChunkLimit&) = delete;

 private:
  std::int64_t before_;
};

}  // namespace blockeigs::apps
