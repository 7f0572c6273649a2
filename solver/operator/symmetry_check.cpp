#include "solver/operator/symmetry_check.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/huge_pages.hpp"
#include "core/thread_share.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/operator/symmetry_check_device.hpp"

namespace blockeigs::solver {
namespace {

constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
std::atomic<bool> wide_for_tests{false};

// The mismatching entry with the smallest (row, col) this rank has checked.
struct Mismatch {
  std::int64_t row = none, col = none;
  double value = 0, transpose = 0;  // A(row, col) and A(col, row)

  void check(std::int64_t i, std::int64_t j, double aij, double aji) {
    const bool close = std::abs(aij - aji) <= 1e-12 * std::max(std::abs(aij), std::abs(aji));
    if (!close && std::tie(i, j) < std::tie(row, col)) *this = {i, j, aij, aji};
  }
  void take_smaller(const Mismatch& other) {
    if (std::tie(other.row, other.col) < std::tie(row, col)) *this = other;
  }
};

// A(first_row + local_row, col), 0 where it is not stored (a row's columns are sorted).
double stored(const CsrRows& rows, std::int64_t local_row, std::int64_t col) {
  const auto begin = rows.col_indices.begin() + rows.row_offsets[local_row];
  const auto end = rows.col_indices.begin() + rows.row_offsets[local_row + 1];
  const auto it = std::lower_bound(begin, end, col);
  return it != end && *it == col ? rows.values[it - rows.col_indices.begin()] : 0.0;
}

// Visits entries 0..count-1 of a stream whose entry e is looked up in local row
// row_at(e) (negative: none). Where the numbering is not banded these rows are
// random, each lookup a chain of cache misses (offsets, then columns and
// values), so the rows of later entries are fetched ahead, in two stages.
template <class RowAt, class Visit>
void visit_prefetching(const CsrRows& rows, std::int64_t first, std::int64_t count, RowAt row_at, Visit visit) {
  constexpr std::int64_t ahead = 16;
  for (std::int64_t e = first; e < count; ++e) {
    if (e + 2 * ahead < count) {
      const std::int64_t r = row_at(e + 2 * ahead);
      if (r >= 0) __builtin_prefetch(&rows.row_offsets[r]);
    }
    if (e + ahead < count) {
      const std::int64_t r = row_at(e + ahead);
      if (r >= 0) {
        __builtin_prefetch(rows.col_indices.data() + rows.row_offsets[r]);
        __builtin_prefetch(rows.values.data() + rows.row_offsets[r]);
      }
    }
    visit(e);
  }
}

template <class T>
std::vector<T> all_to_all(MPI_Comm comm, const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
                          const std::vector<std::int64_t>& recv_counts) {
  std::vector<std::int64_t> send_bytes(send_counts.size()), recv_bytes(recv_counts.size());
  std::int64_t received = 0;
  for (std::size_t q = 0; q < send_counts.size(); ++q) {
    send_bytes[q] = send_counts[q] * static_cast<std::int64_t>(sizeof(T));
    recv_bytes[q] = recv_counts[q] * static_cast<std::int64_t>(sizeof(T));
    received += recv_counts[q];
  }
  std::vector<T> recv;
  resize_for_parallel_fill(recv, static_cast<std::size_t>(received));
  large_alltoallv(comm, send.data(), send_bytes, recv.data(), recv_bytes);
  return recv;
}

// Entries whose transpose lives on another rank, as columns of the owner's local
// rows: (local row j - owner's first row, column i, value), grouped by owner.
template <class Index>
struct RemoteEntries {
  std::vector<Index> rows, cols;
  std::vector<double> values;
};

// The host's pass over this rank's entries: each local transpose checked in
// place (the smallest mismatch kept). Each thread takes a range of rows, with
// its own smallest mismatch.
void local_pass(const CsrRows& rows, Mismatch& mismatch) {
  const std::int64_t first = rows.first_row, end = first + rows.local_rows();
  auto local_row = [&](std::int64_t k) {
    const std::int64_t j = rows.col_indices[k];
    return j >= first && j < end ? j - first : -1;
  };
  const std::int64_t m = rows.local_rows();
#pragma omp parallel if (m > 0)
  if (m > 0) {
    const auto [row_begin, row_end] = thread_share(m);
    Mismatch mine;
    std::int64_t r = row_begin;  // the row of entry k
    visit_prefetching(rows, rows.row_offsets[row_begin], rows.row_offsets[row_end], local_row, [&](std::int64_t k) {
      while (rows.row_offsets[r + 1] <= k) ++r;
      const std::int64_t j = rows.col_indices[k];
      if (j >= first && j < end && j != first + r)
        mine.check(first + r, j, rows.values[k], stored(rows, j - first, first + r));
    });
#pragma omp critical
    mismatch.take_smaller(mine);
  }
}

// The rows whose entries are sent: all of them, or those the device listed.
struct RowList {
  const std::vector<std::int64_t>* listed = nullptr;
  std::int64_t all = 0;
  std::int64_t size() const { return listed ? static_cast<std::int64_t>(listed->size()) : all; }
  std::int64_t operator[](std::int64_t n) const { return listed ? (*listed)[n] : n; }
};

// Calls take(i, k, owner) for each entry k of the listed rows [begin, stop)
// whose column another rank owns, in order.
template <class Take>
void for_remote_entries(const CsrRows& rows, const RowPartition& partition, const RowList& sending, std::int64_t begin,
                        std::int64_t stop, Take&& take) {
  const std::int64_t first = rows.first_row, end = first + rows.local_rows();
  for (std::int64_t n = begin; n < stop; ++n) {
    const std::int64_t i = sending[n];
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t j = rows.col_indices[k];
      if (j < first || j >= end) take(i, k, partition.owner(j));
    }
  }
}

// The entries of the listed rows whose transpose another rank owns, grouped
// by owner, each group in row order; `send_counts` gets each owner's count.
// Each thread counts its share of the rows by owner, then fills its places.
template <class Index>
RemoteEntries<Index> remote_entries(const CsrRows& rows, const RowPartition& partition, const RowList& sending,
                                    std::vector<std::int64_t>& send_counts) {
  const int ranks = partition.ranks(), threads = omp_get_max_threads();
  // (thread, owner): the thread's count for the owner, then where its next entry goes.
  std::vector<std::int64_t> place(static_cast<std::size_t>(threads) * ranks, 0);
  [[maybe_unused]] int counted = 0;  // the threads the count ran on: the fill's shares must be the same
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    counted = omp_get_num_threads();
    std::int64_t* mine = place.data() + static_cast<std::size_t>(omp_get_thread_num()) * ranks;
    const auto [begin, stop] = thread_share(sending.size());
    for_remote_entries(rows, partition, sending, begin, stop, [&](std::int64_t, std::int64_t, int q) { ++mine[q]; });
  }
  send_counts.assign(static_cast<std::size_t>(ranks), 0);
  std::int64_t at = 0;  // owners in rank order, each owner's threads in thread order
  for (int q = 0; q < ranks; ++q)
    for (int t = 0; t < threads; ++t) {
      std::int64_t& slot = place[static_cast<std::size_t>(t) * ranks + q];
      send_counts[q] += slot;
      at += std::exchange(slot, at);
    }
  RemoteEntries<Index> send;
  resize_for_parallel_fill(send.rows, static_cast<std::size_t>(at));
  resize_for_parallel_fill(send.cols, send.rows.size());
  resize_for_parallel_fill(send.values, send.rows.size());
  const std::int64_t first = rows.first_row;
#pragma omp parallel num_threads(threads)
  {
    BLOCKEIGS_ASSERT(omp_get_num_threads() == counted);
    std::int64_t* mine = place.data() + static_cast<std::size_t>(omp_get_thread_num()) * ranks;
    const auto [begin, stop] = thread_share(sending.size());
    for_remote_entries(rows, partition, sending, begin, stop, [&](std::int64_t i, std::int64_t k, int q) {
      const std::int64_t e = mine[q]++;
      send.rows[e] = static_cast<Index>(rows.col_indices[k] - partition.begin(q));
      send.cols[e] = static_cast<Index>(first + i);
      send.values[e] = rows.values[k];
    });
  }
  return send;
}

