// partition-bench: times the steps that distribute a randomly renumbered
// 7-point Laplacian on the ranks it is started with (host only): moving the
// rows to the natural numbering's ranges (a numbering given whole), PT-Scotch's
// graph partition (once) and moving the rows to it, each rank's band order,
// and moving the rows as loaded by the saved numbering (execution.partition_file
// without the file); beside the floor of a move: the largest rank's rows (row
// offsets, columns, values) once through memcpy. Each rank runs on its share of
// the node's cores (OMP_NUM_THREADS sets another count), as in the apps.
//   mpirun -np 2 partition-bench --grid 128 --reps 3
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/apps/bench_options.hpp"
#include "bench/apps/partition_variants.hpp"
#include "core/checks.hpp"
#include "config/run_config.hpp"
#include "io/generators/generators.hpp"
#include "io/renumbering.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/band_order.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/local_order.hpp"
#include "solver/operator/partition/renumber_columns.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: mpirun -np N partition-bench [--grid N] [--reps R] [--variants] [--threads T]\n"
    "Times moving the rows to the natural numbering, the graph partition (once), moving the rows to it, the band\n"
    "order and moving the rows as loaded by the saved numbering, for the 7-point Laplacian on an N^3 grid under a\n"
    "random renumbering (seed 1): the slowest rank's wall time of each, best and median of R (default 20), and\n"
    "its CPU time (user and system), beside one memcpy of the largest rank's rows.\n"
    "  --variants  first times Scotch's partition on every rank (PT-Scotch: default and speed-safety strategies)\n"
    "              and on rank 0 (1 and T threads), with the balance and halo each gives, and the band order\n"
    "              against Scotch's Gibbs-Poole-Stockmeyer with 3 and 1 passes\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

// This process's CPU time (user and system), which time slices given to
// other processes do not count: steadier than the wall time on a busy machine.
double cpu_seconds() {
  rusage used{};
  getrusage(RUSAGE_SELF, &used);
  return double(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
         1e-6 * double(used.ru_utime.tv_usec + used.ru_stime.tv_usec);
}

struct Time {
  double wall = 0, cpu = 0;  // the slowest rank's
};

Time timed(MPI_Comm comm, auto&& step) {
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
  const double start = MPI_Wtime(), cpu = cpu_seconds();
  step();
  const double wall = MPI_Wtime() - start;
  return {apps::slowest_rank(comm, wall), apps::slowest_rank(comm, cpu_seconds() - cpu)};
}

std::int64_t rows_bytes(const CsrRows& rows) {
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

// Best and median of the slowest rank's times.
void print(const char* what, const std::vector<Time>& times, const std::string& note = "") {
  std::vector<double> wall, cpu;
  for (const Time& t : times) {
    wall.push_back(t.wall);
    cpu.push_back(t.cpu);
  }
  std::printf("  %-34s %8.3f s best, %8.3f s median; CPU %8.3f s best%s\n", what,
              *std::min_element(wall.begin(), wall.end()), apps::median(wall),
              *std::min_element(cpu.begin(), cpu.end()), note.c_str());
}

// Each of this rank's rows' row in the natural numbering, and the natural
// numbering's balanced ranges: the numbering a perfect partition and order would give.
std::pair<solver::RowPartition, std::vector<std::int64_t>> natural_numbering(const io::GeneratorSpec& spec,
                                                                             const CsrRows& rows, int ranks) {
  io::GeneratorSpec natural = spec;
  natural.renumber = false;
  const io::RandomPermutation permutation(rows.global_rows, spec.renumber_seed);
  std::vector<std::int64_t> index(static_cast<std::size_t>(rows.local_rows()));
  for (std::int64_t i = 0; i < rows.local_rows(); ++i) index[i] = permutation.natural_of(rows.first_row + i);
  return {solver::RowPartition::balanced(io::generated_row_offsets(natural), ranks), std::move(index)};
}

// The benchmark's matrix: the 7-point Laplacian on a size^3 grid, its rows renumbered at random.
io::MatrixConfig renumbered_laplacian(std::int64_t size) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator.kind = io::GeneratorKind::laplacian_3d;
  config.generator.nx = config.generator.ny = config.generator.nz = size;
  config.generator.stencil = 7;
  config.generator.renumber = true;
  config.generator.renumber_seed = 1;
  return config;
}

// The largest rank's halo rows, and all ranks'. Collective.
std::array<long long, 2> halo_rows(const CsrRows& rows, MPI_Comm comm) {
  const long long mine = static_cast<long long>(
      solver::RemoteColumns(rows, rows.first_row, rows.first_row + rows.local_rows()).columns().size());
  std::array<long long, 2> halo = {0, 0};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &halo[0], 1, MPI_LONG_LONG, MPI_MAX, comm));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &halo[1], 1, MPI_LONG_LONG, MPI_SUM, comm));
  return halo;
}

