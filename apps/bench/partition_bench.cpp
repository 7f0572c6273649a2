// partition-bench: times the steps that distribute a randomly renumbered
// 7-point Laplacian on the ranks it is started with (host only): PT-Scotch's
// graph partition, moving the rows to it, each rank's band order, and moving
// freshly loaded rows by the saved numbering (execution.partition_file
// without the file), beside the floor of a move: the largest rank's rows
// (row offsets, columns, values) once through memcpy.
//   mpirun -np 2 partition-bench --grid 128
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/bench_options.hpp"
#include "core/checks.hpp"
#include "io/config.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/local_order.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: mpirun -np N partition-bench [--grid N] [--reps R]\n"
    "Times the graph partition, moving the rows, the band order and moving freshly loaded rows by the saved\n"
    "numbering for the 7-point Laplacian on an N^3 grid under a random renumbering (seed 1), the slowest rank's\n"
    "time of each (median of R), beside one memcpy of the largest rank's rows.\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

double slowest(MPI_Comm comm, double mine) {
  double out = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, comm));
  return out;
}

double timed(MPI_Comm comm, auto&& step) {
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
  const double start = MPI_Wtime();
  step();
  return slowest(comm, MPI_Wtime() - start);
}

std::int64_t rows_bytes(const io::CsrRows& rows) {
  return static_cast<std::int64_t>(rows.row_offsets.size() * sizeof(std::int64_t) +
                                   rows.col_indices.size() * sizeof(std::int64_t) +
                                   rows.values.size() * sizeof(double));
}

// Seconds for one memcpy of `bytes` (warm buffers: the copy, not the page faults).
double memcpy_seconds(std::int64_t bytes) {
  std::vector<char> from(static_cast<std::size_t>(bytes), 1), to(from.size(), 0);
  std::memcpy(to.data(), from.data(), from.size());
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    const double start = MPI_Wtime();
    std::memcpy(to.data(), from.data(), from.size());
    times.push_back(MPI_Wtime() - start);
  }
  return apps::median(times);
}

void run(const apps::BenchOptions& options, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator.kind = io::GeneratorKind::laplacian_3d;
  config.generator.nx = config.generator.ny = config.generator.nz = options.size;
  config.generator.stencil = 7;
  config.generator.renumber = true;
  config.generator.renumber_seed = 1;

  std::vector<double> partitioner, move, order, saved;
  solver::DistributedRows ordered;
  for (int rep = 0; rep < options.reps; ++rep) {
    solver::DistributedRows m = solver::load_distributed_rows(config, comm);
    timed(comm, [&] { solver::distribute_rows(m, PartitionMethod::graph, comm, LocalOrder::none); });
    partitioner.push_back(slowest(comm, m.partitioning.partitioner_seconds));
    move.push_back(slowest(comm, m.partitioning.seconds - m.partitioning.partitioner_seconds));
    order.push_back(timed(comm, [&] { solver::order_rows_locally(m, LocalOrder::band, comm); }));
    ordered = std::move(m);
  }
  for (int rep = 0; rep < options.reps; ++rep) {
    solver::DistributedRows m = solver::load_distributed_rows(config, comm);
    saved.push_back(timed(comm, [&] {
      solver::distribute_by_numbering(m, ordered.numbering.current(), ordered.numbering.current_of_original(),
                                      "bench", comm);
    }));
    if (m.rows.col_indices != ordered.rows.col_indices || m.rows.values != ordered.rows.values)
      std::fprintf(stderr, "rank %d: the saved numbering gave other rows\n", rank);
  }
  const std::int64_t largest_bytes = [&] {
    std::int64_t mine = rows_bytes(ordered.rows), most = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, comm));
    return most;
  }();
  const double floor = slowest(comm, memcpy_seconds(largest_bytes));
  if (rank == 0) {
    std::printf("grid %lld^3 renumbered, %d ranks, largest rank's rows %.1f MB, median of %d\n",
                static_cast<long long>(options.size), ranks, largest_bytes / 1e6, options.reps);
    std::printf("  graph partition (PT-Scotch)   %8.3f s\n", apps::median(partitioner));
    std::printf("  moving the rows               %8.3f s\n", apps::median(move));
    std::printf("  band order                    %8.3f s  (bandwidth %lld -> %lld)\n", apps::median(order),
                static_cast<long long>(ordered.local_order.before.bandwidth),
                static_cast<long long>(ordered.local_order.after.bandwidth));
    std::printf("  moving by the saved numbering %8.3f s\n", apps::median(saved));
    std::printf("  floor: one memcpy of the rows %8.3f s (%.1f GB/s)\n", floor, largest_bytes / floor / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!init_mpi(&argc, &argv)) return 1;
  if (apps::answered_info(argc, argv, "partition-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  const std::optional<apps::BenchOptions> options =
      apps::parse_bench_options(argc, argv, "--grid", 128, "partition-bench", usage);
  if (options) {
    try {
      run(*options, MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "partition-bench: %s\n", e.what());
      abort_mpi(MPI_COMM_WORLD, 1);
    }
  }
  finalize_mpi();
  return options ? 0 : 2;
}
