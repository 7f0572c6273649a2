// For single-process GoogleTest executables that call MPI (the distributed
// block operations on one rank): initialise MPI once before the tests and
// finalise it after. Include in exactly one translation unit of a test.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

namespace blockeigs::test {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
  }
  void TearDown() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

inline const auto* const mpi_environment = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

}  // namespace blockeigs::test
