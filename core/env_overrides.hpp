// Every environment variable block-eigs reads: read here and nowhere else in
// the library and the apps (tests/repo/check_environment.sh holds them to
// that), all of them once per process, at the first call of environment().
// docs/config.md#environment-overrides is the users' list.
//
// Config overrides: each stands for a config key. The apps apply them over
// the config file and the command line's --set (the environment wins), with
// the key's own checks; rank 0's values count (apps/environment.hpp). Empty
// is unset.
//   BLOCKEIGS_HALO_TRANSPORT=auto|ipc|nccl|mpi|staged  execution.halo.transport
//   BLOCKEIGS_HALO_PEER=0 (any other value: 1)         execution.halo.peer: false (true)
//   BLOCKEIGS_CUDA_AWARE_MPI=0 (any other value: 1)    execution.halo.cuda_aware_mpi: false (true)
//   BLOCKEIGS_HALO_PIECE_BYTES=N                       execution.halo.piece_bytes
//   BLOCKEIGS_MPI_CHUNK_BYTES=N                        execution.mpi_chunk_bytes
//   BLOCKEIGS_MEMORY_LIMIT_BYTES=N                     execution.memory_limit_bytes
// Process settings, which the library takes from here (each process its own):
//   OMP_NUM_THREADS, OPENBLAS_NUM_THREADS  the CPU backend's thread counts
//       (solver/operator/device_selection.hpp); the OpenMP and OpenBLAS runtimes read them too.
//   BLOCKEIGS_DEBUG_SYNC  not empty and not 0: synchronise after every kernel launch (core/cuda_checks.hpp).
//   OMPI_COMM_WORLD_RANK, else PMI_RANK  the launcher's rank, before MPI starts (petsc-example).
//   OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE  Open MPI's job size and the ranks on this
//       node, before MPI starts (the apps' MPI default, apps/environment.hpp).
// Set, not read: NCCL_CUMEM_ENABLE and NCCL_MAX_P2P_NCHANNELS, defaults for
// NCCL, and OMPI_MCA_pml where every rank is on one node, that the apps set
// unless the user has (apps/environment.hpp).
// Tests read BLOCKEIGS_DATA_DIR (tests/support/test_matrices.cpp).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blockeigs::env {

// An environment variable that stands for a config key.
struct KeyVariable {
  std::string_view variable;  // "BLOCKEIGS_HALO_PEER"
  std::string_view key;       // "execution.halo.peer"
  bool zero_is_false;         // the key is false where the value is 0, true otherwise; else the value is the key's
};

inline constexpr std::array<KeyVariable, 6> key_variables{{
    {"BLOCKEIGS_HALO_TRANSPORT", "execution.halo.transport", false},
    {"BLOCKEIGS_HALO_PEER", "execution.halo.peer", true},
    {"BLOCKEIGS_CUDA_AWARE_MPI", "execution.halo.cuda_aware_mpi", true},
    {"BLOCKEIGS_HALO_PIECE_BYTES", "execution.halo.piece_bytes", false},
    {"BLOCKEIGS_MPI_CHUNK_BYTES", "execution.mpi_chunk_bytes", false},
    {"BLOCKEIGS_MEMORY_LIMIT_BYTES", "execution.memory_limit_bytes", false},
}};

// One that is set: the key's assignment ("execution.halo.peer=false") and
// the variable as set ("BLOCKEIGS_HALO_PEER=0"), which messages name.
struct KeyOverride {
  std::string assignment;
  std::string origin;
};

struct Environment {
  std::vector<KeyOverride> keys;                    // those of key_variables set and not empty, in its order
  std::optional<std::string> omp_num_threads;       // OMP_NUM_THREADS; none: unset
  std::optional<std::string> openblas_num_threads;  // OPENBLAS_NUM_THREADS; none: unset
  bool debug_sync = false;                          // BLOCKEIGS_DEBUG_SYNC
  std::optional<std::string> launcher_rank;         // OMPI_COMM_WORLD_RANK, else PMI_RANK
  std::optional<std::string> ompi_world_size;       // OMPI_COMM_WORLD_SIZE
  std::optional<std::string> ompi_local_size;       // OMPI_COMM_WORLD_LOCAL_SIZE
};

// The variables as `lookup` gives them (null: unset): getenv for
// environment(); a table in tests, and rank 0's values in the apps.
using Lookup = std::function<const char*(const char*)>;
std::vector<KeyOverride> read_key_overrides(const Lookup& lookup);
Environment read_environment(const Lookup& lookup);

// This process's environment, read at the first call.
const Environment& environment();

}  // namespace blockeigs::env
