#include "solver/operator/partition/move_rows.hpp"

#include <algorithm>
#include <atomic>
#include <complex>
#include <utility>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "core/huge_pages.hpp"

namespace blockeigs::solver {
namespace {

constexpr std::int64_t kHead = 3;  // a row's head: new index, input row, length

// The send side: rows grouped by destination rank, in their local order
// within each group; `heads` holds kHead numbers a row, `cols` and `values`
// its entries. cols and values have room for what this rank will receive
// (they take the rows back where the received ones must be reordered).
template <class V>
struct Outgoing {
  std::vector<std::int64_t> rows_to, entries_to, entries_from;  // per rank
  std::vector<std::int64_t> heads, cols;
  std::vector<V> values;
};

// Where block b's first row to each destination q goes: rows[b * ranks + q]
// and entries[b * ranks + q], counted over the blocks of kRenumberBlockRows rows.
struct BlockStarts {
  std::vector<std::int64_t> rows, entries;
};

template <class V>
BlockStarts block_starts(const CsrRowsOf<V>& rows, const std::vector<int>& part, int ranks, Outgoing<V>& out) {
  const std::int64_t m = rows.local_rows(), blocks = (m + kRenumberBlockRows - 1) / kRenumberBlockRows;
  BlockStarts starts;
  starts.rows.assign(static_cast<std::size_t>(blocks * ranks), 0);
  starts.entries.assign(starts.rows.size(), 0);
  for (std::int64_t i = 0; i < m; ++i) {  // per block and destination, then a scan over them all
    const std::int64_t at = (i / kRenumberBlockRows) * ranks + part[i];
    ++starts.rows[at];
    starts.entries[at] += rows.row_offsets[i + 1] - rows.row_offsets[i];
  }
  out.rows_to.assign(static_cast<std::size_t>(ranks), 0);
  out.entries_to.assign(out.rows_to.size(), 0);
  for (int q = 0; q < ranks; ++q)
    for (std::int64_t b = 0; b < blocks; ++b) {
      out.rows_to[q] += starts.rows[b * ranks + q];
      out.entries_to[q] += starts.entries[b * ranks + q];
    }
  std::int64_t row = 0, entry = 0;
  for (int q = 0; q < ranks; ++q)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::swap(row, starts.rows[b * ranks + q]);
      std::swap(entry, starts.entries[b * ranks + q]);
      row += starts.rows[b * ranks + q];
      entry += starts.entries[b * ranks + q];
    }
  return starts;
}

// Packs the rows; each block's rows renumbered in one loop, then sorted while in cache.
template <class V>
Outgoing<V> pack(MPI_Comm comm, const CsrRowsOf<V>& rows, const std::vector<int>& part,
                 const std::vector<std::int64_t>& renumbered, const ColumnRenumbering& columns, int ranks) {
  Outgoing<V> out;
  const BlockStarts starts = block_starts(rows, part, ranks, out);
  out.entries_from = exchange_counts(comm, out.entries_to);
  std::int64_t entries_in = 0;
  for (const std::int64_t e : out.entries_from) entries_in += e;
  const std::int64_t m = rows.local_rows(), blocks = (m + kRenumberBlockRows - 1) / kRenumberBlockRows;
  // Fresh pages faulted in by every thread (room for the entries that come back, where more do).
  resize_for_parallel_fill(out.heads, static_cast<std::size_t>(kHead * m));
  reserve_in_huge_pages(out.cols, static_cast<std::size_t>(std::max(rows.nnz(), entries_in)));
  reserve_in_huge_pages(out.values, out.cols.capacity());
  resize_for_parallel_fill(out.cols, static_cast<std::size_t>(rows.nnz()));
  resize_for_parallel_fill(out.values, out.cols.size());
#pragma omp parallel
  {
    std::vector<std::int64_t> row(static_cast<std::size_t>(ranks)), entry(row.size());
    std::vector<std::pair<std::int64_t, V>> scratch;
#pragma omp for schedule(static)
    for (std::int64_t block = 0; block < blocks; ++block) {
      const std::int64_t first = block * kRenumberBlockRows, last = std::min(m, first + kRenumberBlockRows);
      std::copy_n(starts.rows.begin() + block * ranks, ranks, row.begin());
      std::copy_n(starts.entries.begin() + block * ranks, ranks, entry.begin());
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t b = rows.row_offsets[i], length = rows.row_offsets[i + 1] - b;
        std::int64_t* head = out.heads.data() + kHead * row[part[i]]++;
        head[0] = renumbered[i];
        head[1] = rows.first_row + i;
        head[2] = length;
        const std::int64_t at = entry[part[i]];
        entry[part[i]] += length;
        columns.renumber(rows.col_indices.data() + b, rows.values.data() + b, length, out.cols.data() + at,
                         out.values.data() + at);
      }
      std::copy_n(starts.entries.begin() + block * ranks, ranks, entry.begin());
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t length = rows.row_offsets[i + 1] - rows.row_offsets[i];
        sort_row(out.cols.data() + entry[part[i]], out.values.data() + entry[part[i]], length, scratch);
        entry[part[i]] += length;
      }
    }
  }
  return out;
}

