// The files a run of block-eigs or block-cg reads and writes, each with the
// config key that names it, and the check that no written file is a read one.
#pragma once

#include <mpi.h>

#include <vector>

#include "config/run_config.hpp"
#include "io/path_clash.hpp"

namespace blockeigs::apps {

struct RunPaths {
  std::vector<io::KeyedPath> reads;
  std::vector<io::KeyedPath> writes;  // output.stop_file too: the run removes it when it appears
};

// A partition file (execution.partition_file) is read where it exists and
// written where it does not; a checkpoint may be written over the checkpoint
// the run resumed from (`resume`), which is read whole before the first write.
RunPaths run_paths(const cfg::EigsConfig& config);
RunPaths run_paths(const cfg::CgConfig& config);

// Refuses, on every rank and before anything is written, a run that would
// write over a file it reads or write two outputs to one file; the message
// names both keys and both paths (io::read_write_clash). Collective.
void check_inputs_not_outputs(const RunPaths& paths, MPI_Comm comm);

}  // namespace blockeigs::apps
