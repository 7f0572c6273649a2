// The 3 smallest eigenpairs of a 2D Laplacian by LOBPCG through the installed
// library, checked against the closed form. Exit 1 when one is wrong.
#include <mpi.h>

#include <cmath>
#include <cstdio>

#include "io/generators.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "dense/context.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  using namespace blockeigs;
  int rank = 0, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    io::MatrixConfig matrix;
    matrix.generator = {.kind = io::GeneratorKind::laplacian_2d, .nx = 20, .ny = 16, .stencil = 5};
    const solver::DistributedRows rows = solver::load_distributed_rows(matrix, MPI_COMM_WORLD);
    const spmm::Context context = spmm::Context::host();
    solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, rows.rows, rows.partition);
    solver::LobpcgOptions options;
    options.k = 3;
    options.tolerance = 1e-8;
    const solver::LobpcgResult<double> result = solver::lobpcg(A, options);
    if (rank == 0)  // the answer at the top, the diagnostics in stats
      std::printf("%d iterations, %d restarts, %.3f s\n", result.iterations, result.stats.restarts,
                  result.stats.timings.total);
    const std::vector<double> exact = io::laplacian_eigenvalues(matrix.generator);
    for (int j = 0; j < options.k; ++j) {
      const bool ok = std::abs(result.eigenvalues[j] - exact[j]) <= 1e-10 * exact[j];
      wrong += ok ? 0 : 1;
      if (rank == 0)
        std::printf("%d  %.15f  exact %.15f  %s\n", j, result.eigenvalues[j], exact[j], ok ? "ok" : "WRONG");
    }
  }
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
