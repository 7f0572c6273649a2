#include "solver/operator/halo/halo_plan.hpp"

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::solver {

HaloPlan build_halo_plan(MPI_Comm comm, const RowPartition& partition, const std::vector<std::int64_t>& halo_columns) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  HaloPlan plan;

  // Group the needed columns by owner (they are sorted, so owners ascend).
  std::vector<std::int64_t> need_from(static_cast<std::size_t>(ranks), 0);
  plan.recv_offsets.push_back(0);
  for (std::size_t c = 0; c < halo_columns.size();) {
    const int owner = partition.owner(halo_columns[c]);
    BLOCKEIGS_ASSERT(owner != rank);
    std::size_t end = c;
    while (end < halo_columns.size() && halo_columns[end] < partition.end(owner)) ++end;
    plan.recv_ranks.push_back(owner);
    plan.recv_offsets.push_back(static_cast<std::int64_t>(end));
    need_from[owner] = static_cast<std::int64_t>(end - c);
    c = end;
  }

  // Tell every owner how many rows we need, then which (in pieces: the
  // index lists may pass 2^31 bytes).
  const std::vector<std::int64_t> give_to = exchange_counts(comm, need_from);
  std::vector<std::int64_t> recv_displs(ranks + 1, 0), send_bytes(ranks), recv_bytes(ranks);
  for (int q = 0; q < ranks; ++q) {
    recv_displs[q + 1] = recv_displs[q] + give_to[q];
    send_bytes[q] = need_from[q] * std::int64_t{sizeof(std::int64_t)};
    recv_bytes[q] = give_to[q] * std::int64_t{sizeof(std::int64_t)};
  }
  std::vector<std::int64_t> requested(static_cast<std::size_t>(recv_displs[ranks]));
  large_alltoallv(comm, halo_columns.data(), send_bytes, requested.data(), recv_bytes);

  plan.send_offsets.push_back(0);
  const std::int64_t first = partition.begin(rank);
  for (int q = 0; q < ranks; ++q) {
    if (give_to[q] == 0) continue;
    plan.send_ranks.push_back(q);
    for (std::int64_t i = recv_displs[q]; i < recv_displs[q + 1]; ++i)
      plan.send_rows.push_back(static_cast<std::int32_t>(requested[i] - first));
    plan.send_offsets.push_back(static_cast<std::int64_t>(plan.send_rows.size()));
  }
  return plan;
}

}  // namespace blockeigs::solver
