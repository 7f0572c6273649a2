// The apps' runs on the GPU, several in one process (as a library user or the
// Python module makes them): each run's operator, halo and context leave
// nothing behind that the next one waits on or trips over, with every halo
// transport that one node offers.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "apps/cli.hpp"
#include "apps/run/cg_run.hpp"
#include "apps/run/eigs_run.hpp"
#include "distributed_fixtures.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

class AppRunsCuda : public test::GpuTestOnEveryRank, public ::testing::WithParamInterface<const char*> {};

std::string write_config(const std::string& name, const std::string& text) {
  const std::filesystem::path path = test::shared_folder("app_runs_cuda") / name;
  test::write_text(path, text);
  return path.string();
}

std::string execution(const char* transport) {
  return std::string("execution: {backend: cuda, partition: contiguous, halo: {transport: ") + transport + "}}\n";
}

TEST_P(AppRunsCuda, EigensolverTwiceThenBlockCg) {
  const std::string eigs =
      write_config("eigs.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 16, ny: 14, nz: 12}\n"
                   "eigensolver: {k: 4, tolerance: 1.0e-6, max_iterations: 500, preconditioner: jacobi}\n"
                   "output: {monitor: false}\n" +
                       execution(GetParam()));
  const std::string cg =
      write_config("cg.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 16, ny: 14, nz: 12}\n"
                   "block_cg: {rhs: {source: known_solution, columns: 3}, rtol: 1.0e-8, preconditioner: jacobi}\n"
                   "output: {monitor: false}\n" +
                       execution(GetParam()));
  for (int run = 0; run < 2; ++run) EXPECT_EQ(apps::run_eigs(eigs, MPI_COMM_WORLD), apps::exit_ok) << "run " << run;
  EXPECT_EQ(apps::run_cg(cg, MPI_COMM_WORLD), apps::exit_ok);
}

// ipc at one rank has no neighbour to map: the run takes it as it comes.
INSTANTIATE_TEST_SUITE_P(Halo, AppRunsCuda, ::testing::Values("auto", "staged", "ipc"));

}  // namespace
}  // namespace blockeigs
