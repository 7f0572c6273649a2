#include "solver/base/collective.hpp"

#include <string>

#include "core/error.hpp"

namespace blockeigs::solver {

void agree_on_error(MPI_Comm comm, std::exception_ptr local_error) {
  int rank = 0, size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));

  // 0: not an InputError (a library or internal failure), 1: InputError.
  int kind = 0;
  std::string message;
  if (local_error) {
    try {
      std::rethrow_exception(local_error);
    } catch (const AgreedError& e) {
      kind = e.is_input_error() ? 1 : 0;
      message = e.what();
    } catch (const InputError& e) {
      kind = 1;
      message = e.what();
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown error";
    }
  }

  const int mine = local_error ? rank : size;
  int first_failed = size;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm));
  if (first_failed == size) return;

  int header[2] = {kind, static_cast<int>(message.size())};
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(header, 2, MPI_INT, first_failed, comm));
  message.resize(static_cast<std::size_t>(header[1]));
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(message.data(), header[1], MPI_CHAR, first_failed, comm));
  throw AgreedError(message, header[0] == 1);
}

}  // namespace blockeigs::solver
