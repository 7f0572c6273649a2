// Loads (or generates) a global matrix distributed by contiguous row blocks:
// every rank ends with its own rows only, and the partition is balanced by
// nonzeros plus rows. Collective; a failure on any rank is an error on all.
#pragma once

#include <mpi.h>

#include <string>

#include "io/config.hpp"
#include "io/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

struct DistributedRows {
  io::CsrRows rows;          // this rank's rows, global column indices
  RowPartition partition;    // every rank's row range
  std::int64_t global_nnz = 0;
  std::string description;   // "3D Laplacian 24x24x24 (7-point)", "matrix.h5:/A", ...
  bool symmetric_by_construction = false;  // generator, or a Matrix Market file marked symmetric
};

DistributedRows load_distributed_rows(const io::MatrixConfig& config, MPI_Comm comm);

}  // namespace blockeigs::solver
