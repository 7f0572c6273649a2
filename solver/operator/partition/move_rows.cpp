#include "solver/operator/partition/move_rows.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/operator/collective.hpp"

namespace blockeigs::solver {
namespace {

// An array whose elements the caller writes before reading (no zeroing pass).
template <class T>
std::unique_ptr<T[]> scratch_array(std::int64_t size) {
  return std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(std::max<std::int64_t>(size, 1)));
}

// The send side: rows grouped by destination rank, in their local order
// within each group, as arrays of rows (new index, input row, length) and of
// entries (new columns, values).
struct Outgoing {
  std::vector<std::int64_t> rows_to, entries_to;  // per destination
  std::unique_ptr<std::int64_t[]> index, original, length, cols;
  std::unique_ptr<double[]> values;
};

Outgoing pack(const io::CsrRows& rows, const std::vector<int>& part, const std::vector<std::int64_t>& renumbered,
              const ColumnRenumbering& columns, int ranks) {
  const std::int64_t m = rows.local_rows();
  Outgoing out;
  out.rows_to.assign(static_cast<std::size_t>(ranks), 0);
  out.entries_to.assign(out.rows_to.size(), 0);
  for (std::int64_t i = 0; i < m; ++i) {
    ++out.rows_to[part[i]];
    out.entries_to[part[i]] += rows.row_offsets[i + 1] - rows.row_offsets[i];
  }
  // Where each row's head and entries go: counting passes, then one pass that copies.
  std::vector<std::int64_t> next_row(out.rows_to.size(), 0), next_entry(out.rows_to.size(), 0);
  for (int q = 1; q < ranks; ++q) {
    next_row[q] = next_row[q - 1] + out.rows_to[q - 1];
    next_entry[q] = next_entry[q - 1] + out.entries_to[q - 1];
  }
  const auto slot = scratch_array<std::int64_t>(m), at = scratch_array<std::int64_t>(m);
  for (std::int64_t i = 0; i < m; ++i) {
    slot[i] = next_row[part[i]]++;
    at[i] = next_entry[part[i]];
    next_entry[part[i]] += rows.row_offsets[i + 1] - rows.row_offsets[i];
  }
  out.index = scratch_array<std::int64_t>(m);
  out.original = scratch_array<std::int64_t>(m);
  out.length = scratch_array<std::int64_t>(m);
  out.cols = scratch_array<std::int64_t>(rows.nnz());
  out.values = scratch_array<double>(rows.nnz());
#pragma omp parallel
  {
    std::vector<std::pair<std::int64_t, double>> scratch;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t b = rows.row_offsets[i], length = rows.row_offsets[i + 1] - b;
      out.index[slot[i]] = renumbered[i];
      out.original[slot[i]] = rows.first_row + i;
      out.length[slot[i]] = length;
      copy_renumbered_row(columns, rows.col_indices.data() + b, rows.values.data() + b, length,
                          out.cols.get() + at[i], out.values.get() + at[i], scratch);
    }
  }
  return out;
}

// For each row of this rank's range of `current`, the position among the
// `index` received of the row that goes there; checked to be a permutation.
std::vector<std::int64_t> arrival_of(MPI_Comm comm, const std::vector<std::int64_t>& index,
                                     const RowPartition& current, int rank, const std::string& source) {
  const std::int64_t m = current.rows(rank), begin = current.begin(rank);
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(m), -1);
  collectively(comm, [&] {
    const auto received = static_cast<std::int64_t>(index.size());
    for (std::int64_t r = 0; r < received; ++r) {
      const std::int64_t local = index[r] - begin;
      BLOCKEIGS_ASSERT(local >= 0 && local < m);  // sent to the range's owner
      if (arrival[local] >= 0) {
        if (source.empty()) throw LibraryError(detail::concat("moving rows: row ", index[r], " sent twice"));
        fail_input(source, ": row index ", index[r], " is given to two rows (not a permutation)");
      }
      arrival[local] = r;
    }
    if (received == m) return;
    if (source.empty())
      throw LibraryError(detail::concat("moving rows: rank ", rank, " received ", received, " rows for its ", m));
    fail_input(source, ": rank ", rank, "'s range holds ", m, " rows, but ", received, " rows are numbered into it");
  });
  return arrival;
}

}  // namespace

MovedRows move_rows(MPI_Comm comm, const io::CsrRows& rows, const std::vector<int>& part,
                    const std::vector<std::int64_t>& renumbered, const ColumnRenumbering& columns,
                    const RowPartition& current, const std::string& source) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(part.size()) == rows.local_rows() && part.size() == renumbered.size());
  const Outgoing out = pack(rows, part, renumbered, columns, ranks);
  const std::vector<std::int64_t> index = all_to_all(comm, out.index.get(), out.rows_to);
  const std::vector<std::int64_t> arrival = arrival_of(comm, index, current, rank, source);
  const std::vector<std::int64_t> original = all_to_all(comm, out.original.get(), out.rows_to);
  const std::vector<std::int64_t> length = all_to_all(comm, out.length.get(), out.rows_to);
  std::vector<std::int64_t> cols = all_to_all(comm, out.cols.get(), out.entries_to);
  std::vector<double> values = all_to_all(comm, out.values.get(), out.entries_to);

  const std::int64_t m = current.rows(rank);
  MovedRows moved;
  io::CsrRows& to = moved.rows;
  to.global_rows = rows.global_rows;
  to.global_cols = rows.global_cols;
  to.first_row = current.begin(rank);
  to.row_offsets.resize(static_cast<std::size_t>(m) + 1);
  to.row_offsets[0] = 0;
  moved.original.resize(static_cast<std::size_t>(m));
  bool in_order = true;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t r = arrival[i];
    to.row_offsets[i + 1] = to.row_offsets[i] + length[r];
    moved.original[i] = original[r];
    in_order = in_order && r == i;
  }
  if (in_order) {  // as a graph partition numbers them: by source rank, each source's in its order
    to.col_indices = std::move(cols);
    to.values = std::move(values);
    return moved;
  }
  std::vector<std::int64_t> start(static_cast<std::size_t>(m) + 1, 0);  // each arrival's first entry
  for (std::int64_t r = 0; r < m; ++r) start[r + 1] = start[r] + length[r];
  to.col_indices.resize(cols.size());
  to.values.resize(values.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t from = start[arrival[i]], n = to.row_offsets[i + 1] - to.row_offsets[i];
    std::memcpy(to.col_indices.data() + to.row_offsets[i], cols.data() + from, sizeof(std::int64_t) * n);
    std::memcpy(to.values.data() + to.row_offsets[i], values.data() + from, sizeof(double) * n);
  }
  return moved;
}

}  // namespace blockeigs::solver
