// What every PETSc/SLEPc test executable shares: SLEPc initialised around
// the tests (a gtest environment, registered once per executable by
// including this header), the backend the tests build their operators on,
// PETSc handles destroyed at scope exit, and PETSC_OK for calls whose error
// code must be zero.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <petscsys.h>
#include <slepceps.h>
#include <slepcsys.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/checks.hpp"
#include "core/enums.hpp"
#include "solver/operator/device_selection.hpp"
#include "dense/context.hpp"
#include "solver/petsc/petsc_operator.hpp"

namespace blockeigs::test {

// The backend under test: the GPU when every rank sees one (then the Mats'
// vectors are PETSc's device vectors where PETSc has CUDA, else host vectors
// staged through the device in every product), the CPU otherwise. Collective.
inline dense::Context petsc_test_context() { return solver::make_context(Backend::automatic, PETSC_COMM_WORLD); }

// mpi_test_main has called MPI_Init: SLEPc (and with it PETSc) starts after
// it and finishes before MPI_Finalize, once per program.
class SlepcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(SlepcInitializeNoArguments(), 0);
    const dense::Context context = petsc_test_context();
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (rank == 0)
      std::printf("[petsc tests] backend: %s\n", context.space() == Space::host ? "cpu"
                                                 : solver::petsc_device_arrays()
                                                     ? "cuda (PETSc's device arrays in place)"
                                                     : "cuda (host blocks staged)");
  }
  void TearDown() override { ASSERT_EQ(SlepcFinalize(), 0); }
};
[[maybe_unused]] inline ::testing::Environment* const slepc_environment =
    ::testing::AddGlobalTestEnvironment(new SlepcEnvironment);

// PETSc handles destroyed at scope exit, also when an assertion returns early.
template <class Handle, PetscErrorCode (*destroy)(Handle*)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (handle_) destroy(&handle_);
  }
  Handle* out() { return &handle_; }
  operator Handle() const { return handle_; }  // NOLINT: passed straight to PETSc calls

 private:
  Handle handle_ = nullptr;
};
using OwnedMat = Owned<Mat, MatDestroy>;
using OwnedVec = Owned<Vec, VecDestroy>;
using OwnedKsp = Owned<KSP, KSPDestroy>;
using OwnedEps = Owned<EPS, EPSDestroy>;

// PetscErrorMessage's specific message: char * up to PETSc 3.18, const char * later.
template <class F>
struct ThirdArgument;
template <class R, class A, class B, class C>
struct ThirdArgument<R(A, B, C)> {
  using type = C;
};
using PetscSpecificMessage = std::remove_pointer_t<ThirdArgument<decltype(PetscErrorMessage)>::type>;

inline void petsc_ok(PetscErrorCode code, const char* call) {
  if (code != 0) throw std::runtime_error(std::string(call) + " failed with PETSc error " + std::to_string(code));
}

}  // namespace blockeigs::test

#define PETSC_OK(call) ::blockeigs::test::petsc_ok((call), #call)

namespace blockeigs::test {

// The solves with B of a generalized EPS's spectral transformation by CG and Jacobi to 1e-14: its default LU
// needs an assembled B, which our MATSHELL is not.
inline void st_solves_by_cg(EPS eps) {
  ST st = nullptr;
  KSP ksp = nullptr;
  PC pc = nullptr;
  PETSC_OK(EPSGetST(eps, &st));
  PETSC_OK(STGetKSP(st, &ksp));
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPGetPC(ksp, &pc));
  PETSC_OK(PCSetType(pc, PCJACOBI));
  PETSC_OK(KSPSetTolerances(ksp, 1e-14, 0.0, PETSC_DEFAULT, 10000));
}

}  // namespace blockeigs::test
