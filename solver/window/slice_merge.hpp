// Two slices solved apart (slices side by side, slice_groups.hpp) both
// report the pairs near their shared end: the slice above reports from a
// rounding's width below it. Those pairs are merged once, by value and by the
// orthogonality of their vectors: the candidates above, less their
// components along the candidates below (twice), keep the directions whose
// squared length is above one half; none kept drops them, all kept keeps
// them as they are, some kept replaces them by the Ritz pairs of A on the
// directions kept, so that a multiple eigenvalue on the end keeps its
// multiplicity, once.
#pragma once

#include <mpi.h>

#include "solver/base/linear_operator.hpp"
#include "solver/window/slice_iteration.hpp"

namespace blockeigs::solver {

struct MergeOutcome {
  int candidates_below = 0, candidates_above = 0;  // pairs near the end each slice reported
  int kept = 0;                                    // of those above, the new directions kept
};

// The candidates are below's pairs with values >= from and above's with values <= to. `above` is changed:
// its duplicates removed, or replaced by the Ritz pairs kept, its pairs ascending again. Collective over
// A's ranks (reductions on `comm`); both slices' vectors on A's rows.
template <class T>
MergeOutcome merge_shared_end(LinearOperator<T>& A, MPI_Comm comm, const SliceOutcome<T>& below, SliceOutcome<T>& above,
                              double from, double to);

}  // namespace blockeigs::solver
