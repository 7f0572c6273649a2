// execution.local_order: the order of each rank's rows within its range.
// distribute_rows leaves each rank's rows in the order they came: the
// input's, or after a graph partition by source rank and then the input's
// order, which for a randomly numbered mesh is random, so that the local
// SpMM reads X with no locality. `band` renumbers each rank's rows by a
// bandwidth-reducing ordering of its own graph (band_order.hpp); the ranges
// stay, and DistributedRows::numbering follows, so that the user still reads
// and writes the input's numbering. `auto` orders after a graph partition and
// where a rank's rows are scattered in its range.
#pragma once

#include <mpi.h>

#include "core/enums.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/load_matrix.hpp"

namespace blockeigs::solver {

// `auto` orders a contiguous distribution when some rank's profile per row
// (BandStats::profile_fraction) reaches this fraction of its rows: a random
// order gives ~0.4, a natural 3D grid's slabs nx * ny / rows (256^3 on 4
// ranks: 0.016).
inline constexpr double kAutoProfileFraction = 0.1;

// The diagonal blocks' bandwidth and profile, maxima over ranks. Collective.
template <class V>
BandStats band_stats(MPI_Comm comm, const CsrRowsOf<V>& rows);

// Collective. `matrix` is as distribute_rows leaves it. Fills
// matrix.local_order; with `band` (or `auto` choosing it) reorders each
// rank's rows and updates matrix.rows (rows and column indices) and
// matrix.numbering.
void order_rows_locally(DistributedRows& matrix, LocalOrder order, MPI_Comm comm);

}  // namespace blockeigs::solver