// Checks this rank's entries (i, j) against A(j, i): in place where this rank
// owns row j, else on j's owner, to which they are sent. With `device` (a
// device context with room for the rows) the lookups run there and the host
// repeats a pass only where the device found a mismatch, to name it.
template <class Index>
void check_entries(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition, const dense::Context* device,
                   Mismatch& mismatch) {
  const std::int64_t first = rows.first_row;
  std::unique_ptr<DeviceSymmetryRows> on_device;
  DeviceLocalPass pass;
  collectively(comm, [&] {
    if (device && device->space() == Space::device && DeviceSymmetryRows::fits(rows, rows.nnz())) {
      on_device = std::make_unique<DeviceSymmetryRows>(*device, rows);
      pass = on_device->local_pass();
    }
  });
  RowList sending{nullptr, rows.local_rows()};
  if (!on_device || pass.mismatch)
    local_pass(rows, mismatch);
  else
    sending.listed = &pass.remote_rows;
  std::vector<std::int64_t> send_counts;
  const RemoteEntries<Index> send = remote_entries<Index>(rows, partition, sending, send_counts);
  const std::vector<std::int64_t> recv_counts = exchange_counts(comm, send_counts);
  RemoteEntries<Index> recv;
  recv.rows = all_to_all(comm, send.rows, send_counts, recv_counts);
  recv.cols = all_to_all(comm, send.cols, send_counts, recv_counts);
  recv.values = all_to_all(comm, send.values, send_counts, recv_counts);

  // Received (i, j): compared with this rank's A(j, i).
  const bool look_on_host =
      collectively(comm, [&] { return !on_device || on_device->received_mismatch(recv.rows, recv.cols, recv.values); });
  if (!look_on_host) return;
  const auto received = static_cast<std::int64_t>(recv.rows.size());
  visit_prefetching(
      rows, 0, received, [&](std::int64_t e) { return std::int64_t{recv.rows[e]}; },
      [&](std::int64_t e) {
        const std::int64_t row = recv.rows[e], i = recv.cols[e];
        mismatch.check(i, first + row, recv.values[e], stored(rows, row, i));
      });
}

