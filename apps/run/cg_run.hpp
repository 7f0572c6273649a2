// The body of block-cg, kept in a library so the tests reach it.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace blockeigs::apps {

// `overrides`: "KEY=VALUE" from --set, applied over the file (io/config.hpp).
// `dry_run`: print the partition and the memory plan, check it, and stop (exit_ok).
int run_cg(const std::string& config_path, MPI_Comm comm, const std::vector<std::string>& overrides = {},
           bool dry_run = false);

}  // namespace blockeigs::apps
