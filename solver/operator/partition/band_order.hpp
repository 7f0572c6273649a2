// A bandwidth-reducing ordering of one rank's rows (execution.local_order:
// band): reverse Cuthill-McKee from a pseudo-peripheral vertex, one connected
// component after another (band_order.cpp, every build). Scotch's
// Gibbs-Poole-Stockmeyer ordering stays beside it for partition-bench's
// comparison (band_order_scotch.cpp where the build has Scotch, else
// band_order_none.cpp, whose scotch_band_order throws "not compiled").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"

namespace blockeigs::solver {

// "reverse Cuthill-McKee".
std::string band_order_name();

// The position in the band order of each of this rank's rows. `rows` holds
// global rows [first_row, first_row + local_rows) with global column indices;
// the graph has an edge for each nonzero between two of these rows (columns
// of other ranks, the diagonal and explicit zeros left out). The same for
// any number of threads. Not collective.
std::vector<std::int64_t> band_order(const CsrRows& rows);

// Whether this build has Scotch's ordering for the comparison.
bool scotch_band_order_compiled();

// The same positions by Scotch's Gibbs-Poole-Stockmeyer ordering with
// `passes` searches for its start vertex (Scotch's default is 3), on one
// thread (docs/benchmarks/partition.md#band-order).
// Throws LibraryError when Scotch fails or is not compiled in.
std::vector<std::int64_t> scotch_band_order(const CsrRows& rows, int passes);

}  // namespace blockeigs::solver
