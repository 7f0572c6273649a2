// One set of checks for the libraries block-eigs calls (docs/architecture.md
// section 4): a failed call throws a typed exception naming the call, the
// library's message, file and line. CUDA, cuBLAS and cuSPARSE checks are in
// core/cuda_checks.hpp (CUDA builds only).
//
// MPI reports errors through return codes only on communicators whose error
// handler is MPI_ERRORS_RETURN (the default aborts the job inside the call):
// the apps and test mains set it on MPI_COMM_WORLD, and the library sets it on
// every communicator it creates (use_errors_return).
//
//   BLOCKEIGS_MPI_CHECK(MPI_Bcast(buf, n, MPI_DOUBLE, 0, comm));
//   BLOCKEIGS_LAPACK_CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, n));
//
// A check that throws on one rank while others wait in a collective is safe
// only where the caller agrees on errors (solver::collectively) or aborts the
// job (the apps' main does for a rank's own error).
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

#include "core/error.hpp"

namespace blockeigs {

// An MPI call returned an error code.
class MpiError : public LibraryError {
 public:
  MpiError(const std::string& message, int code, std::string call)
      : LibraryError(message), code_(code), call_(std::move(call)) {}
  int code() const { return code_; }
  const std::string& call() const { return call_; }  // the call's source text

 private:
  int code_;
  std::string call_;
};

// A LAPACK(E) routine returned a non-zero info.
class LapackError : public LibraryError {
 public:
  LapackError(const std::string& message, int info, std::string routine)
      : LibraryError(message), info_(info), routine_(std::move(routine)) {}
  int info() const { return info_; }
  const std::string& routine() const { return routine_; }  // e.g. "LAPACKE_dpotrf"

 private:
  int info_;
  std::string routine_;
};

// Sets MPI_ERRORS_RETURN on comm (a communicator this code owns, or
// MPI_COMM_WORLD at startup), so that BLOCKEIGS_MPI_CHECK sees its failures.
void use_errors_return(MPI_Comm comm);

// For main(): MPI_Init, then MPI_ERRORS_RETURN on MPI_COMM_WORLD and
// MPI_COMM_SELF. Returns false (after saying why on stderr) if either fails.
bool init_mpi(int* argc, char*** argv) noexcept;
// MPI_Finalize; a failure is reported on stderr (there is nothing to undo).
void finalize_mpi() noexcept;
// MPI_Abort, which should not return; if it does, the process exits with code.
[[noreturn]] void abort_mpi(MPI_Comm comm, int code) noexcept;

namespace detail {

// MPI's text for an error code (MPI_Error_string).
std::string mpi_error_text(int code);
std::string mpi_error_message(int code, const char* call, const char* file, int line);
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
// For destructors and noexcept paths: true on MPI_SUCCESS, else writes the
// message to stderr and returns false.
bool mpi_ok_or_report(int code, const char* call, const char* file, int line) noexcept;

// "LAPACKE_dpotrf" from "LAPACKE_dpotrf(LAPACK_ROW_MAJOR, ...)".
std::string lapack_routine(const char* call);
// What info means for the routine: an illegal argument (info < 0), LAPACKE's
// own failures (-1010: out of memory), or the routine's numerical failure.
std::string lapack_info_meaning(const std::string& routine, int info);
std::string lapack_error_message(int info, const char* call, const char* file, int line);
[[noreturn]] void throw_lapack_error(int info, const char* call, const char* file, int line);

}  // namespace detail
}  // namespace blockeigs

// Throws MpiError naming the call, MPI's error string, file and line.
#define BLOCKEIGS_MPI_CHECK(call)                                                             \
  do {                                                                                        \
    const int blockeigs_mpi_status_ = (call);                                                 \
    if (blockeigs_mpi_status_ != MPI_SUCCESS)                                                 \
      ::blockeigs::detail::throw_mpi_error(blockeigs_mpi_status_, #call, __FILE__, __LINE__); \
  } while (0)

// Where throwing is not allowed (destructors, noexcept paths, shutdown):
// reports a failure on stderr and carries on. An expression: true on success.
#define BLOCKEIGS_MPI_CHECK_NOTHROW(call) ::blockeigs::detail::mpi_ok_or_report((call), #call, __FILE__, __LINE__)

// Throws LapackError on a non-zero info. For routines whose positive info is
// an expected outcome (dpotrf's "not positive definite"), test info instead.
#define BLOCKEIGS_LAPACK_CHECK(call)                                                              \
  do {                                                                                            \
    const int blockeigs_lapack_info_ = static_cast<int>(call);                                    \
    if (blockeigs_lapack_info_ != 0)                                                              \
      ::blockeigs::detail::throw_lapack_error(blockeigs_lapack_info_, #call, __FILE__, __LINE__); \
  } while (0)
