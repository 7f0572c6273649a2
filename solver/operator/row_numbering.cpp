#include "solver/operator/row_numbering.hpp"

#include <complex>
#include <cstring>
#include <memory>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::solver {

RowNumbering RowNumbering::identity(MPI_Comm comm, const RowPartition& partition) {
  RowNumbering out;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &out.rank_));
  out.original_ = out.current_ = partition;
  return out;
}

RowNumbering::RowNumbering(MPI_Comm comm, RowPartition original, RowPartition current,
                           std::vector<std::int64_t> original_of_local, std::vector<std::int64_t> current_of_original)
    : identity_(false),
      original_(std::move(original)),
      current_(std::move(current)),
      original_of_local_(std::move(original_of_local)),
      current_of_original_(std::move(current_of_original)) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  BLOCKEIGS_ASSERT(original_.global_rows() == current_.global_rows());
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(original_of_local_.size()) == current_.rows(rank_));
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(current_of_original_.size()) == original_.rows(rank_));
}

std::int64_t RowNumbering::original_row(std::int64_t local) const {
  return identity_ ? current_.begin(rank_) + local : original_of_local_.at(static_cast<std::size_t>(local));
}

RowNumbering RowNumbering::reordered(MPI_Comm comm, const std::vector<std::int64_t>& position) const {
  const std::int64_t rows = current_.rows(rank_), begin = current_.begin(rank_);
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(position.size()) == rows);
  std::vector<std::int64_t> original_of_local(position.size()), new_index(position.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    original_of_local[position[i]] = original_row(i);
    new_index[i] = begin + position[i];
  }
  // Each input row's new index, sent to the rank that holds the row in the input's ranges.
  std::vector<std::int64_t> current_of_original = to_original_rows(comm, new_index, 1);
  return RowNumbering(comm, original_, current_, std::move(original_of_local), std::move(current_of_original));
}

void RowNumbering::move_rows(MPI_Comm comm, const char* block, std::int64_t row_bytes,
                             const std::vector<std::int64_t>& target, const RowPartition& to, char* out) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::int64_t first = to.begin(rank), rows = to.rows(rank);
  // Rows that stay go straight to `out`; each other one travels as a record:
  // its index in `to`, then its bytes, grouped by destination.
  const std::int64_t record = static_cast<std::int64_t>(sizeof(std::int64_t)) + row_bytes;
  std::vector<std::int64_t> send_bytes(static_cast<std::size_t>(ranks), 0);
  std::int64_t kept = 0;
  for (const std::int64_t row : target) {
    const int owner = to.owner(row);
    if (owner == rank)
      ++kept;
    else
      send_bytes[owner] += record;
  }
  std::vector<std::int64_t> at(static_cast<std::size_t>(ranks), 0);
  for (int q = 1; q < ranks; ++q) at[q] = at[q - 1] + send_bytes[q - 1];
  // Packed and received in buffers that are overwritten whole: not zeroed first.
  const auto send = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(at.back() + send_bytes.back()));
  for (std::size_t i = 0; i < target.size(); ++i) {
    const int owner = to.owner(target[i]);
    if (owner == rank) {
      BLOCKEIGS_ASSERT(target[i] >= first && target[i] < first + rows);
      if (row_bytes > 0) std::memcpy(out + (target[i] - first) * row_bytes, block + i * row_bytes, row_bytes);
      continue;
    }
    char* record_at = send.get() + at[owner];
    std::memcpy(record_at, &target[i], sizeof(std::int64_t));
    if (row_bytes > 0) std::memcpy(record_at + sizeof(std::int64_t), block + i * row_bytes, row_bytes);
    at[owner] += record;
  }
  const std::vector<std::int64_t> recv_bytes = exchange_counts(comm, send_bytes);
  std::int64_t received = 0;
  for (const std::int64_t b : recv_bytes) received += b;
  const auto recv = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(received));
  large_alltoallv(comm, send.get(), send_bytes, recv.get(), recv_bytes);
  if (received != (rows - kept) * record)
    throw LibraryError(detail::concat("row redistribution: rank ", rank, " received ", kept + received / record,
                                      " rows for its ", rows));
  for (std::int64_t r = 0; r < rows - kept; ++r) {
    std::int64_t row = 0;
    std::memcpy(&row, recv.get() + r * record, sizeof row);
    BLOCKEIGS_ASSERT(row >= first && row < first + rows);
    if (row_bytes > 0) std::memcpy(out + (row - first) * row_bytes, recv.get() + r * record + sizeof row, row_bytes);
  }
}

template <class T>
std::vector<T> RowNumbering::to_original_rows(MPI_Comm comm, const std::vector<T>& block, std::int64_t cols) const {
  if (identity_) return block;
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(block.size()) ==
                   static_cast<std::int64_t>(original_of_local_.size()) * cols);
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(sizeof(T));
  std::vector<T> out(static_cast<std::size_t>(original_.rows(rank_) * cols));
  move_rows(comm, reinterpret_cast<const char*>(block.data()), row_bytes, original_of_local_, original_,
            reinterpret_cast<char*>(out.data()));
  return out;
}

template <class T>
std::vector<T> RowNumbering::from_original_rows(MPI_Comm comm, const std::vector<T>& block, std::int64_t cols) const {
  if (identity_) return block;
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(block.size()) ==
                   static_cast<std::int64_t>(current_of_original_.size()) * cols);
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(sizeof(T));
  std::vector<T> out(static_cast<std::size_t>(current_.rows(rank_) * cols));
  move_rows(comm, reinterpret_cast<const char*>(block.data()), row_bytes, current_of_original_, current_,
            reinterpret_cast<char*>(out.data()));
  return out;
}

template std::vector<double> RowNumbering::to_original_rows(MPI_Comm, const std::vector<double>&, std::int64_t) const;
template std::vector<float> RowNumbering::to_original_rows(MPI_Comm, const std::vector<float>&, std::int64_t) const;
template std::vector<std::int64_t> RowNumbering::to_original_rows(MPI_Comm, const std::vector<std::int64_t>&,
                                                                  std::int64_t) const;
template std::vector<double> RowNumbering::from_original_rows(MPI_Comm, const std::vector<double>&, std::int64_t) const;
template std::vector<std::complex<double>> RowNumbering::from_original_rows(MPI_Comm,
                                                                            const std::vector<std::complex<double>>&,
                                                                            std::int64_t) const;
template std::vector<std::complex<double>> RowNumbering::to_original_rows(MPI_Comm,
                                                                          const std::vector<std::complex<double>>&,
                                                                          std::int64_t) const;
template std::vector<float> RowNumbering::from_original_rows(MPI_Comm, const std::vector<float>&, std::int64_t) const;
template std::vector<std::int64_t> RowNumbering::from_original_rows(MPI_Comm, const std::vector<std::int64_t>&,
                                                                    std::int64_t) const;

}  // namespace blockeigs::solver
