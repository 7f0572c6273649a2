// A window's memory plan (solver::WindowMemory: the largest slice's blocks
// and the pairs it will hold) beside what the rank holds once the operators
// are built, checked against the free memory before the first slice.
#pragma once

#include <mpi.h>

#include "config/run_config.hpp"
#include "dense/context.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/plan/memory_plan.hpp"
#include "solver/window/window.hpp"

namespace blockeigs::apps {

// The plan of this rank: the matrix's rows and the Buffers held now, then the window's blocks in the
// operator's memory. Refuses on every rank where some rank's share does not fit the free memory (or
// execution.memory_limit_bytes), naming how many ranks would do. Collective.
solver::MemoryPlan check_window_memory(const cfg::EigsConfig& config, const solver::WindowMemory& window,
                                       const solver::DistributedRows& matrix, const dense::Context& context,
                                       MPI_Comm comm);

}  // namespace blockeigs::apps
