// A bandwidth-reducing ordering of one rank's rows (execution.local_order:
// band) with Scotch's Gibbs-Poole-Stockmeyer method (ordering strategy "g":
// the level sets of a breadth-first search from a pseudo-peripheral vertex,
// one connected component after another). Built with band_order_scotch.cpp
// where the build has PT-Scotch (which brings Scotch), else with
// band_order_none.cpp, whose band_order throws "not compiled".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/csr_rows.hpp"

namespace blockeigs::solver {

// Whether this build can order rows by band.
bool band_order_compiled();

// "Scotch 7.0.3 Gibbs-Poole-Stockmeyer", or "none".
std::string band_order_name();

// The position in the band order of each of this rank's rows. `rows` holds
// global rows [first_row, first_row + local_rows) with global column indices
// and a symmetric pattern; the graph has an edge for each nonzero between
// two of these rows (columns of other ranks, the diagonal and explicit zeros
// left out). `passes`: Gibbs-Poole-Stockmeyer's searches for a
// pseudo-peripheral start vertex; one (Scotch's default is 3) gave a band
// within 1% as wide in 0.6x the time on a renumbered 96^3 grid
// (partition-bench --variants). Not collective; throws LibraryError when
// Scotch fails.
std::vector<std::int64_t> band_order(const io::CsrRows& rows, int passes = 1);

}  // namespace blockeigs::solver
