// The steps of moving rows to a new numbering (move_rows.hpp), for the run's
// account and partition-bench.
#pragma once

namespace blockeigs::solver {

// The slowest rank's seconds in each step of a move, where the caller agreed them; else this rank's.
struct MoveTimings {
  double columns = 0;  // the new index of every column (ColumnRenumbering, by the caller)
  double pack = 0;     // the rows grouped by destination, their columns renumbered and sorted
  double heads = 0;    // each row's new index, input row and length exchanged, their places found
  double entries = 0;  // the columns and values exchanged
  double place = 0;    // the rows put in the order of the new numbering
};

}  // namespace blockeigs::solver
