// What every PETSc/SLEPc test executable shares: SLEPc initialised around
// the tests (a gtest environment, registered once per executable by
// including this header), the backend the tests build their operators on,
// and PETSC_OK for calls whose error code must be zero.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>
#include <slepcsys.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/checks.hpp"
#include "core/enums.hpp"
#include "solver/operator/device_selection.hpp"
#include "dense/context.hpp"

namespace blockeigs::test {

// The backend under test: the GPU when every rank sees one (then PETSc's
// host vectors and dense blocks are staged through it in every product), the
// CPU otherwise. Collective.
inline spmm::Context petsc_test_context() { return solver::make_context(Backend::automatic, PETSC_COMM_WORLD); }

// mpi_test_main has called MPI_Init: SLEPc (and with it PETSc) starts after
// it and finishes before MPI_Finalize, once per program.
class SlepcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(SlepcInitializeNoArguments(), 0);
    const spmm::Context context = petsc_test_context();
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (rank == 0)
      std::printf("[petsc tests] backend: %s\n", context.space() == Space::device ? "cuda (host blocks staged)" : "cpu");
  }
  void TearDown() override { ASSERT_EQ(SlepcFinalize(), 0); }
};
[[maybe_unused]] inline ::testing::Environment* const slepc_environment =
    ::testing::AddGlobalTestEnvironment(new SlepcEnvironment);

inline void petsc_ok(PetscErrorCode code, const char* call) {
  if (code != 0) throw std::runtime_error(std::string(call) + " failed with PETSc error " + std::to_string(code));
}

}  // namespace blockeigs::test

#define PETSC_OK(call) ::blockeigs::test::petsc_ok((call), #call)
