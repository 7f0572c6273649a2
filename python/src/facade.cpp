// The facade's process and MPI functions (initialisation, communicators,
// agreement on input, gathering rows, the version) and the execution keys' reader;
// the Matrix: facade_matrix.cpp, the solves: facade_lobpcg.cpp and
// facade_cg.cpp, what they share: facade_solve_common.cpp.
#include "python/src/facade_internal.hpp"

namespace blockeigs::python {

using namespace internal;

namespace internal {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

cfg::ExecutionConfig read_execution(const Section& execution, MPI_Comm comm) {
  return solver::collectively(comm, [&] { return cfg::execution_from_keywords(execution.keywords, execution.source); });
}

double now() { return MPI_Wtime(); }

}  // namespace internal

bool initialize_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return false;
  int provided = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
  blockeigs::use_errors_return(MPI_COMM_WORLD);
  return true;
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

void finalize_mpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

CommHandle comm_world() { return to_handle(MPI_COMM_WORLD); }
int comm_rank(CommHandle comm) {
  return translated([&] { return rank_of(to_comm(comm)); });
}
int comm_size(CommHandle comm) {
  return translated([&] {
    int size = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(to_comm(comm), &size));
    return size;
  });
}

bool cuda_compiled() { return dense::cuda_compiled(); }

std::string version() { return BLOCKEIGS_VERSION; }

void agree_on_input(CommHandle comm, const std::string& message) {
  translated([&] {
    solver::collectively(to_comm(comm), [&] {
      if (!message.empty()) throw blockeigs::InputError(message);
    });
  });
}

std::vector<double> allgather_rows(CommHandle comm, const std::vector<double>& rows, std::int64_t cols) {
  return translated([&] {
    const MPI_Comm c = to_comm(comm);
    int ranks = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(c, &ranks));
    const std::int64_t mine = static_cast<std::int64_t>(rows.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks));
    BLOCKEIGS_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, c));
    std::vector<int> sizes, offsets;
    std::int64_t total = 0;
    for (std::int64_t count : counts) {
      if (total + count > std::numeric_limits<int>::max())
        fail_input("gather=True: the ", cols, " columns of all rows hold more than 2^31 values; gather them yourself");
      offsets.push_back(static_cast<int>(total));
      sizes.push_back(static_cast<int>(count));
      total += count;
    }
    std::vector<double> all(static_cast<std::size_t>(total));
    BLOCKEIGS_MPI_CHECK(MPI_Allgatherv(rows.data(), static_cast<int>(mine), MPI_DOUBLE, all.data(), sizes.data(),
                                       offsets.data(), MPI_DOUBLE, c));
    return all;
  });
}

std::vector<std::int64_t> balanced_partition(const std::int64_t* row_offsets, std::int64_t rows, int ranks) {
  return solver::RowPartition::balanced(std::vector<std::int64_t>(row_offsets, row_offsets + rows + 1), ranks)
      .first_rows();
}

}  // namespace blockeigs::python
