// The apps' memory planning (solver/plan/): the check before the matrix is
// loaded (from its size alone), the check once the operator is built (with
// the exact halo, before the solver's blocks exist), --dry-run's report, and
// the summary line that sets the plan beside the measured peak.
#pragma once

#include <mpi.h>

#include <string>

#include "config/run_config.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/plan/memory_check.hpp"
#include "solver/plan/memory_plan.hpp"
#include "dense/context.hpp"

namespace blockeigs::apps {

// Refuses, on every rank, a run whose estimate from the matrix's size (a
// generator's formula, an HDF5 file's dataset shapes, a Matrix Market
// header) does not fit; nothing large is allocated before. `sides`: the
// host's memory before the rows are read, the device's once its context is
// ready (made while they were read; nothing is on the device yet). A dry run
// that does not fit prints that plan first (rank 0), then is refused the same
// way. Collective.
template <class Config>
void check_memory_from_sizes(const Config& config, Space space, int device, MPI_Comm comm, bool dry_run,
                             solver::MemorySides sides);

// The plan with this rank's exact share, checked against the memory free now
// (what the operators hold counted as the plan's); refuses on every rank
// when it does not fit. Call after the operators are built (A's, and B's of
// A x = lambda B x where there is one), before the solver. Collective.
template <class Config, class T>
solver::MemoryPlan check_memory_with_operator(const Config& config, const solver::DistributedRows& matrix,
                                              const solver::DistributedOperator<T>& op,
                                              const solver::DistributedRows* b = nullptr,
                                              const solver::DistributedOperator<T>* op_b = nullptr);

// --dry-run (`b`: B of A x = lambda B x, or null): the partition with each rank's halo and memory, the largest
// rank's plan item by item, and whether it fits (refused as a run would be).
// Prints on rank 0; returns exit_ok. Collective.
template <class Config>
int print_dry_run(const Config& config, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
                  const dense::Context& context, MPI_Comm comm);

// "memory     plan ... per rank; measured peak ..." for the summary: the
// largest rank's plan and measurement (Buffers' peak in the operator's
// memory; on a GPU also the device's use at that peak, less its use before
// loading). Collective; the line on rank 0, empty elsewhere.
std::string memory_line(const solver::MemoryPlan& plan, MPI_Comm comm);

}  // namespace blockeigs::apps
