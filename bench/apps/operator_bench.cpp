// operator-bench: times the distributed operator's apply on the ranks it is
// started with (one GPU each, or the CPU backend) and splits the time into
// pack, local SpMM, communication wait, unpack and halo SpMM, plus the overlap
// achieved between communication and the local multiply.
//   mpirun -np 2 operator-bench --grid 256 --width 16
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/apps/bench_options.hpp"
#include "apps/environment.hpp"
#include "core/checks.hpp"
#include "config/run_config.hpp"
#include "io/generators/generators.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: mpirun -np N operator-bench [--grid N] [--width K] [--reps R] [--backend cpu|cuda|auto] [--fp32]\n"
    "                                   [--ld L --column C]\n"
    "Times Y = A X for the 7-point Laplacian on an N^3 grid and a K-column block; with --ld and --column,\n"
    "X and Y are columns C to C + K - 1 of blocks of L columns (as LOBPCG multiplies its search block).\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

// The slowest rank's time for one call of `step`, on every rank.
template <class Step>
double timed(MPI_Comm comm, const dense::Context& context, Step&& step) {
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
  const double start = MPI_Wtime();
  step();
  context.synchronize();
  double local = MPI_Wtime() - start, slowest = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
  return slowest;
}

template <class T>
void run(const apps::BenchOptions& options, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const dense::Context context = solver::make_context(options.backend, comm);
  // execution.halo and mpi_chunk_bytes as the environment sets them (core/env_overrides.hpp).
  const cfg::ExecutionConfig execution = cfg::environment_execution_config(apps::environment_overrides(comm));
  const apps::MpiChunkLimit chunk_limit(execution.mpi_chunk_bytes);
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, options.size, options.size, options.size, 7};
  const auto offsets = io::generated_row_offsets(spec);
  const auto partition = solver::RowPartition::balanced(offsets, ranks);
  solver::DistributedOperator<T> op(comm, context, io::generate_rows(spec, partition.begin(rank), partition.end(rank)),
                                    partition, Algorithm::automatic, execution.halo);
  const std::int64_t m = op.local_rows(), k = options.width, ld = options.ld;
  std::vector<T> host(static_cast<std::size_t>(m * ld));
  for (std::int64_t e = 0; e < m * ld; ++e) host[e] = T(1) + T(e % 7) / T(8);  // never time on zeros
  dense::DenseBlock<T> X_block(context.space(), m, ld), Y_block(context.space(), m, ld);
  dense::copy_bytes(X_block.data(), context.space(), host.data(), Space::host, sizeof(T) * host.size());
  // The K columns from --column (the whole blocks by default).
  const dense::DenseView<T> x_view{context.space(), m, k, ld, X_block.data() + options.column};
  const dense::DenseView<T> y_view{context.space(), m, k, ld, Y_block.data() + options.column};

  for (int i = 0; i < 3; ++i) op.apply(T(1), x_view, T(0), y_view);
  std::vector<double> full, exchange, multiply;
  for (int i = 0; i < options.reps; ++i) {
    full.push_back(timed(comm, context, [&] { op.apply(T(1), x_view, T(0), y_view); }));
    exchange.push_back(timed(comm, context, [&] { op.exchange_only(x_view); }));
    multiply.push_back(timed(comm, context, [&] { op.multiply_only(T(1), x_view, T(0), y_view); }));
  }
  op.set_profiling(true);
  op.reset_timings();
  for (int i = 0; i < options.reps; ++i) timed(comm, context, [&] { op.apply(T(1), x_view, T(0), y_view); });
  const solver::ApplyTimings& t = op.timings();
  double parts[6] = {t.pack, t.local_spmm, t.wait, t.unpack, t.halo_spmm, t.total}, worst[6];
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(parts, worst, 6, MPI_DOUBLE, MPI_MAX, 0, comm));
  long long halo = op.halo_plan().halo_rows(), max_halo = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(&halo, &max_halo, 1, MPI_LONG_LONG, MPI_MAX, 0, comm));

  const double f = apps::median(full), e = apps::median(exchange), mu = apps::median(multiply);
  // Overlap: how much of the shorter of communication and multiply was hidden.
  const double overlap = std::clamp((e + mu - f) / std::max(1e-12, std::min(e, mu)), 0.0, 1.0);
  if (rank == 0) {
    const double per = 1e3 / t.calls;
    std::printf(
        "operator-bench: 7-point Laplacian %lld^3 (%lld rows), width %lld at column %lld of %lld, %s, "
        "%d rank(s), %s%s\n",
        (long long)options.size, (long long)partition.global_rows(), (long long)k, (long long)options.column,
        (long long)ld, sizeof(T) == 8 ? "fp64" : "fp32", ranks, context.space() == Space::device ? "cuda" : "cpu",
        ranks > 1 ? (", halo " + op.halo_transport()).c_str() : "");
    std::printf("  apply (median of %d)        %9.3f ms\n", options.reps, f * 1e3);
    std::printf("  exchange only               %9.3f ms   (max halo rows per rank %lld)\n", e * 1e3, max_halo);
    std::printf("  multiply only               %9.3f ms\n", mu * 1e3);
    std::printf("  overlap achieved            %9.0f %%\n", overlap * 100);
    std::printf("  profiled split (slowest rank, synchronised per phase, mean per apply):\n");
    std::printf("    pack %.3f  local SpMM %.3f  wait %.3f  unpack %.3f  halo SpMM %.3f  total %.3f ms\n",
                worst[0] * per, worst[1] * per, worst[2] * per, worst[3] * per, worst[4] * per, worst[5] * per);
    std::printf("CSV,operator,%lld,%lld,%s,%d,%.6f,%.6f,%.6f,%.3f,%lld,%lld\n", (long long)options.size, (long long)k,
                sizeof(T) == 8 ? "fp64" : "fp32", ranks, f * 1e3, e * 1e3, mu * 1e3, overlap, (long long)ld,
                (long long)options.column);
  }
}

}  // namespace

int main(int argc, char** argv) {
  apps::set_nccl_defaults();
  if (!init_mpi(&argc, &argv)) return 1;
  if (apps::answered_info(argc, argv, "operator-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  const std::optional<apps::BenchOptions> options =
      apps::parse_bench_options(argc, argv, "--grid", 128, "operator-bench", usage, true);
  if (options) {
    try {
      if (options->fp32)
        run<float>(*options, MPI_COMM_WORLD);
      else
        run<double>(*options, MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "operator-bench: %s\n", e.what());
      abort_mpi(MPI_COMM_WORLD, 1);
    }
  }
  finalize_mpi();
  return options ? 0 : 2;
}
