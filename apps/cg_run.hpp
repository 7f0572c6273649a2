// The body of block-cg, kept in a library so the tests reach it.
#pragma once

#include <mpi.h>

#include <string>

namespace blockeigs::apps {

int run_cg(const std::string& config_path, MPI_Comm comm);

}  // namespace blockeigs::apps
