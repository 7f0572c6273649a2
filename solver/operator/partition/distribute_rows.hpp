// execution.partition: where each row of a loaded matrix goes. `contiguous`
// keeps load_distributed_rows' ranges; `graph` partitions the matrix graph
// (graph_partition.hpp), moves the rows to their ranks and renumbers rows
// and columns so that each rank owns a contiguous range of the new
// numbering (DistributedRows::numbering maps it back); `auto` partitions
// where the contiguous split's halo is large.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/enums.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/move_rows.hpp"

namespace blockeigs::solver {

// `auto` keeps the contiguous split while every rank's halo (the rows of
// other ranks its rows reference) is below this fraction of the rows it owns.
inline constexpr double kAutoHaloFraction = 0.05;

// Whether `graph` can run: PT-Scotch compiled in, and not hidden for tests.
bool graph_partitioner_available();

// Test-only: behave as a build without PT-Scotch (so that the messages of
// such a build can be tested in any build). Every rank must set the same.
void hide_graph_partitioner_for_tests(bool hidden);

// Max over ranks of (distinct columns outside the rank's range) / (rows it
// owns, at least 1) for `rows` as distributed by `partition`. Collective.
template <class V>
double contiguous_halo_fraction(MPI_Comm comm, const CsrRowsOf<V>& rows, const RowPartition& partition);

// Collective. `matrix` is as load_distributed_rows leaves it (contiguous
// ranges of the input's numbering) and its pattern is symmetric (checked
// before, where not so by construction). Fills matrix.partitioning; with
// `graph` (or `auto` choosing it) moves the rows as said above; then orders
// each rank's rows by `order` (local_order.hpp; matrix.local_order).
// InputError (agreed) for `graph` or `band` in a build without PT-Scotch.
void distribute_rows(DistributedRows& matrix, PartitionMethod method, MPI_Comm comm,
                     LocalOrder order = LocalOrder::automatic);

// The rows moved and renumbered to a numbering given whole (a saved one):
// `current` the operator's partition, `renumbered` each of this rank's input
// rows' row in it (row_index of a partition file). Replaces distribute_rows
// (partition and local order both). InputError (agreed) naming `source`
// where `current` is not a partition of the matrix's rows over the ranks or
// `renumbered` is not a permutation of them. Collective. `timings`, where
// not null, receives this rank's seconds in each step of the move.
void distribute_by_numbering(DistributedRows& matrix, const RowPartition& current,
                             const std::vector<std::int64_t>& renumbered, const std::string& source, MPI_Comm comm,
                             MoveTimings* timings = nullptr);

// A second matrix (B of A x = lambda B x, loaded on the first's input
// partition: load_distributed_rows_like) moved and renumbered as the first's
// rows were: afterwards both have the same rows on every rank, in the same
// numbering, and `second` carries the first's partition, numbering and
// partition report. Collective.
void distribute_like(DistributedRows& second, const DistributedRows& first, MPI_Comm comm);

}  // namespace blockeigs::solver
