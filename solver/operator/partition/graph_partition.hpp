// Graph partitioning of a distributed matrix's rows with PT-Scotch (the
// distributed SCOTCH_dgraph* API on the communicator). Built with
// graph_partition_ptscotch.cpp where CMake finds PT-Scotch
// (BLOCKEIGS_WITH_PTSCOTCH), else with graph_partition_none.cpp, whose
// partition_graph throws "not compiled".
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// How Scotch partitions: its predefined strategy's flags, the imbalance
// allowed, its threads a rank, and whether the graph is partitioned whole on
// rank 0 by sequential Scotch (gathered there, the parts scattered back)
// instead of by PT-Scotch on every rank. PT-Scotch's threads call MPI: more
// than one only where MPI was started with MPI_THREAD_MULTIPLE.
struct GraphPartitionTuning {
  enum Flag : unsigned { speed = 1, safety = 2, balance = 4 };  // SCOTCH_STRATSPEED, ...SAFETY, ...BALANCE
  unsigned flags = 0;
  double imbalance = 0.03;
  int threads = 1;
  bool gathered = false;
};

// Whether this build has a graph partitioner.
bool graph_partitioner_compiled();

// "PT-Scotch 7.0.3" (the library's version), or "none".
std::string graph_partitioner_name();

// What distribute_rows partitions with: the graph whole on rank 0 with rank
// 0's threads (sequential Scotch) where four times its arrays fit half of
// rank 0's free memory, else PT-Scotch on every rank: the first is faster,
// for the same halo (docs/benchmarks/time-to-solution.md#partition-on-rank-0).
// Collective.
GraphPartitionTuning chosen_partition_tuning(MPI_Comm comm, const CsrRows& rows);

// "Scotch 7.0.3 on rank 0, 16 threads" or "PT-Scotch 7.0.3 on 4 ranks".
std::string describe_partitioner(const GraphPartitionTuning& tuning, int ranks);

// The part in [0, parts) of each of this rank's rows. `rows` are this rank's
// rows of `partition` (global column indices) and the matrix's pattern is
// symmetric. The graph has one vertex per row, weighted by the row's
// nonzeros + 1 so that parts balance rows and nonzeros as the contiguous
// split does, and one edge per nonzero off-diagonal entry (self-loops and
// explicit zeros left out). Ranks with no rows take part. Collective;
// throws LibraryError (agreed) when the partitioner fails.
std::vector<int> partition_graph(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition, int parts,
                                 const GraphPartitionTuning& tuning = {});

}  // namespace blockeigs::solver
