#include "apps/eigs_run.hpp"

#include <cstdio>
#include <vector>

#include "apps/app_main.hpp"
#include "apps/summary.hpp"
#include "io/config.hpp"
#include "solver/collective.hpp"
#include "solver/device_selection.hpp"
#include "solver/distributed_operator.hpp"
#include "solver/load_matrix.hpp"

namespace blockeigs::apps {
namespace {

// Rank-count independent values in [-1, 1) from (seed, global row, column).
double hashed_value(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(row) * 0xbf58476d1ce4e5b9ull +
                    static_cast<std::uint64_t>(col) * 0x94d049bb133111ebull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}

template <class T>
int run_with(const io::EigsConfig& config, const solver::DistributedRows& matrix, const spmm::Context& context,
             MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  solver::DistributedOperator<T> op(comm, context, matrix.rows, matrix.partition,
                                    config.execution.spmm_algorithm);
  const int k = config.eigensolver.k;
  const std::int64_t width = config.eigensolver.block_size > 0 ? config.eigensolver.block_size : k;
  const std::string summary = distribution_summary(matrix, op, config.execution, width);
  if (rank == 0) std::printf("block-eigs %s\n%s", BLOCKEIGS_VERSION, summary.c_str());

  // One timed apply of a seeded block of the solver's width: checks the whole
  // distributed path (halo exchange included) before any solve.
  const std::int64_t m = op.local_rows();
  spmm::DenseBlock<T> host_x(Space::host, m, width);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < width; ++j)
      host_x.data()[i * width + j] = static_cast<T>(hashed_value(config.eigensolver.seed, op.first_row() + i, j));
  spmm::DenseBlock<T> x(context.space(), m, width), y(context.space(), m, width);
  spmm::copy_bytes(x.data(), context.space(), host_x.data(), Space::host, sizeof(T) * m * width);
  op.apply(T(1), x.view(), T(0), y.view());  // warm-up: library handles, buffers
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  op.apply(T(1), x.view(), T(0), y.view());
  context.synchronize();
  double seconds = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank == 0)
    std::printf("operator   one apply of a %lld-column block: %.3f ms\n", static_cast<long long>(width),
                slowest * 1e3);
  return exit_ok;
}

}  // namespace

int run_eigs(const std::string& config_path, MPI_Comm comm) {
  const io::EigsConfig config = solver::collectively(comm, [&] { return io::read_eigs_config(config_path); });
  const spmm::Context context = solver::make_context(config.execution.backend, comm);
  const solver::DistributedRows matrix = solver::load_distributed_rows(config.matrix, comm);
  if (config.execution.spmm_precision == Precision::fp32) return run_with<float>(config, matrix, context, comm);
  return run_with<double>(config, matrix, context, comm);
}

}  // namespace blockeigs::apps