// The smallest mismatching (row, col) over all ranks ({none, none} when there is none).
std::pair<std::int64_t, std::int64_t> smallest(MPI_Comm comm, const Mismatch& mine) {
  std::int64_t row = none, col = none;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine.row, &row, 1, MPI_INT64_T, MPI_MIN, comm));
  if (row == none) return {none, none};
  const std::int64_t my_col = mine.row == row ? mine.col : none;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&my_col, &col, 1, MPI_INT64_T, MPI_MIN, comm));
  return {row, col};
}

// Row g of the operator's numbering in the input's, agreed on by every rank.
std::int64_t input_row(MPI_Comm comm, const RowPartition& partition, const RowNumbering& numbering, std::int64_t g) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t mine = partition.owner(g) == rank ? numbering.original_row(g - partition.begin(rank)) : none;
  std::int64_t agreed = none;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &agreed, 1, MPI_INT64_T, MPI_MIN, comm));
  return agreed;
}

}  // namespace

void check_symmetric(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition, const std::string& what,
                     const std::string& symbol, const RowNumbering* numbering, const dense::Context* device,
                     const AsymmetryMessage& message) {
  if (rows.global_rows != rows.global_cols)
    collectively(comm, [&] { fail_input(what, " is ", rows.global_rows, " x ", rows.global_cols, ", not square"); });

  // Indices relative to the owner's rows fit in int32 where every global index does.
  Mismatch mismatch;
  if (rows.global_cols <= std::numeric_limits<std::int32_t>::max() && !wide_for_tests.load())
    check_entries<std::int32_t>(comm, rows, partition, device, mismatch);
  else
    check_entries<std::int64_t>(comm, rows, partition, device, mismatch);

  // Each entry is checked on one rank only; that rank reports the smallest.
  // Plain names, not a structured binding: clang 14 (the fuzz build) does not capture bindings in lambdas.
  const auto found = smallest(comm, mismatch);
  const std::int64_t row = found.first, col = found.second;
  if (row == none) return;
  const bool moved = numbering && !numbering->is_identity();
  const std::int64_t named_row = moved ? input_row(comm, partition, *numbering, row) : row;
  const std::int64_t named_col = moved ? input_row(comm, partition, *numbering, col) : col;
  collectively(comm, [&] {
    if (mismatch.row != row || mismatch.col != col) return;
    throw InputError(message
                         ? message(named_row, named_col, mismatch.value, mismatch.transpose)
                         : asymmetry_message(what, symbol, named_row, named_col, mismatch.value, mismatch.transpose));
  });
}

std::string asymmetry_message(const std::string& what, const std::string& symbol, std::int64_t row, std::int64_t col,
                              double value, double transpose) {
  std::ostringstream text;
  text << what << ": the matrix is not symmetric: " << symbol << "(" << row << ", " << col << ") = " << value << " but "
       << symbol << "(" << col << ", " << row << ") = " << transpose << " (zero-based indices); "
       << (symbol == "A" ? "block-eigs and block-cg need a symmetric matrix"
                         : symbol + " of A x = lambda B x must be symmetric positive definite");
  return text.str();
}

void set_symmetry_check_wide_indices_for_tests(bool wide) { wide_for_tests.store(wide); }

}  // namespace blockeigs::solver
