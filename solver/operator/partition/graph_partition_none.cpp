// A build without PT-Scotch: the distribution (distribute_rows.cpp) refuses
// execution.partition: graph before it gets here.
#include "solver/operator/partition/graph_partition.hpp"

#include "core/error.hpp"

namespace blockeigs::solver {

bool graph_partitioner_compiled() { return false; }

std::string graph_partitioner_name() { return "none"; }

GraphPartitionTuning chosen_partition_tuning(MPI_Comm, const CsrRows&) { return {}; }

std::string describe_partitioner(const GraphPartitionTuning&, int) { return "none"; }

std::vector<int> partition_graph(MPI_Comm, const CsrRows&, const RowPartition&, int, const GraphPartitionTuning&) {
  throw LibraryError("graph partitioning is not compiled into this build (no PT-Scotch)");
}

}  // namespace blockeigs::solver