void run(const apps::BenchOptions& options, MPI_Comm comm, int variant_threads) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  (void)solver::make_context(Backend::cpu, comm);  // each rank on its share of the node's cores, as in the apps
  const io::MatrixConfig config = renumbered_laplacian(options.size);
  const solver::DistributedRows loaded = solver::load_distributed_rows(config, comm);

  if (variant_threads > 0) apps::time_partition_variants(comm, loaded, variant_threads);
  std::vector<Time> natural, move, alone, order, saved;
  const auto [natural_ranges, natural_index] = natural_numbering(config.generator, loaded.rows, ranks);
  for (int rep = 0; rep < options.reps; ++rep) {
    solver::DistributedRows m = loaded;
    natural.push_back(timed(comm, [&] {
      solver::distribute_by_numbering(m, natural_ranges, natural_index, "the natural numbering", comm);
    }));
  }
  // PT-Scotch once (one rank: nothing to partition); the steps after it from copies.
  solver::DistributedRows partitioned = loaded;
  const Time partition_and_move =
      timed(comm, [&] { solver::distribute_rows(partitioned, PartitionMethod::graph, comm, LocalOrder::none); });
  const double partitioner = apps::slowest_rank(comm, partitioned.partitioning.partitioner_seconds);
  const std::array<long long, 2> halo = halo_rows(partitioned.rows, comm);
  if (variant_threads > 0) apps::time_band_orders(comm, partitioned.rows);
  solver::DistributedRows ordered;
  for (int rep = 0; rep < options.reps; ++rep) {
    if (ranks > 1) {
      solver::DistributedRows m = loaded;
      move.push_back(timed(comm, [&] {
        solver::distribute_by_numbering(m, partitioned.partition, partitioned.numbering.current_of_original(),
                                        "the partition", comm);
      }));
    }
    alone.push_back(timed(comm, [&] { (void)solver::band_order(partitioned.rows); }));
    ordered = partitioned;
    order.push_back(timed(comm, [&] { solver::order_rows_locally(ordered, LocalOrder::band, comm); }));
  }
  solver::MoveTimings steps;  // the last rep's
  for (int rep = 0; rep < options.reps; ++rep) {
    solver::DistributedRows m = loaded;
    saved.push_back(timed(comm, [&] {
      solver::distribute_by_numbering(m, ordered.numbering.current(), ordered.numbering.current_of_original(),
                                      "the saved numbering", comm, &steps);
    }));
    if (m.rows.col_indices != ordered.rows.col_indices || m.rows.values != ordered.rows.values)
      std::fprintf(stderr, "rank %d: the saved numbering gave other rows\n", rank);
  }
  apps::print_move_steps(comm, "moving by the saved numbering", steps);
  const std::int64_t largest_bytes = [&] {
    std::int64_t mine = rows_bytes(ordered.rows), most = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, comm));
    return most;
  }();
  const double floor = apps::slowest_rank(comm, memcpy_seconds(largest_bytes));
  if (rank != 0) return;
  std::printf("grid %lld^3 renumbered (7-point), %d ranks, largest rank's rows %.1f MB, %d reps\n",
              static_cast<long long>(options.size), ranks, largest_bytes / 1e6, options.reps);
  print("moving the rows to natural ranges", natural);
  if (ranks > 1) {
    std::printf("  %-34s %8.3f s; with the move CPU %.3f s (halo rows: largest rank %lld, all %lld)\n",
                "graph partition (as distribute_rows)", partitioner, partition_and_move.cpu, halo[0], halo[1]);
    print("moving the rows to its parts", move);
  }
  print("band order (the ordering alone)", alone);
  char note[96];
  std::snprintf(note, sizeof note, " (bandwidth %lld -> %lld)",
                static_cast<long long>(ordered.local_order.before.bandwidth),
                static_cast<long long>(ordered.local_order.after.bandwidth));
  print("band order (all of it)", order, note);
  print("moving by the saved numbering", saved);
  std::printf("  %-34s %8.3f s (%.1f GB/s)\n", "floor: one memcpy of the rows", floor, largest_bytes / floor / 1e9);
}

}  // namespace

// Takes --variants and --threads T out of argv: T (1 without --threads), or 0
// without --variants; -1 for a bad --threads.
int take_variant_flags(int& argc, char** argv) {
  bool variants = false;
  int threads = 1, kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--variants") {
      variants = true;
    } else if (flag == "--threads") {
      if (i + 1 >= argc) return -1;
      threads = std::atoi(argv[++i]);
      if (threads < 1) return -1;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return variants ? threads : 0;
}

int main(int argc, char** argv) {
  if (!init_mpi(&argc, &argv)) return 1;
  const int variant_threads = take_variant_flags(argc, argv);
  if (apps::answered_info(argc, argv, "partition-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  const std::optional<apps::BenchOptions> options =
      variant_threads < 0 ? std::nullopt
                          : apps::parse_bench_options(argc, argv, "--grid", 128, "partition-bench", usage);
  if (variant_threads < 0) std::fprintf(stderr, "partition-bench: --threads needs a positive integer\n");
  if (options) {
    try {
      run(*options, MPI_COMM_WORLD, variant_threads);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "partition-bench: %s\n", e.what());
      abort_mpi(MPI_COMM_WORLD, 1);
    }
  }
  finalize_mpi();
  return options ? 0 : 2;
}
