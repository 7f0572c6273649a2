// output-bench: times writing a result file's large block the way the apps
// write it (block_in_input_order, then write_distributed_output: rank 0
// creates the file, the ranks write their rows) beside the floor, the same
// bytes written by rank 0 with plain write() calls to a file in the same
// directory (the page cache's bandwidth; with --sync, each file is also
// flushed to the disk with fdatasync, the result file included). Each rank
// runs on its share of the node's cores, and the block starts on the GPU where
// the backend is CUDA, as in the apps; "set-up" is the copy to the host and the
// exchange's plan.
//   mpirun -np R output-bench [--rows N] [--width K] [--reps R] [--fp32] [--backend B] [--reverse | --shuffle]
//                             [--serial] [--sync] [--over] [--path P]
// --over writes each rep's file over the last one's, as a rerun's result or a
// checkpoint replaces the older file (otherwise each rep starts with none).
// --reverse numbers the operator's rows in the reverse order of the input's,
// so that the rows move to other ranks before they are written; --shuffle in a
// random order (seed 1), as a graph partition of a randomly numbered matrix
// leaves them. --serial writes as with serial HDF5 (each rank its rows straight into the file), even
// where HDF5 is parallel.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/apps/bench_options.hpp"
#include "apps/cli.hpp"
#include "apps/run/output/distributed_output.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "core/checks.hpp"
#include "dense/memory.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/row_numbering.hpp"
#include "solver/plan/memory_plan.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: output-bench [--rows N] [--width K] [--reps R] [--fp32] [--backend auto|cpu|cuda] [--reverse | --shuffle]\n"
    "                    [--serial] [--sync] [--over] [--path P]\n"
    "Times writing an N x K block to an HDF5 result file from every rank, beside writing its bytes with write().\n"
    "  --backend   where the block starts: cuda on the GPU, cpu on the host (default auto, as the apps)\n"
    "  --reverse   the operator numbers the rows in reverse: they move to other ranks first\n"
    "  --shuffle   the operator numbers the rows in a random order (seed 1): most move to other ranks first\n"
    "  --serial    each rank writes its rows straight into the file, as with serial HDF5 (also where it is parallel)\n"
    "  --sync      fdatasync the files (the disk's bandwidth, not the page cache's)\n"
    "  --over      each rep writes over the last one's file (a rerun, a checkpoint); else each starts with none\n"
    "  --path P    the result file (default output-bench.h5)\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

struct Extra {
  bool reverse = false, shuffle = false, serial = false, sync = false, over = false;
  std::string path = "output-bench.h5";
};

// The numbering of `partition`'s rows when the operator's row g is the input's row N - 1 - g.
solver::RowNumbering reversed(MPI_Comm comm, const solver::RowPartition& partition) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = partition.global_rows(), begin = partition.begin(rank), rows = partition.rows(rank);
  std::vector<std::int64_t> original_of_local(static_cast<std::size_t>(rows)), current_of_original(original_of_local);
  for (std::int64_t i = 0; i < rows; ++i) original_of_local[i] = current_of_original[i] = n - 1 - (begin + i);
  return solver::RowNumbering(comm, partition, partition, std::move(original_of_local), std::move(current_of_original));
}

// The numbering of `partition`'s rows when the operator's row g is the input's row order[g], order a random
// permutation (the same on every rank).
solver::RowNumbering shuffled(MPI_Comm comm, const solver::RowPartition& partition) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = partition.global_rows(), begin = partition.begin(rank), rows = partition.rows(rank);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  std::vector<std::int64_t> original_of_local(order.begin() + begin, order.begin() + begin + rows);
  std::vector<std::int64_t> current_of_original(static_cast<std::size_t>(rows));
  for (std::int64_t g = 0; g < n; ++g)
    if (order[g] >= begin && order[g] < begin + rows) current_of_original[order[g] - begin] = g;
  return solver::RowNumbering(comm, partition, partition, std::move(original_of_local), std::move(current_of_original));
}

// Rank 0 writes `bytes` to `path` in 64 MiB pieces: the floor of a file write here.
double plain_write_seconds(const std::string& path, std::int64_t bytes, bool sync) {
  const std::int64_t piece = std::int64_t{64} << 20;
  std::vector<char> data(static_cast<std::size_t>(std::min(bytes, piece)), 1);
  const double start = MPI_Wtime();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  for (std::int64_t done = 0; done < bytes;) {
    const ssize_t wrote = write(fd, data.data(), static_cast<std::size_t>(std::min(piece, bytes - done)));
    if (wrote <= 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    done += wrote;
  }
  if (sync) fdatasync(fd);
  close(fd);
  const double seconds = MPI_Wtime() - start;
  unlink(path.c_str());
  return seconds;
}

void sync_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    fdatasync(fd);
    close(fd);
  }
}

