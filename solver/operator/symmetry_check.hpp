// Distributed check that a matrix given by row blocks is symmetric: every
// entry (i, j, v) is sent to the owner of row j, which compares it with its
// own (j, i). Used for inputs not symmetric by construction (general Matrix
// Market files, HDF5 files). Collective.
#pragma once

#include <mpi.h>

#include "io/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// Throws InputError (agreed on by all ranks) naming the first mismatch found,
// e.g. "the matrix is not symmetric: A(4, 17) = 2.5 but A(17, 4) = 0"
// (`symbol` names the matrix there: "B" for B of A x = lambda B x).
// Entries match when |a_ij - a_ji| <= 1e-12 * max(|a_ij|, |a_ji|).
void check_symmetric(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& partition,
                     const std::string& what, const std::string& symbol = "A");

}  // namespace blockeigs::solver
