#include "core/checks.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace blockeigs {

void use_errors_return(MPI_Comm comm) { BLOCKEIGS_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)); }

bool init_mpi(int* argc, char*** argv) noexcept {
  // MPI_Init's own errors abort under the default handler; a returned code
  // is reported by number (MPI may not be usable to describe it).
  if (const int code = MPI_Init(argc, argv); code != MPI_SUCCESS) {
    std::fprintf(stderr, "block-eigs: MPI_Init failed (MPI error code %d)\n", code);
    return false;
  }
  return BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) &&
         BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

void finalize_mpi() noexcept {
  // After MPI_Finalize, MPI_Error_string may not be called: the code alone.
  if (const int code = MPI_Finalize(); code != MPI_SUCCESS)
    std::fprintf(stderr, "block-eigs: MPI_Finalize failed (MPI error code %d)\n", code);
}

void abort_mpi(MPI_Comm comm, int code) noexcept {
  BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Abort(comm, code));
  std::fflush(nullptr);
  std::_Exit(code);
}

namespace detail {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  // Its own failure leaves only the code to report.
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

std::string mpi_error_message(int code, const char* call, const char* file, int line) {
  return concat("MPI error in ", call, ": ", mpi_error_text(code), " at ", file, ":", line);
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  throw MpiError(mpi_error_message(code, call, file, line), code, call);
}

bool mpi_ok_or_report(int code, const char* call, const char* file, int line) noexcept {
  if (code == MPI_SUCCESS) return true;
  try {
    std::fprintf(stderr, "block-eigs: %s (not thrown: a destructor or shutdown path)\n",
                 mpi_error_message(code, call, file, line).c_str());
  } catch (...) {
    std::fprintf(stderr, "block-eigs: MPI error %d in %s at %s:%d\n", code, call, file, line);
  }
  return false;
}

std::string lapack_routine(const char* call) {
  const std::string_view text(call);
  const auto end = text.find('(');
  std::string_view name = text.substr(0, end);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return std::string(name);
}

std::string lapack_info_meaning(const std::string& routine, int info) {
  if (info == -1010) return "LAPACKE could not allocate its work memory";
  if (info == -1011) return "LAPACKE could not allocate its transposed copy";
  if (info < 0) return concat("argument ", -info, " had an illegal value");
  // The routine's own failure: the name without LAPACKE_ and its type letter.
  std::string base = routine;
  if (base.rfind("LAPACKE_", 0) == 0) base = base.substr(8);
  if (!base.empty()) base = base.substr(1);
  if (base == "potrf") return concat("the leading minor of order ", info, " is not positive definite");
  if (base == "syev" || base == "syevd" || base == "syevr" || base == "syevx")
    return concat("the algorithm failed to converge (", info, " off-diagonal elements did not reach zero)");
  if (base == "gesvd" || base == "gesdd") return concat(info, " superdiagonals did not converge to zero");
  if (base == "getrf") return concat("U(", info, ",", info, ") is exactly zero: the matrix is singular");
  return concat("the routine failed (info ", info, ")");
}

std::string lapack_error_message(int info, const char* call, const char* file, int line) {
  const std::string routine = lapack_routine(call);
  return concat("LAPACK error in ", routine, ": info ", info, ", ", lapack_info_meaning(routine, info), " at ", file,
                ":", line);
}

void throw_lapack_error(int info, const char* call, const char* file, int line) {
  throw LapackError(lapack_error_message(info, call, file, line), info, lapack_routine(call));
}

}  // namespace detail
}  // namespace blockeigs
