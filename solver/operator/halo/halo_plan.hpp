// The halo plan of a distributed operator, built once: which rows of the
// dense block this rank must receive from each neighbour (the columns of its
// off-diagonal block) and which of its own rows each neighbour needs.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

struct HaloPlan {
  // Receiving: halo rows arrive grouped by owner, in the order of the
  // off-diagonal block's compact column numbering.
  std::vector<int> recv_ranks;
  std::vector<std::int64_t> recv_offsets;  // recv_ranks.size() + 1, rows into the halo block
  // Sending: local row indices to pack, grouped by destination.
  std::vector<int> send_ranks;
  std::vector<std::int64_t> send_offsets;  // send_ranks.size() + 1
  std::vector<std::int32_t> send_rows;     // local row ids

  std::int64_t halo_rows() const { return recv_offsets.empty() ? 0 : recv_offsets.back(); }
  std::int64_t packed_rows() const { return send_offsets.empty() ? 0 : send_offsets.back(); }
};

// `halo_columns` are the global columns this rank needs from others, sorted
// and unique (so they come grouped by owner). Collective.
HaloPlan build_halo_plan(MPI_Comm comm, const RowPartition& partition, const std::vector<std::int64_t>& halo_columns);

}  // namespace blockeigs::solver
