#include "solver/base/large_messages.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "core/checks.hpp"
#include "core/enums.hpp"
#include "solver/base/node_alltoallv.hpp"

namespace blockeigs::solver {
namespace {

constexpr int kAlltoallvTag = 0x4C41;  // large_alltoallv's pieces (one-time exchanges)

std::atomic<std::int64_t> chosen_limit{default_mpi_chunk_bytes};
std::atomic<bool> through_node_memory{true};

// Exchanges from this size on (the largest rank's total) go through node_alltoallv where every rank has
// this many threads: it copies twice where MPI copies once, and gains by copying on every thread (as fast
// as MPI at 1 MiB a rank, twice as fast from 4 MiB on the GPU machine: docs/benchmarks/time-to-solution.md).
constexpr std::int64_t kNodeExchangeBytes = std::int64_t{1} << 20;
constexpr std::int64_t kNodeExchangeThreads = 4;

// Calls post(offset, piece) for consecutive pieces of at most the limit.
template <class Post>
void in_pieces(std::int64_t bytes, Post&& post) {
  const std::int64_t limit = mpi_chunk_limit();
  for (std::int64_t offset = 0; offset < bytes; offset += limit)
    post(offset, static_cast<int>(std::min(limit, bytes - offset)));
}

std::int64_t total(const std::vector<std::int64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

// Packed displacements of `counts` as int (the caller knows they fit).
std::vector<int> int_displacements(const std::vector<std::int64_t>& counts) {
  std::vector<int> displs(counts.size(), 0);
  for (std::size_t q = 1; q < counts.size(); ++q) displs[q] = displs[q - 1] + static_cast<int>(counts[q - 1]);
  return displs;
}

void alltoallv_at_once(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                       const std::vector<std::int64_t>& recv_bytes) {
  const std::vector<int> send_counts(send_bytes.begin(), send_bytes.end());
  const std::vector<int> recv_counts(recv_bytes.begin(), recv_bytes.end());
  const std::vector<int> send_displs = int_displacements(send_bytes), recv_displs = int_displacements(recv_bytes);
  BLOCKEIGS_MPI_CHECK(MPI_Alltoallv(send, send_counts.data(), send_displs.data(), MPI_BYTE, recv, recv_counts.data(),
                                    recv_displs.data(), MPI_BYTE, comm));
}

void alltoallv_in_pieces(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                         const std::vector<std::int64_t>& recv_bytes) {
  std::vector<MPI_Request> requests;
  std::int64_t at = 0;
  for (std::size_t q = 0; q < recv_bytes.size(); ++q) {
    large_irecv(comm, static_cast<char*>(recv) + at, recv_bytes[q], static_cast<int>(q), kAlltoallvTag, requests);
    at += recv_bytes[q];
  }
  at = 0;
  for (std::size_t q = 0; q < send_bytes.size(); ++q) {
    large_isend(comm, static_cast<const char*>(send) + at, send_bytes[q], static_cast<int>(q), kAlltoallvTag, requests);
    at += send_bytes[q];
  }
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

}  // namespace

std::int64_t mpi_chunk_limit() { return chosen_limit.load(); }

std::int64_t set_mpi_chunk_limit(std::int64_t bytes) {
  return chosen_limit.exchange(bytes > 0 ? std::min(bytes, default_mpi_chunk_bytes) : default_mpi_chunk_bytes);
}

bool set_node_memory_exchanges(bool on) { return through_node_memory.exchange(on); }

void large_bcast(MPI_Comm comm, void* data, std::int64_t bytes, int root) {
  in_pieces(bytes, [&](std::int64_t offset, int piece) {
    BLOCKEIGS_MPI_CHECK(MPI_Bcast(static_cast<char*>(data) + offset, piece, MPI_BYTE, root, comm));
  });
}

void large_isend(MPI_Comm comm, const void* data, std::int64_t bytes, int peer, int tag,
                 std::vector<MPI_Request>& requests) {
  in_pieces(bytes, [&](std::int64_t offset, int piece) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(
        MPI_Isend(static_cast<const char*>(data) + offset, piece, MPI_BYTE, peer, tag, comm, &requests.back()));
  });
}

void large_irecv(MPI_Comm comm, void* data, std::int64_t bytes, int peer, int tag, std::vector<MPI_Request>& requests) {
  in_pieces(bytes, [&](std::int64_t offset, int piece) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(
        MPI_Irecv(static_cast<char*>(data) + offset, piece, MPI_BYTE, peer, tag, comm, &requests.back()));
  });
}

void large_send(MPI_Comm comm, const void* data, std::int64_t bytes, int peer, int tag) {
  in_pieces(bytes, [&](std::int64_t offset, int piece) {
    BLOCKEIGS_MPI_CHECK(MPI_Send(static_cast<const char*>(data) + offset, piece, MPI_BYTE, peer, tag, comm));
  });
}

void large_recv(MPI_Comm comm, void* data, std::int64_t bytes, int peer, int tag) {
  in_pieces(bytes, [&](std::int64_t offset, int piece) {
    BLOCKEIGS_MPI_CHECK(
        MPI_Recv(static_cast<char*>(data) + offset, piece, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE));
  });
}

void large_alltoallv(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                     const std::vector<std::int64_t>& recv_bytes) {
  // Every rank must take the same path: agree on the largest total and the fewest threads.
  std::int64_t agreed[2] = {std::max(total(send_bytes), total(recv_bytes)), -std::int64_t{omp_get_max_threads()}};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT64_T, MPI_MAX, comm));
  const std::int64_t largest = agreed[0], fewest_threads = -agreed[1];
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  if (ranks > 1 && largest >= kNodeExchangeBytes && fewest_threads >= kNodeExchangeThreads && through_node_memory &&
      all_ranks_on_one_node(comm))
    node_alltoallv(comm, send, send_bytes, recv, recv_bytes, node_alltoallv_slot_bytes(ranks));
  else if (largest <= mpi_chunk_limit())
    alltoallv_at_once(comm, send, send_bytes, recv, recv_bytes);
  else
    alltoallv_in_pieces(comm, send, send_bytes, recv, recv_bytes);
}

std::vector<std::int64_t> exchange_counts(MPI_Comm comm, const std::vector<std::int64_t>& to_each) {
  std::vector<std::int64_t> from_each(to_each.size(), 0);
  BLOCKEIGS_MPI_CHECK(MPI_Alltoall(to_each.data(), 1, MPI_INT64_T, from_each.data(), 1, MPI_INT64_T, comm));
  return from_each;
}

}  // namespace blockeigs::solver
