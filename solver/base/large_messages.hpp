// MPI exchanges of any size. MPI counts and displacements are int, so one
// message carries under 2^31 elements; these helpers send a buffer of any
// byte count as pieces of at most mpi_chunk_limit() bytes (MPI_BYTE; the
// pieces of one pair of ranks arrive in order, as MPI guarantees for one
// tag). Buffers that fit in one piece go through one ordinary MPI call, as
// before. All sizes are bytes and every MPI call is checked.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace blockeigs::solver {

// The largest message in bytes, for the whole process: 1 GiB
// (default_mpi_chunk_bytes) unless set_mpi_chunk_limit chose less.
std::int64_t mpi_chunk_limit();

// Sets the limit (execution.mpi_chunk_bytes; the apps set it from the
// config), at most 1 GiB; 0 goes back to the default. Returns the limit it
// replaces. A limit of a few hundred bytes forces the chunked paths on small
// data (tests). Every rank must set the same limit before its next message:
// both ends of a message cut it with it.
std::int64_t set_mpi_chunk_limit(std::int64_t bytes);

// Whether large_alltoallv may go through node memory (default true; benchmarks
// compare both). Returns the setting it replaces. Every rank sets the same.
bool set_node_memory_exchanges(bool on);

// MPI_Bcast of `bytes` bytes from `root`; every rank passes the same count.
void large_bcast(MPI_Comm comm, void* data, std::int64_t bytes, int root);

template <class T>
void large_bcast(MPI_Comm comm, T* data, std::int64_t count, int root) {
  large_bcast(comm, static_cast<void*>(data), count * static_cast<std::int64_t>(sizeof(T)), root);
}

// Nonblocking send and receive of `bytes` bytes, as ceil(bytes / limit)
// messages with `tag`; the requests are appended (none for zero bytes, so both
// ends must agree on the count, as a halo plan does).
void large_isend(MPI_Comm comm, const void* data, std::int64_t bytes, int peer, int tag,
                 std::vector<MPI_Request>& requests);
void large_irecv(MPI_Comm comm, void* data, std::int64_t bytes, int peer, int tag, std::vector<MPI_Request>& requests);

// Blocking versions (the same pieces).
void large_send(MPI_Comm comm, const void* data, std::int64_t bytes, int peer, int tag);
void large_recv(MPI_Comm comm, void* data, std::int64_t bytes, int peer, int tag);

// All-to-all: send_bytes[q] bytes, packed in rank order in `send`, go to rank
// q; recv_bytes[q] bytes from rank q land packed in rank order in `recv`.
// From 1 MiB on (the largest rank's total), where every rank is on one node
// and runs 4 threads or more, through memory they share (node_alltoallv.hpp); else one MPI_Alltoallv where
// every rank's totals fit in one piece (all ranks agree on that), else chunked
// point-to-point messages.
void large_alltoallv(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                     const std::vector<std::int64_t>& recv_bytes);

// Each rank's count to every rank (MPI_Alltoall of one int64 each): what
// large_alltoallv's receivers need to know.
std::vector<std::int64_t> exchange_counts(MPI_Comm comm, const std::vector<std::int64_t>& to_each);

}  // namespace blockeigs::solver
