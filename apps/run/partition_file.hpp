// execution.partition_file: the rows' distribution (graph partition and
// local order) saved, so that later runs on the same matrix and rank count
// skip the partitioner. An HDF5 file: root attributes `kind` ("block-eigs
// partition"), `ranks`, `global_rows`, `global_nnz`, `matrix` (the input's
// description) and `partitioner`; `/first_rows` (ranks + 1: the operator's
// partition) and `/row_index` (for each input row, its row in the operator's
// numbering), both float64 columns, exact for indices below 2^53.
#pragma once

#include <mpi.h>

#include <string>

#include "solver/operator/load_matrix.hpp"

namespace blockeigs::apps {

// Whether `path` exists (rank 0 looks; every rank gets the answer). Collective.
bool partition_file_exists(const std::string& path, MPI_Comm comm);

// `matrix` (as load_distributed_rows leaves it) moved and renumbered by the
// numbering saved in `path`. InputError (agreed) naming the file where it
// is not a partition file, was written for another rank count or another
// matrix (rows, nonzeros), or does not hold a permutation. Collective.
void read_partition_file(solver::DistributedRows& matrix, const std::string& path, MPI_Comm comm);

// `matrix`'s distribution written to `path` (atomically, no file on error),
// and matrix.partitioning.saved_to set. Collective.
void write_partition_file(solver::DistributedRows& matrix, const std::string& path, MPI_Comm comm);

}  // namespace blockeigs::apps
