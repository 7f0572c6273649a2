// block-eigs and block-cg at np 1-4 with execution.partition: graph on a
// randomly numbered grid, each rank's rows kept in the order they came or
// ordered by band (execution.local_order): what the user reads and writes
// stays in the input's numbering. Start blocks and right-hand sides from HDF5 are read in
// it, written eigenvectors are eigenvectors of the matrix as the input
// numbers it, and block CG's X solves the input's system column by column.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "apps/app_main.hpp"
#include "apps/run/cg_run.hpp"
#include "apps/run/eigs_run.hpp"
#include "apps/run/steps/matrix_setup.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_dense.hpp"
#include "io/hdf5_writer.hpp"
#include "io/renumbering.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/graph_partition.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t nx = 16, ny = 12, n = nx * ny;
constexpr std::uint64_t kSeed = 7;
const std::string kGrid = "{type: laplacian_2d, nx: 16, ny: 12, renumber: {seed: 7}}";

void write_block(const std::string& path, const char* dataset, std::int64_t cols, const std::vector<double>& values) {
  if (test::mpi_rank() == 0) {
    io::Hdf5Writer writer(path, true);
    writer.write_matrix(dataset, n, cols, values);
    writer.close();
    io::commit_output(path);
  }
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

// The grid as the input numbers it (renumbered), whole.
CsrRows input_matrix() {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, nx, ny, 1, 5};
  spec.renumber = true;
  spec.renumber_seed = kSeed;
  return io::generate_rows(spec, 0, n);
}

std::vector<double> times(const CsrRows& A, const std::vector<double>& X, std::int64_t cols) {
  std::vector<double> Y(X.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = A.row_offsets[i]; k < A.row_offsets[i + 1]; ++k)
      for (std::int64_t j = 0; j < cols; ++j) Y[i * cols + j] += A.values[k] * X[A.col_indices[k] * cols + j];
  return Y;
}

// The three lowest eigenvectors of the grid, modes (1,1), (2,1), (1,2), in
// the input's numbering (grid point x + nx y is natural row x + nx y).
std::vector<double> lowest_modes() {
  const io::RandomPermutation perm(n, kSeed);
  const int modes[3][2] = {{1, 1}, {2, 1}, {1, 2}};
  std::vector<double> X(static_cast<std::size_t>(n * 3));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t natural = perm.natural_of(i), x = natural % nx, y = natural / nx;
    for (int j = 0; j < 3; ++j)
      X[i * 3 + j] = std::sin(modes[j][0] * std::numbers::pi * double(x + 1) / (nx + 1)) *
                     std::sin(modes[j][1] * std::numbers::pi * double(y + 1) / (ny + 1));
  }
  return X;
}

class PartitionApps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!solver::graph_partitioner_compiled()) GTEST_SKIP() << "built without PT-Scotch";
  }
};

