// block-eigs with eigensolver.interval: every eigenpair in [a, b]
// (solver/window), its summary (the spectrum's bounds, the density of
// states' count, each slice) and its result file (the pairs, /window and
// /density).
#pragma once

#include <mpi.h>

#include "apps/run/run_account.hpp"
#include "config/run_config.hpp"
#include "dense/context.hpp"
#include "solver/operator/load_matrix.hpp"

namespace blockeigs::apps {

// Collective; returns the run's exit code (0: every slice complete; 3: not).
template <class T>
int solve_window(const cfg::EigsConfig& config, const solver::DistributedRows& matrix, const dense::Context& context,
                 MPI_Comm comm, RunAccount& account);

}  // namespace blockeigs::apps
