// The execution keys that were environment variables once (execution.halo,
// mpi_chunk_bytes, memory_limit_bytes): their defaults, values, errors that
// name file, line and key, --set, and the environment's overrides
// (core/env_overrides.hpp), which win over the file and --set and whose
// errors name the variable.
#include <array>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/environment.hpp"
#include "core/env_overrides.hpp"
#include "core/error.hpp"
#include "config/run_config.hpp"

namespace blockeigs::cfg {
namespace {

using namespace blockeigs::io;

constexpr const char* kSource = "cfg/x.yaml";
constexpr const char* kMatrix = "matrix:\n  generator: {type: laplacian_1d, nx: 10}\n";

// A fake environment: the variables given, nothing else.
env::Lookup lookup(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

std::vector<env::KeyOverride> overrides_of(const std::map<std::string, std::string>& variables) {
  return env::read_key_overrides(lookup(variables));
}

ExecutionConfig execution(const std::string& section, const std::vector<std::string>& sets = {},
                          const std::map<std::string, std::string>& variables = {}) {
  return parse_cg_config(std::string(kMatrix) + section, kSource, sets, overrides_of(variables)).execution;
}

// The InputError message, empty when it parsed.
std::string error(const std::string& section, const std::vector<std::string>& sets = {},
                  const std::map<std::string, std::string>& variables = {}) {
  try {
    execution(section, sets, variables);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

// The periodic (Bloch) generator and matrix.field as read.
TEST(ConfigMatrix, PeriodicGeneratorAndField) {
  const EigsConfig c = parse_eigs_config(
      "matrix:\n  generator: {type: laplacian_3d, nx: 8, ny: 6, nz: 4, boundary: periodic, phase: [0.5, -1, 2]}\n"
      "  field: complex\neigensolver: {k: 3}\n",
      "cfg/a.yaml");
  EXPECT_TRUE(c.matrix.generator.periodic);
  EXPECT_EQ(c.matrix.generator.phase, (std::array<double, 3>{0.5, -1, 2}));
  EXPECT_TRUE(io::generates_complex(c.matrix.generator));
  EXPECT_EQ(c.matrix.field, io::MatrixField::complex);
  const EigsConfig plain =
      parse_eigs_config("matrix:\n  generator: {type: laplacian_3d, nx: 4, ny: 4, nz: 4}\n", "cfg/a.yaml");
  EXPECT_FALSE(plain.matrix.generator.periodic);
  EXPECT_EQ(plain.matrix.field, io::MatrixField::automatic);
}

TEST(ConfigExecution, DefaultsAreTheLibrarys) {
  const ExecutionConfig e = execution("");
  EXPECT_EQ(e.halo.transport, HaloTransport::automatic);
  EXPECT_TRUE(e.halo.peer);
  EXPECT_FALSE(e.halo.cuda_aware_mpi.has_value());
  EXPECT_EQ(e.halo.piece_bytes, std::int64_t{1} << 20);
  EXPECT_EQ(e.mpi_chunk_bytes, std::int64_t{1} << 30);
  EXPECT_FALSE(e.memory_limit_bytes.has_value());
  EXPECT_EQ(execution("execution: {halo: }\n").halo.piece_bytes, default_halo_piece_bytes);
}

TEST(ConfigExecution, ReadsEveryKey) {
  const ExecutionConfig e = execution(
      "execution:\n"
      "  halo: {transport: staged, peer: false, cuda_aware_mpi: true, piece_bytes: 4096}\n"
      "  mpi_chunk_bytes: 256\n"
      "  memory_limit_bytes: 0\n");
  EXPECT_EQ(e.halo.transport, HaloTransport::staged_mpi);
  EXPECT_FALSE(e.halo.peer);
  EXPECT_EQ(e.halo.cuda_aware_mpi, std::optional<bool>(true));
  EXPECT_EQ(e.halo.piece_bytes, 4096);
  EXPECT_EQ(e.mpi_chunk_bytes, 256);
  EXPECT_EQ(e.memory_limit_bytes, std::optional<std::int64_t>(0));
  const std::map<std::string, HaloTransport> spelled{{"auto", HaloTransport::automatic},
                                                     {"ipc", HaloTransport::peer},
                                                     {"nccl", HaloTransport::nccl},
                                                     {"mpi", HaloTransport::mpi},
                                                     {"staged", HaloTransport::staged_mpi}};
  for (const auto& [name, transport] : spelled) {
    EXPECT_EQ(execution("execution: {halo: {transport: " + name + "}}\n").halo.transport, transport) << name;
    EXPECT_EQ(to_string(transport), name);
  }
  EXPECT_EQ(execution("execution: {halo: {cuda_aware_mpi: false}}\n").halo.cuda_aware_mpi, std::optional<bool>(false));
  EXPECT_FALSE(execution("execution: {halo: {cuda_aware_mpi: auto}}\n").halo.cuda_aware_mpi.has_value());
}

TEST(ConfigExecution, BadValuesNameFileLineAndKey) {
  const std::string halo = "execution:\n  halo:\n";
  EXPECT_EQ(error(halo + "    transport: tcp\n"),
            "cfg/x.yaml:5: execution.halo.transport must be auto, ipc, nccl, mpi or staged, got 'tcp'");
  EXPECT_EQ(error(halo + "    transport: ncl\n"),
            "cfg/x.yaml:5: execution.halo.transport must be auto, ipc, nccl, mpi or staged, got 'ncl' "
            "(did you mean nccl?)");
  EXPECT_EQ(error(halo + "    peer: 0\n"), "cfg/x.yaml:5: execution.halo.peer must be true or false, got '0'");
  EXPECT_EQ(error(halo + "    cuda_aware_mpi: yes\n"),
            "cfg/x.yaml:5: execution.halo.cuda_aware_mpi must be auto, true or false, got 'yes' (did you mean true?)");
  EXPECT_EQ(error(halo + "    piece_bytes: 0\n"), "cfg/x.yaml:5: execution.halo.piece_bytes must be at least 1, got 0");
  EXPECT_EQ(error(halo + "    peers: false\n"), "cfg/x.yaml:5: unknown key execution.halo.peers (did you mean peer?)");
  EXPECT_EQ(error("execution:\n  mpi_chunk_bytes: 1.5\n"),
            "cfg/x.yaml:4: execution.mpi_chunk_bytes must be an integer, got '1.5'");
  EXPECT_EQ(error("execution:\n  memory_limit_bytes: -1\n"),
            "cfg/x.yaml:4: execution.memory_limit_bytes must be non-negative, got -1");
  EXPECT_EQ(error("execution:\n  halo: ipc\n"), "cfg/x.yaml:4: execution.halo must be a mapping of keys, got 'ipc'");
}

TEST(ConfigExecution, SetOnTheCommandLine) {
  const ExecutionConfig e = execution("execution: {halo: {transport: mpi}}\n",
                                      {"execution.halo.transport=nccl", "execution.halo.peer=false",
                                       "execution.mpi_chunk_bytes=512", "execution.memory_limit_bytes=1000"});
  EXPECT_EQ(e.halo.transport, HaloTransport::nccl);
  EXPECT_FALSE(e.halo.peer);
  EXPECT_EQ(e.mpi_chunk_bytes, 512);
  EXPECT_EQ(e.memory_limit_bytes, std::optional<std::int64_t>(1000));
  EXPECT_EQ(error("", {"execution.halo.piece_bytes=-4"}),
            "--set execution.halo.piece_bytes=-4: execution.halo.piece_bytes must be at least 1, got -4");
}

// Each variable stands for its key; empty is unset; PEER and CUDA_AWARE_MPI
// are false at 0 and true at anything else, as the library took them.
TEST(ConfigExecution, EnvironmentVariablesStandForKeys) {
  const std::vector<env::KeyOverride> keys = overrides_of({{"BLOCKEIGS_HALO_TRANSPORT", "ipc"},
                                                           {"BLOCKEIGS_HALO_PEER", "0"},
                                                           {"BLOCKEIGS_CUDA_AWARE_MPI", "1"},
                                                           {"BLOCKEIGS_HALO_PIECE_BYTES", "100"},
                                                           {"BLOCKEIGS_MPI_CHUNK_BYTES", "256"},
                                                           {"BLOCKEIGS_MEMORY_LIMIT_BYTES", ""}});
  ASSERT_EQ(keys.size(), 5u);
  EXPECT_EQ(keys[0].assignment, "execution.halo.transport=ipc");
  EXPECT_EQ(keys[0].origin, "BLOCKEIGS_HALO_TRANSPORT=ipc");
  EXPECT_EQ(keys[1].assignment, "execution.halo.peer=false");
  EXPECT_EQ(keys[2].assignment, "execution.halo.cuda_aware_mpi=true");
  EXPECT_EQ(keys[4].assignment, "execution.mpi_chunk_bytes=256");
  EXPECT_EQ(overrides_of({{"BLOCKEIGS_HALO_PEER", "yes"}})[0].assignment, "execution.halo.peer=true");
  EXPECT_EQ(overrides_of({{"BLOCKEIGS_CUDA_AWARE_MPI", "0"}})[0].assignment, "execution.halo.cuda_aware_mpi=false");
  EXPECT_TRUE(overrides_of({{"OMP_NUM_THREADS", "4"}}).empty());

  const ExecutionConfig e = environment_execution_config(keys);
  EXPECT_EQ(e.halo.transport, HaloTransport::peer);
  EXPECT_FALSE(e.halo.peer);
  EXPECT_EQ(e.halo.cuda_aware_mpi, std::optional<bool>(true));
  EXPECT_EQ(e.halo.piece_bytes, 100);
  EXPECT_EQ(e.mpi_chunk_bytes, 256);
  EXPECT_FALSE(e.memory_limit_bytes.has_value());
  EXPECT_EQ(environment_execution_config({}).mpi_chunk_bytes, default_mpi_chunk_bytes);
}

TEST(ConfigExecution, TheEnvironmentWinsOverTheFileAndSet) {
  const ExecutionConfig e = execution("execution: {halo: {transport: mpi, peer: true}, mpi_chunk_bytes: 4096}\n",
                                      {"execution.halo.transport=staged", "execution.mpi_chunk_bytes=2048"},
                                      {{"BLOCKEIGS_HALO_TRANSPORT", "nccl"}, {"BLOCKEIGS_HALO_PEER", "0"}});
  EXPECT_EQ(e.halo.transport, HaloTransport::nccl);
  EXPECT_FALSE(e.halo.peer);
  EXPECT_EQ(e.mpi_chunk_bytes, 2048);  // no variable: --set's
}

TEST(ConfigExecution, EnvironmentErrorsNameTheVariable) {
  EXPECT_EQ(error("", {}, {{"BLOCKEIGS_HALO_TRANSPORT", "infiniband"}}),
            "BLOCKEIGS_HALO_TRANSPORT=infiniband: execution.halo.transport must be auto, ipc, nccl, mpi or staged, "
            "got 'infiniband'");
  EXPECT_EQ(error("execution: {mpi_chunk_bytes: 64}\n", {}, {{"BLOCKEIGS_MPI_CHUNK_BYTES", "lots"}}),
            "BLOCKEIGS_MPI_CHUNK_BYTES=lots: execution.mpi_chunk_bytes must be an integer, got 'lots'");
  EXPECT_EQ(error("", {}, {{"BLOCKEIGS_MEMORY_LIMIT_BYTES", "-5"}}),
            "BLOCKEIGS_MEMORY_LIMIT_BYTES=-5: execution.memory_limit_bytes must be non-negative, got -5");
  try {
    environment_execution_config(overrides_of({{"BLOCKEIGS_HALO_PIECE_BYTES", "0"}}));
    ADD_FAILURE() << "BLOCKEIGS_HALO_PIECE_BYTES=0 was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "BLOCKEIGS_HALO_PIECE_BYTES=0: execution.halo.piece_bytes must be at least 1, got 0");
  }
}

// The process settings the library reads itself.
TEST(ConfigExecution, ProcessSettingsFromTheEnvironment) {
  const env::Environment none = env::read_environment(lookup({}));
  EXPECT_FALSE(none.omp_num_threads.has_value());
  EXPECT_FALSE(none.openblas_num_threads.has_value());
  EXPECT_FALSE(none.debug_sync);
  EXPECT_FALSE(none.launcher_rank.has_value());
  EXPECT_TRUE(none.keys.empty());
  const env::Environment set = env::read_environment(lookup(
      {{"OMP_NUM_THREADS", "3"}, {"OPENBLAS_NUM_THREADS", ""}, {"BLOCKEIGS_DEBUG_SYNC", "1"}, {"PMI_RANK", "2"}}));
  EXPECT_EQ(set.omp_num_threads, std::optional<std::string>("3"));
  EXPECT_EQ(set.openblas_num_threads, std::optional<std::string>(""));  // set, though empty
  EXPECT_TRUE(set.debug_sync);
  EXPECT_EQ(set.launcher_rank, std::optional<std::string>("2"));
  EXPECT_FALSE(env::read_environment(lookup({{"BLOCKEIGS_DEBUG_SYNC", "0"}})).debug_sync);
  EXPECT_FALSE(env::read_environment(lookup({{"BLOCKEIGS_DEBUG_SYNC", ""}})).debug_sync);
  EXPECT_EQ(env::read_environment(lookup({{"OMPI_COMM_WORLD_RANK", "0"}, {"PMI_RANK", "5"}})).launcher_rank,
            std::optional<std::string>("0"));
  EXPECT_FALSE(none.ompi_world_size.has_value());
  const env::Environment job =
      env::read_environment(lookup({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  EXPECT_EQ(job.ompi_world_size, std::optional<std::string>("4"));
  EXPECT_EQ(job.ompi_local_size, std::optional<std::string>("2"));
}

// Open MPI's ob1 where the launcher puts every rank on this node; the default elsewhere (several nodes,
// another launcher, no launcher).
TEST(ConfigExecution, OneNodeJobsTakeOb1) {
  auto pml = [](std::map<std::string, std::string> variables) {
    const char* p = apps::default_mpi_pml(env::read_environment(lookup(std::move(variables))));
    return p ? std::string(p) : std::string("none");
  };
  EXPECT_EQ(pml({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), "ob1");
  EXPECT_EQ(pml({{"OMPI_COMM_WORLD_SIZE", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}), "ob1");
  EXPECT_EQ(pml({{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), "none");
  EXPECT_EQ(pml({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}), "none");
  EXPECT_EQ(pml({}), "none");
}

}  // namespace
}  // namespace blockeigs::cfg
