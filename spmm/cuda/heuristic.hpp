// Choice between our two CUDA SpMM kernels, and the few tuning constants of
// the kernels themselves, from a small table fitted to spmm-bench results
// (scripts/fit_heuristic.py prints a new table from a bench CSV).
#pragma once

#include <cstdint>

#include "core/enums.hpp"

namespace blockeigs::spmm::cuda {

// row_split or merge_based for a matrix with `rows` rows and this mean row
// length, multiplied by a block of n columns in `precision`. Rows beyond the
// paper's rule: row-split runs one row per group of lanes, so a matrix with
// few rows (a 2 x 8M block) cannot fill the GPU with it whatever the mean.
Algorithm choose_algorithm(double mean_row_length, std::int64_t n, Precision precision,
                           std::int64_t rows);

// Lanes of a row group that split the row's nonzeros (GK, a power of two at
// most 32 / GC), given the GC lanes that split its columns and the U nonzeros
// whose B rows one lane loads at once: the fewest lanes that let a mean row
// be done in `passes_per_row` rounds of U loads per lane. Fewer lanes per row
// means more rows per warp, so more independent loads in flight.
int nonzero_lanes(double mean_row_length, int column_lanes, int unroll);

// Merge path items (rows + nonzeros) per warp segment of the merge kernel:
// enough segments for `waves` full waves of warps on the device, between the
// table's bounds (a power of two).
std::int64_t merge_items_per_segment(std::int64_t rows, std::int64_t nnz, int multiprocessors);

}  // namespace blockeigs::spmm::cuda
