// Two numberings of a distributed matrix's rows: the input's (its file or
// generator), split in contiguous ranges as load_distributed_rows reads it,
// and the operator's, where a graph partition has moved rows to other ranks
// and renumbered them so that each rank still owns a contiguous range, and
// where each rank may have ordered its own rows anew (a band ordering). The
// operator, its halo plan and the solvers see only the operator's numbering;
// what the user reads or writes (start blocks, right-hand sides, results)
// goes through to_original_rows / from_original_rows.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

class RowNumbering {
 public:
  RowNumbering() = default;
  // The operator's numbering is the input's (a contiguous distribution).
  static RowNumbering identity(MPI_Comm comm, const RowPartition& partition);
  // `original_of_local`: for each of this rank's rows in `current`, its row in
  // the input; `current_of_original`: for each row of this rank's range of
  // `original`, its row in `current`.
  RowNumbering(MPI_Comm comm, RowPartition original, RowPartition current, std::vector<std::int64_t> original_of_local,
               std::vector<std::int64_t> current_of_original);

  bool is_identity() const { return identity_; }
  // The input's numbering, in contiguous ranges (rank r reads rows [begin(r), end(r)) of a file).
  const RowPartition& original() const { return original_; }
  // The operator's.
  const RowPartition& current() const { return current_; }
  // The input's row of this rank's local row i (operator's numbering).
  std::int64_t original_row(std::int64_t local) const;
  // For each row of this rank's range of original(), its row in current()
  // (empty for the identity): what moves a second matrix's rows as the first's.
  const std::vector<std::int64_t>& current_of_original() const { return current_of_original_; }

  // This numbering after every rank has reordered its own rows: local row i
  // becomes local row position[i] (a permutation of this rank's rows; the
  // ranges stay). Collective: the ranks holding the input's ranges learn
  // where their rows went.
  RowNumbering reordered(MPI_Comm comm, const std::vector<std::int64_t>& position) const;

  // Collective. `block`: this rank's rows in the operator's numbering,
  // row-major with `cols` columns (host). Returns this rank's rows of the
  // input's contiguous range [original().begin(rank), end(rank)), in order.
  template <class T>
  std::vector<T> to_original_rows(MPI_Comm comm, const std::vector<T>& block, std::int64_t cols) const;
  // The inverse: `block` holds this rank's rows of the input's contiguous
  // range; returns this rank's rows in the operator's numbering.
  template <class T>
  std::vector<T> from_original_rows(MPI_Comm comm, const std::vector<T>& block, std::int64_t cols) const;

 private:
  // Sends row i of `block` (row_bytes each) to the rank owning row
  // target[i] of `to`, which stores it at out + (target[i] - to.begin(rank)) * row_bytes;
  // rows that stay on their rank are copied there directly.
  static void move_rows(MPI_Comm comm, const char* block, std::int64_t row_bytes,
                        const std::vector<std::int64_t>& target, const RowPartition& to, char* out);

  bool identity_ = true;
  int rank_ = 0;
  RowPartition original_, current_;
  std::vector<std::int64_t> original_of_local_, current_of_original_;
};

}  // namespace blockeigs::solver
