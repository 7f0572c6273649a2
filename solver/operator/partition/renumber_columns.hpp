// The exchanges that renumber a distributed matrix's rows (move_rows,
// local_order): a typed all-to-all of arrays grouped by destination, the
// distinct columns of a rank's rows that other ranks own, and the new index
// of every column, the remote ones asked once each of the ranks that own them.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/csr_rows.hpp"
#include "solver/base/large_messages.hpp"
#include "core/huge_pages.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// Typed all-to-all: `send` holds send_counts[q] elements for each rank q in
// rank order; returns what every rank sent here, in rank order, and how many
// came from each (recv_counts, where not null). Collective.
template <class T>
std::vector<T> all_to_all(MPI_Comm comm, const T* send, const std::vector<std::int64_t>& send_counts,
                          std::vector<std::int64_t>* recv_counts = nullptr) {
  constexpr auto size = static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> send_bytes(send_counts.size());
  for (std::size_t q = 0; q < send_counts.size(); ++q) send_bytes[q] = send_counts[q] * size;
  const std::vector<std::int64_t> recv_bytes = exchange_counts(comm, send_bytes);
  const auto count =
      static_cast<std::size_t>(std::accumulate(recv_bytes.begin(), recv_bytes.end(), std::int64_t{0}) / size);
  std::vector<T> recv;
  reserve_in_huge_pages(recv, count);
  recv.resize(count);
  large_alltoallv(comm, send, send_bytes, recv.data(), recv_bytes);
  if (recv_counts) {
    recv_counts->resize(recv_bytes.size());
    for (std::size_t q = 0; q < recv_bytes.size(); ++q) (*recv_counts)[q] = recv_bytes[q] / size;
  }
  return recv;
}

// Set bits of a word, inline: in a portable build (no -mpopcnt),
// __builtin_popcountll is a library call.
inline std::int64_t set_bits(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555u);
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
  return static_cast<std::int64_t>((x * 0x0101010101010101u) >> 56);
}

// The distinct columns of `rows` outside [begin, end), ascending (so grouped
// by their owners), and the position of each in that list. They are marked
// in a bitmap over all columns, whose word counts give a position in
// constant time, where it takes at most 4 bytes per entry of `rows`; sorted
// and searched otherwise (a few rows of a very large matrix). Not collective.
class RemoteColumns {
 public:
  // Real or complex rows: only their columns are read.
  template <class V>
  RemoteColumns(const CsrRowsOf<V>& rows, std::int64_t begin, std::int64_t end)
      : RemoteColumns(rows.col_indices, rows.global_cols, begin, end) {}
  RemoteColumns(const std::vector<std::int64_t>& cols, std::int64_t global_cols, std::int64_t begin, std::int64_t end);

  const std::vector<std::int64_t>& columns() const { return columns_; }
  bool has_bitmap() const { return !bits_.empty(); }
  // The position in columns() of `column`, which must be one of them; with
  // the bitmap, any column in [0, global_cols) has one (in [0, size]).
  std::int64_t position(std::int64_t column) const {
    if (bits_.empty()) return search(column);
    const std::uint64_t word = bits_[column >> 6], below = (std::uint64_t{1} << (column & 63)) - 1;
    return before_[column >> 6] + set_bits(word & below);
  }

 private:
  std::int64_t search(std::int64_t column) const;

  std::vector<std::uint64_t> bits_;   // bit j: column j is one of them (empty: sorted instead)
  std::vector<std::int64_t> before_;  // the columns in the words before each word
  std::vector<std::int64_t> columns_;
};

// The new index of every column of `rows` (this rank's rows of `old`, with
// global column indices of `old`): its own rows' from `renumbered` (the new
// index of each of this rank's rows), the others' asked of the ranks that own
// them in `old`, each distinct column once. Collective.
class ColumnRenumbering {
 public:
  template <class V>
  ColumnRenumbering(MPI_Comm comm, const CsrRowsOf<V>& rows, const RowPartition& old,
                    const std::vector<std::int64_t>& renumbered)
      : ColumnRenumbering(comm, RemoteColumns(rows, old.begin(rank_of(comm)), old.end(rank_of(comm))), old,
                          renumbered) {}

