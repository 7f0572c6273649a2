// main() for MPI test executables: every rank runs every test; rank 0 prints
// GoogleTest's report, the other ranks only their failures (with the rank and
// the test); the process fails on every rank if a test failed on any rank.
// MPI_COMM_WORLD returns MPI errors as codes, as in the apps, so that the
// checks (core/checks.hpp) fire in tests. BLOCKEIGS_MPI_CHUNK_BYTES sets the
// MPI message limit, as in the apps (the chunked suites of tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "core/checks.hpp"
#include "core/env_overrides.hpp"
#include "config/run_config.hpp"
#include "solver/base/large_messages.hpp"

namespace {

// A failure on a rank other than 0, on stderr: "[rank 1] Suite.Test: file:line: message".
// The test's name is kept from its start: GoogleTest reports a failure with
// its own lock held, which current_test_info() would take again (a hang).
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestEnd(const ::testing::TestInfo&) override { test_ = "?"; }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d: %s\n", rank_, test_.c_str(),
                 result.file_name() ? result.file_name() : "?", result.line_number(), result.message());
  }

 private:
  int rank_;
  std::string test_ = "?";
};

}  // namespace

int main(int argc, char** argv) {
  if (!blockeigs::init_mpi(&argc, &argv)) return 1;
  ::testing::InitGoogleTest(&argc, argv);
  try {
    blockeigs::solver::set_mpi_chunk_limit(
        blockeigs::cfg::environment_execution_config(blockeigs::env::environment().keys).mpi_chunk_bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    blockeigs::abort_mpi(MPI_COMM_WORLD, 1);
  }
  int rank = 0;
  if (!BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_rank(MPI_COMM_WORLD, &rank))) blockeigs::abort_mpi(MPI_COMM_WORLD, 1);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
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
