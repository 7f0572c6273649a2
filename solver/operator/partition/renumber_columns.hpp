// The exchanges that renumber a distributed matrix's rows (distribute_rows,
// local_order): a typed all-to-all, and the new index of every column a
// rank's rows reference, asked of the ranks that own those rows.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "io/csr_rows.hpp"
#include "solver/operator/large_messages.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// Typed all-to-all: outgoing[q] goes to rank q; returns what every rank sent
// here, packed in rank order, and how many came from each. Collective.
template <class T>
std::vector<T> all_to_all(MPI_Comm comm, const std::vector<std::vector<T>>& outgoing,
                          std::vector<std::int64_t>* counts = nullptr) {
  std::vector<std::int64_t> send_bytes(outgoing.size());
  std::vector<T> send;
  for (std::size_t q = 0; q < outgoing.size(); ++q) {
    send_bytes[q] = static_cast<std::int64_t>(outgoing[q].size() * sizeof(T));
    send.insert(send.end(), outgoing[q].begin(), outgoing[q].end());
  }
  const std::vector<std::int64_t> recv_bytes = exchange_counts(comm, send_bytes);
  std::vector<T> recv(static_cast<std::size_t>(std::accumulate(recv_bytes.begin(), recv_bytes.end(), std::int64_t{0})) /
                      sizeof(T));
  large_alltoallv(comm, send.data(), send_bytes, recv.data(), recv_bytes);
  if (counts) {
    counts->resize(recv_bytes.size());
    for (std::size_t q = 0; q < recv_bytes.size(); ++q) (*counts)[q] = recv_bytes[q] / std::int64_t(sizeof(T));
  }
  return recv;
}

// The new index of every entry's column in `rows` (this rank's rows of
// `old`, global column indices of `old`): its own rows' from `renumbered`
// (the new index of each of this rank's rows), the others' asked of the
// ranks that own them in `old`. Collective.
std::vector<std::int64_t> renumber_columns(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& old,
                                           const std::vector<std::int64_t>& renumbered);

}  // namespace blockeigs::solver