// `v` sized `n` to receive into: its own pages where they hold n, else fresh ones in huge pages, faulted
// in by every thread.
template <class T>
void receive_into(std::vector<T>& v, std::size_t n) {
  if (v.capacity() < n) v.clear();  // an empty vector with too little room is replaced, not grown
  resize_for_parallel_fill(v, n);
}

// Typed large_alltoallv into `recv` (sized by the caller).
template <class T>
void exchange(MPI_Comm comm, const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
              std::vector<T>& recv, const std::vector<std::int64_t>& recv_counts) {
  std::vector<std::int64_t> send_bytes(send_counts.size()), recv_bytes(recv_counts.size());
  for (std::size_t q = 0; q < send_counts.size(); ++q) {
    send_bytes[q] = send_counts[q] * static_cast<std::int64_t>(sizeof(T));
    recv_bytes[q] = recv_counts[q] * static_cast<std::int64_t>(sizeof(T));
  }
  large_alltoallv(comm, send.data(), send_bytes, recv.data(), recv_bytes);
}

// For each row of this rank's range of `current`, the position among the
// heads received of the row that goes there; checked to be a permutation:
// placed in parallel, then, where a slot is left empty or a row is out of
// range, the serial pass names the first offence.
std::vector<std::int64_t> arrival_of(MPI_Comm comm, const std::vector<std::int64_t>& heads, const RowPartition& current,
                                     int rank, const std::string& source) {
  const std::int64_t m = current.rows(rank), begin = current.begin(rank);
  const auto received = static_cast<std::int64_t>(heads.size()) / kHead;
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(m), -1);
  bool fits = received == m;
  if (fits) {
    std::int64_t outside = 0, empty = 0;
#pragma omp parallel for schedule(static) reduction(+ : outside)
    for (std::int64_t r = 0; r < received; ++r) {
      const std::int64_t local = heads[kHead * r] - begin;
      if (local >= 0 && local < m)  // a row given twice leaves a slot empty: m rows into m slots
        std::atomic_ref<std::int64_t>(arrival[local]).store(r, std::memory_order_relaxed);
      else
        ++outside;
    }
#pragma omp parallel for schedule(static) reduction(+ : empty)
    for (std::int64_t i = 0; i < m; ++i) empty += arrival[i] < 0;
    fits = outside == 0 && empty == 0;
    if (!fits) std::fill(arrival.begin(), arrival.end(), -1);
  }
  collectively(comm, [&] {
    if (fits) return;
    for (std::int64_t r = 0; r < received; ++r) {
      const std::int64_t index = heads[kHead * r], local = index - begin;
      BLOCKEIGS_ASSERT(local >= 0 && local < m);  // sent to the range's owner
      if (arrival[local] >= 0) {
        if (source.empty()) throw LibraryError(detail::concat("moving rows: row ", index, " sent twice"));
        fail_input(source, ": row index ", index, " is given to two rows (not a permutation)");
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

// The received rows, in arrival order in `cols` / `values`, placed in the
// order of this rank's range into `to`, whose arrays have room for them.
template <class V>
void place(const std::vector<std::int64_t>& heads, const std::vector<std::int64_t>& arrival,
           const std::vector<std::int64_t>& cols, const std::vector<V>& values, CsrRowsOf<V>& to) {
  const auto m = static_cast<std::int64_t>(arrival.size());
  std::vector<std::int64_t> start(static_cast<std::size_t>(m) + 1, 0);  // each arrival's first entry
  for (std::int64_t r = 0; r < m; ++r) start[r + 1] = start[r] + heads[kHead * r + 2];
  to.col_indices.resize(cols.size());
  to.values.resize(values.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t from = start[arrival[i]], at = to.row_offsets[i], n = to.row_offsets[i + 1] - at;
    for (std::int64_t k = 0; k < n; ++k) {  // a few entries: no library call
      to.col_indices[at + k] = cols[from + k];
      to.values[at + k] = values[from + k];
    }
  }
}

}  // namespace

template <class V>
MovedRowsOf<V> move_rows(MPI_Comm comm, CsrRowsOf<V>&& rows, const std::vector<int>& part,
                         const std::vector<std::int64_t>& renumbered, const ColumnRenumbering& columns,
                         const RowPartition& current, const std::string& source) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(part.size()) == rows.local_rows() && part.size() == renumbered.size());
  MovedRowsOf<V> moved;
  double lap = MPI_Wtime();
  auto next_lap = [&lap] {
    const double now = MPI_Wtime(), seconds = now - lap;
    lap = now;
    return seconds;
  };
  Outgoing<V> out = pack(comm, rows, part, renumbered, columns, ranks);
  moved.timings.pack = next_lap();
  std::vector<std::int64_t> heads_to(out.rows_to.size());
  for (std::size_t q = 0; q < heads_to.size(); ++q) heads_to[q] = kHead * out.rows_to[q];
  const std::vector<std::int64_t> heads = all_to_all(comm, out.heads.data(), heads_to);
  const std::vector<std::int64_t> arrival = arrival_of(comm, heads, current, rank, source);
  moved.timings.heads = next_lap();

  // The entries arrive in the arrays of the rows as they were: warm pages, no fresh ones to fault in.
  CsrRowsOf<V>& to = moved.rows;
  to.global_rows = rows.global_rows;
  to.global_cols = rows.global_cols;
  to.first_row = current.begin(rank);
  to.row_offsets = std::move(rows.row_offsets);
  std::vector<std::int64_t> cols = std::move(rows.col_indices);
  std::vector<V> values = std::move(rows.values);
  rows = CsrRowsOf<V>{};
  std::int64_t entries_in = 0;
  for (const std::int64_t e : out.entries_from) entries_in += e;
  // Overwritten by the exchange: no clear() and fill; where this rank receives more entries than it had,
  // fresh arrays in huge pages rather than a reallocation that copies the old entries.
  receive_into(cols, static_cast<std::size_t>(entries_in));
  receive_into(values, cols.size());
  exchange(comm, out.cols, out.entries_to, cols, out.entries_from);
  exchange(comm, out.values, out.entries_to, values, out.entries_from);
  moved.timings.entries = next_lap();

  const std::int64_t m = current.rows(rank);
  to.row_offsets.resize(static_cast<std::size_t>(m) + 1);
  to.row_offsets[0] = 0;
  moved.original.resize(static_cast<std::size_t>(m));
  std::int64_t out_of_order = 0;
#pragma omp parallel for schedule(static) reduction(+ : out_of_order)
  for (std::int64_t i = 0; i < m; ++i) {  // each row's length, then their running sum
    const std::int64_t r = arrival[i];
    to.row_offsets[i + 1] = heads[kHead * r + 2];
    moved.original[i] = heads[kHead * r + 1];
    out_of_order += r != i;
  }
  for (std::int64_t i = 0; i < m; ++i) to.row_offsets[i + 1] += to.row_offsets[i];
  const bool in_order = out_of_order == 0;
  if (in_order) {  // as a graph partition numbers them: by source rank, each source's in its order
    to.col_indices = std::move(cols);
    to.values = std::move(values);
  } else {  // reordered into the send arrays, whose pages are warm too
    to.col_indices = std::move(out.cols);
    to.values = std::move(out.values);
    place(heads, arrival, cols, values, to);
  }
  moved.timings.place = next_lap();
  return moved;
}

template MovedRowsOf<double> move_rows(MPI_Comm, CsrRowsOf<double>&&, const std::vector<int>&,
                                       const std::vector<std::int64_t>&, const ColumnRenumbering&, const RowPartition&,
                                       const std::string&);
template MovedRowsOf<std::complex<double>> move_rows(MPI_Comm, CsrRowsOf<std::complex<double>>&&,
                                                     const std::vector<int>&, const std::vector<std::int64_t>&,
                                                     const ColumnRenumbering&, const RowPartition&, const std::string&);

}  // namespace blockeigs::solver
