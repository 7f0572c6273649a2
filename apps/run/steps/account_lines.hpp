// The run account's lines and attributes: the `setup` line before the solve,
// the `output` and `wall` lines at the end, the attributes of a result file.
#pragma once

#include <mpi.h>

#include "apps/run/run_account.hpp"
#include "io/hdf5_writer.hpp"

namespace blockeigs::apps {

// Rank 0 prints the account's `setup` line: where the time until the solve went. Collective.
void print_setup(const RunAccount& account, MPI_Comm comm);
// The last lap (the report) and, on rank 0, the `output` and `wall` lines;
// returns the agreed times. Collective.
RunTimes print_account_end(RunAccount& account, MPI_Comm comm);
// A result file's `write_last` (distributed_output.hpp): the writing so far
// as a lap, of which `copying` (this rank's rows copied for the write) is
// gathering, then the agreed account as attributes on rank 0. Collective.
void write_account(RunAccount& account, io::Hdf5Writer* writer, double copying, MPI_Comm comm);

}  // namespace blockeigs::apps
