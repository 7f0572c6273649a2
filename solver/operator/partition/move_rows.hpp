// Moving a rank's rows to the ranks of a new numbering (distribute_rows.hpp:
// a graph partition, a saved numbering, B after A) in one exchange of
// arrays grouped by destination: each row's new index, input row and
// length, then all columns (already renumbered and sorted in each row by the
// sender) and all values, received into the arrays the rows came in (whose
// pages are warm: a fresh page costs a fault). Receivers place the rows by
// their new index; where they arrive in that order (a graph partition's
// numbering) the arrays received are the rows, else the rows are copied in
// order into the send arrays.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "solver/operator/partition/move_timings.hpp"
#include "solver/operator/partition/renumber_columns.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

template <class V>
struct MovedRowsOf {
  CsrRowsOf<V> rows;                   // this rank's rows of the new numbering
  std::vector<std::int64_t> original;  // each one's row before the move
  MoveTimings timings;
};
using MovedRows = MovedRowsOf<double>;

// Collective. Local row i of `rows` becomes row renumbered[i] of `current`,
// on rank part[i] (its owner there), with its columns renumbered by
// `columns`. `rows` is taken (its arrays receive the rows). Where `source` is not empty, `renumbered` came from the
// user: that the ranks' ranges of `current` do not receive each of their rows exactly once is an InputError (agreed)
// naming it; else a LibraryError. Real (double) or complex (std::complex<double>) values.
template <class V>
MovedRowsOf<V> move_rows(MPI_Comm comm, CsrRowsOf<V>&& rows, const std::vector<int>& part,
                         const std::vector<std::int64_t>& renumbered, const ColumnRenumbering& columns,
                         const RowPartition& current, const std::string& source = "");

}  // namespace blockeigs::solver
