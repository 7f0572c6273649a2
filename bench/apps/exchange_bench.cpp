// exchange-bench: times large_alltoallv, the one-time all-to-all of the
// set-up and output (moving rows, the symmetry check, gathering results),
// through node memory (solver/base/node_alltoallv.hpp, at any thread count;
// large_alltoallv takes it from 4 threads a rank) and through MPI, alternated,
// beside one memcpy of a rank's bytes on one thread. The bytes are checked. Each rank
// runs on its share of the node's cores, as in the apps; the buffers are
// touched before the first rep.
//   mpirun -np 2 exchange-bench [--mib M] [--reps R]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/apps/bench_options.hpp"
#include "core/checks.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/base/node_alltoallv.hpp"
#include "solver/operator/device_selection.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: mpirun -np N exchange-bench [--mib M] [--reps R]\n"
    "Times an all-to-all of M MiB a rank (default 512; an equal share to every rank, its own included) through\n"
    "node memory and through MPI, alternated: the slowest rank's wall time, best and median of R (default 20).\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

void run(const apps::BenchOptions& options, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const int reps = options.reps;
  (void)solver::make_context(Backend::cpu, comm);  // each rank on its share of the node's cores
  const std::int64_t each = (options.size << 20) / ranks;
  const std::vector<std::int64_t> bytes(static_cast<std::size_t>(ranks), each);
  std::vector<char> send(static_cast<std::size_t>(each * ranks)), recv(send.size()), copy(send.size());
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<char>(i * 131 + rank);
  std::memset(recv.data(), 0, recv.size());
  std::memset(copy.data(), 0, copy.size());
  const bool on_node = solver::all_ranks_on_one_node(comm);
  solver::set_node_memory_exchanges(false);  // large_alltoallv through MPI
  std::vector<double> node, mpi, memcpy_seconds;
  for (int r = 0; r < reps; ++r)
    for (const bool through_node : {true, false}) {
      if (through_node && !on_node) continue;
      BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
      double start = MPI_Wtime();
      if (through_node)  // whatever the threads (large_alltoallv takes this path from 4 a rank)
        solver::node_alltoallv(comm, send.data(), bytes, recv.data(), bytes, solver::node_alltoallv_slot_bytes(ranks));
      else
        solver::large_alltoallv(comm, send.data(), bytes, recv.data(), bytes);
      (through_node ? node : mpi).push_back(apps::slowest_rank(comm, MPI_Wtime() - start));
      if (through_node) {
        start = MPI_Wtime();
        std::memcpy(copy.data(), send.data(), send.size());
        memcpy_seconds.push_back(apps::slowest_rank(comm, MPI_Wtime() - start));
      }
    }
  solver::set_node_memory_exchanges(true);
  // What rank 0 received from the last rank: its pattern, checked.
  const std::int64_t from = (ranks - 1) * each;
  for (std::int64_t i = 0; i < each; i += 4099)
    if (recv[from + i] != static_cast<char>((rank * each + i) * 131 + ranks - 1))
      throw std::runtime_error("byte " + std::to_string(from + i) + " received wrong");
  if (rank == 0) {
    const double gb = double(each) * (ranks - 1) * 1e-9;  // sent to other ranks, per rank
    auto line = [&](const char* name, const std::vector<double>& s) {
      const double best = *std::min_element(s.begin(), s.end());
      std::printf("%-12s best %.4f s, median %.4f s (%.2f GB/s to the other ranks)\n", name, best, apps::median(s),
                  gb / best);
    };
    std::printf("exchange-bench: %lld MiB a rank, %d ranks%s, %d threads a rank, best of %d\n",
                static_cast<long long>(options.size), ranks, on_node ? " on one node" : " (not all on one node)",
                omp_get_max_threads(), reps);
    if (on_node) line("node memory", node);
    line("MPI", mpi);
    if (on_node) line("memcpy", memcpy_seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!init_mpi(&argc, &argv)) return 1;
  if (apps::answered_info(argc, argv, "exchange-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  const std::optional<apps::BenchOptions> options =
      apps::parse_bench_options(argc, argv, "--mib", 512, "exchange-bench", usage);
  if (options) {
    try {
      run(*options, MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "exchange-bench: %s\n", e.what());
      abort_mpi(MPI_COMM_WORLD, 1);
    }
  }
  finalize_mpi();
  return options ? apps::exit_ok : apps::exit_usage;
}
