// What a run on complex Hermitian values takes so far, checked before the
// operator is built: block-eigs with Chebyshev-filtered subspace iteration on
// a standard problem, block-cg with jacobi, chebyshev, no preconditioner or a complex PETSc's PC; rows
// distributed as real ones are (execution.partition, local_order, partition_file). Every setting they do not
// take yet is refused by key, on every rank, with what to do instead.
#pragma once

#include <mpi.h>

#include "config/run_config.hpp"
#include "solver/operator/load_matrix.hpp"

namespace blockeigs::apps {

// InputError on every rank (each holds the same config and knows the field) naming the first setting a
// complex run does not take.
void check_complex_eigs(const cfg::EigsConfig& config, const solver::DistributedRows& matrix);

// The same for block-cg: InputError on every rank naming the first setting a complex run does not take.
void check_complex_cg(const cfg::CgConfig& config, const solver::DistributedRows& matrix);

// The Hermitian check of complex rows not Hermitian by construction (HDF5 files; solver::check_hermitian),
// before the rows are distributed. Collective.
void check_complex_rows(const solver::DistributedRows& matrix, MPI_Comm comm, const dense::Context* context);

}  // namespace blockeigs::apps
