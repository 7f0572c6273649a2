// Graph partitioning of a distributed matrix's rows with PT-Scotch (the
// distributed SCOTCH_dgraph* API on the communicator). Built with
// graph_partition_ptscotch.cpp where CMake finds PT-Scotch
// (BLOCKEIGS_WITH_PTSCOTCH), else with graph_partition_none.cpp, whose
// partition_graph throws "not compiled".
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "io/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// Whether this build has a graph partitioner.
bool graph_partitioner_compiled();

// "PT-Scotch 7.0.3" (the library's version), or "none".
std::string graph_partitioner_name();

// The part in [0, parts) of each of this rank's rows. `rows` are this rank's
// rows of `partition` (global column indices) and the matrix's pattern is
// symmetric. The graph has one vertex per row, weighted by the row's
// nonzeros + 1 so that parts balance rows and nonzeros as the contiguous
// split does, and one edge per nonzero off-diagonal entry (self-loops and
// explicit zeros left out). Ranks with no rows take part. Collective;
// throws LibraryError (agreed) when the partitioner fails.
std::vector<int> partition_graph(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& partition,
                                 int parts);

}  // namespace blockeigs::solver
