// For single-process GoogleTest executables that call MPI (the distributed
// block operations on one rank): initialise MPI once before the tests and
// finalise it after, with MPI_ERRORS_RETURN as in the apps. Include in
// exactly one translation unit of a test.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/checks.hpp"

namespace blockeigs::test {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Initialized(&initialized));
    if (!initialized && !init_mpi(nullptr, nullptr)) throw LibraryError("MPI could not be started");
  }
  void TearDown() override {
    int finalized = 0;
    BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Finalized(&finalized));
    if (!finalized) finalize_mpi();
  }
};

inline const auto* const mpi_environment = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

}  // namespace blockeigs::test