  // `column`: one of the rows' columns.
  std::int64_t operator()(std::int64_t column) const {
    const auto local = static_cast<std::uint64_t>(column - begin_);
    if (!remote_.has_bitmap()) return at(local < own_ ? local : own_ + remote_.position(column));
    // The bitmap answers for any column: no branch on which kind of column it is, so that the
    // loads of many columns overlap.
    const std::uint64_t remote = own_ + remote_.position(column);
    return at(local < own_ ? local : remote);
  }

  // One row's entries copied with their columns renumbered: out_cols[k] =
  // (*this)(cols[k]) and out_values[k] = values[k] for k < n (one loop, no
  // library call for a few entries).
  template <class V>
  void renumber(const std::int64_t* cols, const V* values, std::int64_t n, std::int64_t* out_cols,
                V* out_values) const {
    for (std::int64_t k = 0; k < n; ++k) {
      out_cols[k] = (*this)(cols[k]);
      out_values[k] = values[k];
    }
  }

 private:
  ColumnRenumbering(MPI_Comm comm, RemoteColumns&& columns, const RowPartition& old,
                    const std::vector<std::int64_t>& renumbered);
  static int rank_of(MPI_Comm comm);
  std::int64_t at(std::uint64_t k) const { return index32_.empty() ? index_[k] : index32_[k]; }

  std::int64_t begin_ = 0;
  std::uint64_t own_ = 0;  // this rank's rows
  RemoteColumns remote_;
  // The new index of its own rows, then of remote_.columns(): in index32_ where every one fits in int32 (half the
  // table to look up at random, more of it in cache), else in index_.
  std::vector<std::int64_t> index_;
  std::vector<std::int32_t> index32_;
};

// Sorts one row's entries by column, as CsrRows keeps them (its columns are
// distinct). Up to 16 entries each goes to its rank, the count of smaller
// columns (no branch on the data: 5.7 ns an entry against insertion's 9.2 at
// 7 entries on the CPU box, docs/benchmarks/partition.md); insertion up to 32;
// std::sort through `scratch` beyond.
template <class V>
void sort_row(std::int64_t* cols, V* values, std::int64_t length, std::vector<std::pair<std::int64_t, V>>& scratch) {
  constexpr std::int64_t kRanked = 16, kShort = 32;
  if (length <= kRanked) {
    std::int64_t c[kRanked];
    V v[kRanked];
    std::copy_n(cols, length, c);
    std::copy_n(values, length, v);
    for (std::int64_t k = 0; k < length; ++k) {
      std::int64_t rank = 0;
      for (std::int64_t l = 0; l < length; ++l) rank += c[l] < c[k];
      cols[rank] = c[k];
      values[rank] = v[k];
    }
    return;
  }
  if (length <= kShort) {
    for (std::int64_t k = 1; k < length; ++k) {
      const std::int64_t j = cols[k];
      const V v = values[k];
      std::int64_t to = k;
      for (; to > 0 && cols[to - 1] > j; --to) {
        cols[to] = cols[to - 1];
        values[to] = values[to - 1];
      }
      cols[to] = j;
      values[to] = v;
    }
    return;
  }
  scratch.resize(static_cast<std::size_t>(length));
  for (std::int64_t k = 0; k < length; ++k) scratch[k] = {cols[k], values[k]};
  std::sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::int64_t k = 0; k < length; ++k) {
    cols[k] = scratch[k].first;
    values[k] = scratch[k].second;
  }
}

// Rows are renumbered and sorted in blocks of this many: the new columns of a
// block are looked up in one loop (their loads overlap), then each row sorted
// while the block is in cache.
inline constexpr std::int64_t kRenumberBlockRows = 256;

}  // namespace blockeigs::solver