template <class T>
void run(const apps::BenchOptions& options, const Extra& extra, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const solver::RowPartition partition = solver::RowPartition::uniform(options.size, ranks);
  const solver::RowNumbering numbering = extra.reverse   ? reversed(comm, partition)
                                         : extra.shuffle ? shuffled(comm, partition)
                                                         : solver::RowNumbering::identity(comm, partition);
  apps::set_serial_output_for_tests(extra.serial);
  // As the apps run: each rank on its share of the node's cores, the block where the backend keeps it.
  const dense::Context context = solver::make_context(options.backend, comm);
  std::vector<T> host(static_cast<std::size_t>(partition.rows(rank) * options.width));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<T>(i % 1000);
  dense::DenseBlock<T> X(context.space(), partition.rows(rank), options.width);
  dense::copy_bytes(X.data(), context.space(), host.data(), Space::host, sizeof(T) * host.size());
  const std::int64_t bytes = 8 * options.size * options.width;
  if (rank == 0)
    std::printf("output-bench: %lld x %lld %s block (%s in the file) %s, %d rank%s, rows %s, %s%s%s\n",
                static_cast<long long>(options.size), static_cast<long long>(options.width),
                sizeof(T) == 8 ? "fp64" : "fp32", solver::format_bytes(double(bytes)).c_str(),
                context.space() == Space::device ? "on the GPU" : "on the host", ranks, ranks > 1 ? "s" : "",
                extra.reverse   ? "reversed"
                : extra.shuffle ? "shuffled"
                                : "in the input's order",
                extra.sync ? "fdatasync" : "page cache", extra.over ? ", each over the last" : "",
                extra.serial ? ", as serial HDF5" : "");
  std::vector<double> gather, write, floor;
  for (int rep = 0; rep < options.reps; ++rep) {
    if (!extra.over || rep == 0) std::remove(extra.path.c_str());
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
    const double start = MPI_Wtime();
    // The block's set-up (the copy to the host, the exchange's plan) apart from the pieces' exchange.
    apps::DistributedBlock block = apps::block_in_input_order("/X", X.cview(), numbering, comm);
    double setup = block.seconds;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, comm));
    apps::OutputTimes times = apps::write_distributed_output(
        comm, extra.path, [](io::Hdf5Writer& w) { w.attribute("/", "app", "output-bench"); }, {std::move(block)});
    if (extra.sync && rank == 0) sync_file(extra.path);
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
    const double total = MPI_Wtime() - start;
    gather.push_back(times.gather);
    write.push_back(total - times.gather);
    double plain = 0;
    if (rank == 0) {
      std::remove((extra.path + ".floor").c_str());  // a fresh file: the page cache's speed
      plain = plain_write_seconds(extra.path + ".floor", bytes, extra.sync);
    }
    floor.push_back(plain);
    const apps::ExchangeSeconds steps = apps::take_exchange_seconds();
    double by_step[5] = {steps.to_host, steps.plan, steps.pack, steps.exchange, steps.unpack};
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, by_step, 5, MPI_DOUBLE, MPI_MAX, comm));
    if (rank == 0)
      std::printf(
          "  rep %2d: gather %.3f s (set-up %.3f; to the host %.3f, plan %.3f, pack %.3f, exchange %.3f, "
          "unpack %.3f), write %.3f s (%.2f GB/s); plain write %.3f s (%.2f GB/s)\n",
          rep, times.gather, setup, by_step[0], by_step[1], by_step[2], by_step[3], by_step[4], total - times.gather,
          bytes / (total - times.gather) / 1e9, plain, bytes / plain / 1e9);
  }
  std::remove(extra.path.c_str());
  if (rank == 0)
    std::printf("median: gather %.3f s, write %.3f s; plain write %.3f s\n", apps::median(gather), apps::median(write),
                apps::median(floor));
}

}  // namespace

int main(int argc, char** argv) {
  if (!init_mpi(&argc, &argv)) return 1;
  if (apps::answered_info(argc, argv, "output-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  // The bench's own flags are taken out; the rest are the shared ones.
  Extra extra;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--reverse")
      extra.reverse = true;
    else if (flag == "--shuffle")
      extra.shuffle = true;
    else if (flag == "--serial")
      extra.serial = true;
    else if (flag == "--sync")
      extra.sync = true;
    else if (flag == "--over")
      extra.over = true;
    else if (flag == "--path" && i + 1 < argc)
      extra.path = argv[++i];
    else
      rest.push_back(argv[i]);
  }
  // 2,097,152 rows and 16 columns: the 128^3 Laplacian's eigenvectors at k = 16.
  const std::optional<apps::BenchOptions> options =
      apps::parse_bench_options(static_cast<int>(rest.size()), rest.data(), "--rows", 2097152, "output-bench", usage);
  int code = options ? 0 : 2;
  if (options) {
    try {
      if (options->fp32)
        run<float>(*options, extra, MPI_COMM_WORLD);
      else
        run<double>(*options, extra, MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "output-bench: %s\n", e.what());
      code = 1;
    }
  }
  finalize_mpi();
  return code;
}
