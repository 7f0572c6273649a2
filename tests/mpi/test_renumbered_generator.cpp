// The generators' `renumber` option through the distributed path, at np 1-4:
// each rank generates its own rows of the renumbered matrix, which passes the
// symmetry check, needs more halo rows than the natural numbering, and has
// the same eigenvalues (LOBPCG, 1e-10 relative).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "config/run_config.hpp"
#include "io/generators/generators.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs {
namespace {

io::MatrixConfig grid(bool renumber) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator.kind = io::GeneratorKind::laplacian_3d;
  config.generator.nx = 9;
  config.generator.ny = 8;
  config.generator.nz = 7;
  config.generator.stencil = 7;
  config.generator.renumber = renumber;
  config.generator.renumber_seed = 2024;
  return config;
}

int world_size() {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

struct Outcome {
  std::vector<double> eigenvalues;
  long long halo_rows = 0;  // summed over the ranks
};

Outcome solve(const solver::DistributedRows& matrix) {
  const auto context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, matrix.rows, matrix.partition);
  long long mine = A.halo_plan().halo_rows(), total = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  solver::LobpcgOptions options;
  options.k = 5;
  options.tolerance = 1e-8;
  options.max_iterations = 3000;
  const auto result = solver::lobpcg<double>(A, options);
  EXPECT_TRUE(result.all_converged());
  return {result.eigenvalues, total};
}

TEST(RenumberedGenerator, SameEigenvaluesMoreHaloStillSymmetric) {
  const solver::DistributedRows natural = solver::load_distributed_rows(grid(false), MPI_COMM_WORLD);
  const solver::DistributedRows renumbered = solver::load_distributed_rows(grid(true), MPI_COMM_WORLD);
  EXPECT_NE(renumbered.description.find("renumbered (seed 2024)"), std::string::npos) << renumbered.description;
  EXPECT_EQ(renumbered.global_nnz, natural.global_nnz);
  EXPECT_NO_THROW(solver::check_symmetric(MPI_COMM_WORLD, renumbered.rows, renumbered.partition, "renumbered"));

  const Outcome a = solve(natural), b = solve(renumbered);
  ASSERT_EQ(a.eigenvalues.size(), b.eigenvalues.size());
  const std::vector<double> exact = io::laplacian_eigenvalues(grid(false).generator);
  for (std::size_t j = 0; j < a.eigenvalues.size(); ++j) {
    EXPECT_LE(std::abs(a.eigenvalues[j] - b.eigenvalues[j]), 1e-10 * std::abs(a.eigenvalues[j])) << "pair " << j;
    EXPECT_LE(std::abs(b.eigenvalues[j] - exact[j]), 1e-10 * exact[j]) << "pair " << j;
  }
  if (world_size() == 1) {
    EXPECT_EQ(b.halo_rows, 0);
  } else {
    // A random numbering scatters every row's neighbours over all ranks.
    EXPECT_GT(b.halo_rows, 2 * a.halo_rows) << "natural " << a.halo_rows << ", renumbered " << b.halo_rows;
  }
}

}  // namespace
}  // namespace blockeigs
