// The k smallest eigenpairs of a symmetric matrix from a file, through the
// installed library: the rows read on every rank, checked for symmetry, the
// distributed operator on the GPU where every rank sees one (else the CPU),
// LOBPCG with a Chebyshev preconditioner, the pairs printed by rank 0.
//
//   mpirun -np 2 ./eigs matrix.mtx.gz 6      (or an HDF5 file: matrix.h5, group /A)
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "dense/context.hpp"
#include "io/matrix_config.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  using namespace blockeigs;
  int rank = 0, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: %s MATRIX.mtx[.gz]|MATRIX.h5 K\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  try {
    // Every call below is collective: an error on one rank is thrown on all of them.
    io::MatrixConfig matrix;
    matrix.file = argv[1];
    matrix.source = matrix.file.ends_with(".h5") ? io::MatrixSource::hdf5 : io::MatrixSource::matrix_market;
    const solver::DistributedRows rows = solver::load_distributed_rows(matrix, MPI_COMM_WORLD);
    const dense::Context context = solver::make_context(Backend::automatic, MPI_COMM_WORLD);
    solver::check_symmetric(MPI_COMM_WORLD, rows.rows, rows.partition, rows.description);
    solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, rows.rows, rows.partition);

    solver::LobpcgOptions options;  // the defaults: relative tolerance 1e-6, the smallest end
    options.k = std::stoi(argv[2]);
    solver::ChebyshevPreconditioner<double> chebyshev(A, solver::ChebyshevOptions{});  // for the smallest end
    const solver::LobpcgResult<double> result = solver::lobpcg(A, options, &chebyshev);

    if (rank == 0) {
      std::printf("%s: %d iterations, %s\n", rows.description.c_str(), result.iterations,
                  solver::to_string(result.stop));
      for (int j = 0; j < options.k; ++j)
        std::printf("%3d  %.12e  relative residual %.2e\n", j, result.eigenvalues[j], result.relative_residuals[j]);
    }
    status = result.all_converged() ? 0 : 3;
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
