// The distributed summary the apps print before solving: the matrix, the
// backend, the SpMM algorithm, and each rank's rows, nonzeros, halo and device.
#pragma once

#include <string>

#include "config/run_config.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"

namespace blockeigs::apps {

// How the rows were distributed and ordered: the `partition` line (and the
// move's steps where rows moved) and the `row order` line, this rank's view.
std::string arrangement_lines(const solver::DistributedRows& matrix);

// Collective; returns the text on rank 0 and an empty string elsewhere.
// `block_width` is the width whose SpMM algorithm is reported.
template <class T>
std::string distribution_summary(const solver::DistributedRows& matrix, const solver::DistributedOperator<T>& op,
                                 const cfg::ExecutionConfig& execution, std::int64_t block_width);

}  // namespace blockeigs::apps
