// partition-bench --variants: PT-Scotch's partition of one matrix under its
// predefined strategies (speed, safety, balance), imbalances and threads, each
// timed once beside the balance and the halo it gives; and the band order
// with 3 and 1 searches for its start vertex, beside the bandwidth it gives:
// what the partitioner's and the band order's settings are chosen by.
#pragma once

#include <mpi.h>

#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/move_rows.hpp"

namespace blockeigs::apps {

// `matrix`: the matrix as loaded (contiguous rows). `threads`: PT-Scotch's
// threads a rank to try beside one (1: no threaded variant). Collective;
// rank 0 prints.
void time_partition_variants(MPI_Comm comm, const solver::DistributedRows& matrix, int threads);

// The band order of each rank's `rows` (after a partition) with 3 and with 1
// search for its start vertex: the slowest rank's time and the widest band.
void time_band_orders(MPI_Comm comm, const CsrRows& rows);

// The slowest rank's seconds in each step of a move (`what`), printed by rank 0. Collective.
void print_move_steps(MPI_Comm comm, const char* what, const solver::MoveTimings& steps);

}  // namespace blockeigs::apps
