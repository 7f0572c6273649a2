// The checks of core/checks.hpp fire: an MPI call that fails on a
// communicator with MPI_ERRORS_RETURN throws MpiError naming the call, and a
// LAPACK routine's non-zero info throws LapackError saying what it means.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <string>

#include "core/checks.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs {
namespace {

int size_of(MPI_Comm comm) {
  int size = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

TEST(MpiCheck, WorldReturnsErrors) {
  MPI_Errhandler handler;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  EXPECT_TRUE(handler == MPI_ERRORS_RETURN);
  BLOCKEIGS_MPI_CHECK(MPI_Errhandler_free(&handler));
}

// The caller's communicator aborts on errors; the solver's private duplicate
// returns them, so its checks see an invalid root (detected on every rank).
TEST(MpiCheck, ThrowsOnPrivateCommunicator) {
  MPI_Comm fatal;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &fatal));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_set_errhandler(fatal, MPI_ERRORS_ARE_FATAL));
  {
    const solver::PrivateComm comm(fatal);
    const int bad_root = size_of(comm.get());
    int value = 0;
    try {
      BLOCKEIGS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, bad_root, comm.get()));
      ADD_FAILURE() << "no MpiError";
    } catch (const MpiError& e) {
      const std::string what = e.what();
      EXPECT_NE(e.code(), MPI_SUCCESS);
      EXPECT_EQ(e.call(), "MPI_Bcast(&value, 1, MPI_INT, bad_root, comm.get())");
      EXPECT_NE(what.find("MPI error in MPI_Bcast(&value, 1, MPI_INT, bad_root, comm.get()): "), std::string::npos)
          << what;
      EXPECT_NE(what.find(detail::mpi_error_text(e.code())), std::string::npos) << what;
      EXPECT_NE(what.find("test_checks.cpp:"), std::string::npos) << what;
    }
  }
  BLOCKEIGS_MPI_CHECK(MPI_Comm_free(&fatal));
}

TEST(MpiCheck, LibraryErrorCatchesIt) {
  int value = 0;
  EXPECT_THROW(BLOCKEIGS_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, -7, MPI_COMM_WORLD)), LibraryError);
}

TEST(MpiCheck, NothrowReportsAndReturnsFalse) {
  int value = 0;
  testing::internal::CaptureStderr();
  const bool ok = BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Bcast(&value, 1, MPI_INT, -7, MPI_COMM_WORLD));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("MPI error in MPI_Bcast(&value, 1, MPI_INT, -7, MPI_COMM_WORLD)"), std::string::npos) << err;
  EXPECT_TRUE(BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD)));
}

TEST(LapackCheck, NotPositiveDefiniteReportsInfo) {
  double a[4] = {1, 2, 2, 1};  // eigenvalues 3 and -1
  try {
    BLOCKEIGS_LAPACK_CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', 2, a, 2));
    ADD_FAILURE() << "no LapackError";
  } catch (const LapackError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.info(), 2);
    EXPECT_EQ(e.routine(), "LAPACKE_dpotrf");
    EXPECT_NE(
        what.find("LAPACK error in LAPACKE_dpotrf: info 2, the leading minor of order 2 is not positive definite"),
        std::string::npos)
        << what;
    EXPECT_NE(what.find("test_checks.cpp:"), std::string::npos) << what;
  }
}

TEST(LapackCheck, IllegalArgumentReportsWhich) {
  double a[4] = {4, 0, 0, 4};
  testing::internal::CaptureStderr();  // LAPACKE's xerbla prints its own line
  try {
    BLOCKEIGS_LAPACK_CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', 2, a, 1));  // lda < n
    ADD_FAILURE() << "no LapackError";
  } catch (const LapackError& e) {
    EXPECT_EQ(e.info(), -5);
    EXPECT_NE(std::string(e.what()).find("argument 5 had an illegal value"), std::string::npos) << e.what();
  }
  testing::internal::GetCapturedStderr();
}

TEST(LapackCheck, SuccessDoesNotThrow) {
  double a[4] = {4, 2, 2, 3};
  EXPECT_NO_THROW(BLOCKEIGS_LAPACK_CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', 2, a, 2)));
  EXPECT_DOUBLE_EQ(a[0], 2.0);
}

}  // namespace
}  // namespace blockeigs
