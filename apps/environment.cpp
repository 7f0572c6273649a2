#include "apps/environment.hpp"

#include <cstdlib>
#include <map>
#include <string>

#include "core/checks.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::apps {

std::vector<env::KeyOverride> environment_overrides(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Rank 0's variables as VARIABLE=VALUE, each ended by a NUL (which no value holds).
  std::string packed;
  if (rank == 0)
    for (const env::KeyOverride& o : env::environment().keys) packed += o.origin + '\0';
  long long length = static_cast<long long>(packed.size());
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm));
  packed.resize(static_cast<std::size_t>(length));
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(packed.data(), static_cast<int>(length), MPI_CHAR, 0, comm));
  std::map<std::string, std::string> variables;
  for (std::size_t at = 0; at < packed.size();) {
    const std::size_t end = packed.find('\0', at), equals = packed.find('=', at);
    variables[packed.substr(at, equals - at)] = packed.substr(equals + 1, end - equals - 1);
    at = end + 1;
  }
  return env::read_key_overrides([&](const char* variable) -> const char* {
    const auto found = variables.find(variable);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

void set_nccl_defaults() {
  if (!solver::nccl_compiled()) return;
  setenv("NCCL_CUMEM_ENABLE", "0", 0);  // 0: a value the user set stays
  setenv("NCCL_MAX_P2P_NCHANNELS", "2", 0);
}

const char* default_mpi_pml(const env::Environment& e) {
  const bool one_node =
      e.ompi_world_size && e.ompi_local_size && !e.ompi_world_size->empty() && *e.ompi_world_size == *e.ompi_local_size;
  return one_node ? "ob1" : nullptr;
}

void set_mpi_defaults() {
  if (const char* pml = default_mpi_pml(env::environment())) setenv("OMPI_MCA_pml", pml, 0);  // 0: the user's stays
}

MpiChunkLimit::MpiChunkLimit(std::int64_t bytes) : before_(solver::set_mpi_chunk_limit(bytes)) {}

MpiChunkLimit::~MpiChunkLimit() { solver::set_mpi_chunk_limit(before_); }

}  // namespace blockeigs::apps
