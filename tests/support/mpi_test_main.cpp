// main() for MPI test executables: every rank runs every test; only rank 0
// prints; the process fails on every rank if a test failed on any rank.
// MPI_COMM_WORLD returns MPI errors as codes, as in the apps, so that the
// checks (core/checks.hpp) fire in tests. BLOCKEIGS_MPI_CHUNK_BYTES sets the
// MPI message limit, as in the apps (the chunked suites of tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <exception>

#include "core/checks.hpp"
#include "core/env_overrides.hpp"
#include "io/config.hpp"
#include "solver/base/large_messages.hpp"

int main(int argc, char** argv) {
  if (!blockeigs::init_mpi(&argc, &argv)) return 1;
  ::testing::InitGoogleTest(&argc, argv);
  try {
    blockeigs::solver::set_mpi_chunk_limit(
        blockeigs::io::environment_execution_config(blockeigs::env::environment().keys).mpi_chunk_bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    blockeigs::abort_mpi(MPI_COMM_WORLD, 1);
  }
  int rank = 0;
  if (!BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_rank(MPI_COMM_WORLD, &rank))) blockeigs::abort_mpi(MPI_COMM_WORLD, 1);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  // Failing to agree is a failure of the run.
  if (!BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD)))
    blockeigs::abort_mpi(MPI_COMM_WORLD, 1);
  if (rank == 0 && any_failed && !local_failed) std::fprintf(stderr, "a test failed on another rank\n");
  blockeigs::finalize_mpi();
  return any_failed;
}
