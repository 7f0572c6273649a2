// All-to-all through memory the ranks of one node share (an MPI-3 shared
// window): each rank's threads copy its pieces for the others into its part
// of the window, and each receiver's threads copy them out, a round of
// pieces at a time. Where every rank of a communicator is on one node this
// moves large one-time exchanges (rows, symmetry entries, results) at the
// memory's speed on every thread, where MPI's shared-memory transport copies
// on one thread through small fragments.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace blockeigs::solver {

// Whether every rank of `comm` shares a node with every other (collective).
bool all_ranks_on_one_node(MPI_Comm comm);

// The bytes of each pair's piece in one round: a rank's window holds two
// rounds of pieces for every rank (8 MiB in all at most).
std::int64_t node_alltoallv_slot_bytes(int ranks);

// large_alltoallv's arguments (send_bytes[q] bytes packed in rank order in
// `send` go to rank q; recv_bytes[q] bytes from q land packed in `recv`),
// through a shared window whose slot per pair is `slot_bytes`: made at the
// first exchange of these ranks with this slot and kept for the next (freed
// as MPI is finalised). Collective; every rank of `comm` must be on one node
// (all_ranks_on_one_node).
void node_alltoallv(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                    const std::vector<std::int64_t>& recv_bytes, std::int64_t slot_bytes);

}  // namespace blockeigs::solver
