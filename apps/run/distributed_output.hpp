// Writing a result file from all ranks: rank 0 creates it (under a temporary
// name) with the small datasets, the ranks then add their rows of the large
// blocks (all at once through MPI-IO when HDF5 is parallel, else one after
// the other in rank order), and rank 0 moves it into place. Any failure is agreed on by every rank and leaves no
// file behind.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "io/hdf5_writer.hpp"

namespace blockeigs::apps {

struct DistributedBlock {
  std::string dataset;
  std::int64_t global_rows = 0;
  std::int64_t cols = 0;
  std::int64_t first_row = 0;   // this rank's
  std::vector<double> local;    // this rank's rows, row-major
};

// `write_small` runs on rank 0 with the new file open. `write_last`, where
// given, runs on every rank once the blocks are written and before the file
// is moved into place, with the file open on rank 0 (null elsewhere): it may
// call collectives (the run's account of time, written as attributes).
void write_distributed_output(MPI_Comm comm, const std::string& path,
                              const std::function<void(io::Hdf5Writer&)>& write_small,
                              const std::vector<DistributedBlock>& blocks,
                              const std::function<void(io::Hdf5Writer*)>& write_last = {});

}  // namespace blockeigs::apps