TEST_F(PartitionApps, StartBlockReadAndEigenvectorsWrittenInTheInputsNumbering) {
  const fs::path dir = test::shared_folder("partition_apps");
  const std::string start = (dir / "start.h5").string(), out = (dir / "eigs.h5").string();
  const CsrRows A = input_matrix();
  const std::vector<double> modes = lowest_modes();
  {  // They are eigenvectors of the input's matrix, as numbered there.
    const std::vector<double> AX = times(A, modes, 3);
    const std::vector<double> exact = io::laplacian_eigenvalues({io::GeneratorKind::laplacian_2d, nx, ny, 1, 5});
    for (std::int64_t i = 0; i < n; ++i)
      for (int j = 0; j < 3; ++j) ASSERT_NEAR(AX[i * 3 + j], exact[j] * modes[i * 3 + j], 1e-12);
  }
  write_block(start, "/X", 3, modes);
  for (const std::string order : {"none", "band"}) {
    SCOPED_TRACE("local_order " + order);
    test::write_text(dir / "eigs.yaml", "matrix:\n  generator: " + kGrid +
                                            "\neigensolver:\n  k: 3\n  tolerance: 1.0e-9\n"
                                            "  start: {file: start.h5}\nexecution: {partition: graph, local_order: " +
                                            order + "}\noutput:\n  path: " + out + "\n  monitor: false\n");
    EXPECT_EQ(apps::run_eigs((dir / "eigs.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    // Started from the exact vectors (read in the right order), LOBPCG has nothing left to do.
    EXPECT_LE(test::read_dataset(out, "/iterations").at(0), 2.0);
    const std::vector<double> lambda = test::read_dataset(out, "/eigenvalues");
    ASSERT_EQ(lambda.size(), 3u);
    const io::DenseRows X = io::read_hdf5_dense_rows(out, "/eigenvectors", 0, n, n);
    ASSERT_EQ(X.cols, 3);
    const std::vector<double> AX = times(A, X.values, 3);
    for (int j = 0; j < 3; ++j) {
      double r = 0, x = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        r += std::pow(AX[i * 3 + j] - lambda[j] * X.values[i * 3 + j], 2);
        x += std::pow(X.values[i * 3 + j], 2);
      }
      EXPECT_LE(std::sqrt(r / x) / std::abs(lambda[j]), 1e-9) << "pair " << j;
    }
  }
}

TEST_F(PartitionApps, BlockCgSolvesTheInputsSystemColumnByColumn) {
  const fs::path dir = test::shared_folder("partition_apps");
  const std::string rhs = (dir / "rhs.h5").string(), out = (dir / "cg.h5").string();
  std::vector<double> B(static_cast<std::size_t>(n * 2));
  for (std::int64_t i = 0; i < n; ++i) {
    B[i * 2] = 1.0 + 0.5 * std::sin(0.3 * double(i));
    B[i * 2 + 1] = double(i % 7) - 3.0;
  }
  write_block(rhs, "/B", 2, B);
  for (const std::string order : {"none", "band"}) {
    SCOPED_TRACE("local_order " + order);
    test::write_text(dir / "cg.yaml", "matrix:\n  generator: " + kGrid +
                                          "\nblock_cg:\n  rhs: {source: hdf5, file: rhs.h5}\n"
                                          "  rtol: 1.0e-11\nexecution: {partition: graph, local_order: " +
                                          order + "}\noutput:\n  path: " + out + "\n  monitor: false\n");
    EXPECT_EQ(apps::run_cg((dir / "cg.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const io::DenseRows X = io::read_hdf5_dense_rows(out, "/X", 0, n, n);
    ASSERT_EQ(X.cols, 2);
    const std::vector<double> AX = times(input_matrix(), X.values, 2);
    for (int j = 0; j < 2; ++j) {
      double r = 0, b = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        r += std::pow(AX[i * 2 + j] - B[i * 2 + j], 2);
        b += std::pow(B[i * 2 + j], 2);
      }
      EXPECT_LE(std::sqrt(r / b), 1e-10) << "column " << j;
    }
  }
}

// Random right-hand sides are those of the input's rows: the same solution
// whether the rows were partitioned or ordered by band or not.
TEST_F(PartitionApps, RandomRightHandSidesDoNotDependOnThePartition) {
  const fs::path dir = test::shared_folder("partition_apps");
  std::vector<std::vector<double>> solutions;
  const char* executions[] = {"{partition: contiguous, local_order: none}",
                              "{partition: contiguous, local_order: band}", "{partition: graph}"};
  for (int run = 0; run < 3; ++run) {
    const std::string out = (dir / ("cg-random-" + std::to_string(run) + ".h5")).string();
    test::write_text(dir / "cg-random.yaml", "matrix:\n  generator: " + kGrid +
                                                 "\nblock_cg:\n  rhs: {source: random, columns: 2}\n"
                                                 "  rtol: 1.0e-11\nexecution: " +
                                                 executions[run] + "\noutput:\n  path: " + out +
                                                 "\n  monitor: false\n");
    EXPECT_EQ(apps::run_cg((dir / "cg-random.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    solutions.push_back(io::read_hdf5_dense_rows(out, "/X", 0, n, n).values);
  }
  for (int run = 1; run < 3; ++run) {
    ASSERT_EQ(solutions[0].size(), solutions[run].size());
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < solutions[0].size(); ++i) {
      worst = std::max(worst, std::abs(solutions[0][i] - solutions[run][i]));
      largest = std::max(largest, std::abs(solutions[0][i]));
    }
    EXPECT_LE(worst, 1e-9 * largest) << executions[run];
  }
}

// LOBPCG's random start columns are those of the input's rows: the same
// iterations and eigenvalues whether the rows were partitioned or ordered by
// band or not (up to the rounding of sums in another order).
TEST_F(PartitionApps, RandomStartDoesNotDependOnThePartitionOrTheRowOrder) {
  const fs::path dir = test::shared_folder("partition_apps");
  const char* executions[] = {"{partition: contiguous, local_order: none}",
                              "{partition: contiguous, local_order: band}", "{partition: graph, local_order: none}",
                              "{partition: graph, local_order: band}"};
  std::vector<double> iterations, lambda0;
  for (int run = 0; run < 4; ++run) {
    const std::string out = (dir / ("eigs-random-" + std::to_string(run) + ".h5")).string();
    test::write_text(dir / "eigs-random.yaml", "matrix:\n  generator: " + kGrid +
                                                   "\neigensolver: {k: 4, tolerance: 1.0e-9}\n"
                                                   "execution: " +
                                                   executions[run] + "\noutput:\n  path: " + out +
                                                   "\n  monitor: false\n");
    EXPECT_EQ(apps::run_eigs((dir / "eigs-random.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    iterations.push_back(test::read_dataset(out, "/iterations").at(0));
    const std::vector<double> lambda = test::read_dataset(out, "/eigenvalues");
    if (run == 0) lambda0 = lambda;
    ASSERT_EQ(lambda.size(), lambda0.size());
    for (std::size_t j = 0; j < lambda.size(); ++j)
      EXPECT_NEAR(lambda[j], lambda0[j], 1e-10 * lambda0[j]) << executions[run];
    EXPECT_LE(std::abs(iterations[run] - iterations[0]), 1.0) << executions[run];
  }
}

// The partitioner needs a symmetric pattern: a matrix that is not symmetric
// is refused by the symmetry check, as with the contiguous split.
TEST_F(PartitionApps, NonSymmetricMatrixRefusedBeforePartitioning) {
  const fs::path dir = test::shared_folder("partition_apps");
  const fs::path file = dir / "unsymmetric.mtx";
  test::write_text(file,
                   "%%MatrixMarket matrix coordinate real general\n6 6 8\n1 1 2\n2 2 2\n3 3 2\n4 4 2\n5 5 2\n"
                   "6 6 2\n1 2 -1\n5 3 -1\n");
  io::MatrixConfig config;
  config.source = io::MatrixSource::matrix_market;
  config.file = file.string();
  try {
    apps::load_symmetric_matrix(config, PartitionMethod::graph, LocalOrder::automatic, MPI_COMM_WORLD);
    ADD_FAILURE() << "a matrix that is not symmetric was partitioned";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("the matrix is not symmetric"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blockeigs
