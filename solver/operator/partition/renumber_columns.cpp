#include "solver/operator/partition/renumber_columns.hpp"

#include <algorithm>

#include "core/checks.hpp"

namespace blockeigs::solver {
namespace {

// The bitmap and its word counts take global_cols / 4 bytes: used where that
// is at most this many bytes per entry of the rows.
constexpr std::int64_t kBitmapBytesPerEntry = 4;

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

}  // namespace

RemoteColumns::RemoteColumns(const io::CsrRows& rows, std::int64_t begin, std::int64_t end) {
  const std::vector<std::int64_t>& cols = rows.col_indices;
  const bool bitmap = rows.nnz() > 0 && rows.global_cols <= 4 * kBitmapBytesPerEntry * rows.nnz();
  if (!bitmap) {
    for (const std::int64_t j : cols)
      if (j < begin || j >= end) columns_.push_back(j);
    std::sort(columns_.begin(), columns_.end());
    columns_.erase(std::unique(columns_.begin(), columns_.end()), columns_.end());
    return;
  }
  const std::int64_t words = (rows.global_cols + 63) / 64;
  reserve_in_huge_pages(bits_, static_cast<std::size_t>(words));
  bits_.assign(static_cast<std::size_t>(words), 0);
  for (const std::int64_t j : cols)
    if (j < begin || j >= end) bits_[j >> 6] |= std::uint64_t{1} << (j & 63);
  reserve_in_huge_pages(before_, bits_.size());
  before_.resize(bits_.size());
  std::int64_t count = 0;
  for (std::int64_t w = 0; w < words; ++w) {
    before_[w] = count;
    count += set_bits(bits_[w]);
  }
  columns_.resize(static_cast<std::size_t>(count));
  for (std::int64_t w = 0, at = 0; w < words; ++w)
    for (std::uint64_t word = bits_[w]; word != 0; word &= word - 1) columns_[at++] = 64 * w + __builtin_ctzll(word);
}

std::int64_t RemoteColumns::search(std::int64_t column) const {
  const auto at = std::lower_bound(columns_.begin(), columns_.end(), column);
  BLOCKEIGS_ASSERT(at != columns_.end() && *at == column);
  return at - columns_.begin();
}

ColumnRenumbering::ColumnRenumbering(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& old,
                                     const std::vector<std::int64_t>& renumbered)
    : begin_(old.begin(comm_rank(comm))),
      own_(static_cast<std::uint64_t>(old.rows(comm_rank(comm)))),
      remote_(rows, begin_, begin_ + static_cast<std::int64_t>(own_)) {
  BLOCKEIGS_ASSERT(renumbered.size() == own_);
  const int ranks = old.ranks();
  // Ascending, so grouped by owner in rank order: each owner's share is a range.
  const std::vector<std::int64_t>& ask = remote_.columns();
  std::vector<std::int64_t> ask_counts(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q)
    ask_counts[q] =
        std::lower_bound(ask.begin(), ask.end(), old.end(q)) - std::lower_bound(ask.begin(), ask.end(), old.begin(q));
  std::vector<std::int64_t> asked_counts;
  std::vector<std::int64_t> asked = all_to_all(comm, ask.data(), ask_counts, &asked_counts);
  for (std::int64_t& j : asked) {
    BLOCKEIGS_ASSERT(static_cast<std::uint64_t>(j - begin_) < own_);
    j = renumbered[j - begin_];
  }
  const std::vector<std::int64_t> answers = all_to_all(comm, asked.data(), asked_counts);  // in the order asked
  reserve_in_huge_pages(index_, renumbered.size() + answers.size());
  index_.assign(renumbered.begin(), renumbered.end());
  index_.insert(index_.end(), answers.begin(), answers.end());
}

}  // namespace blockeigs::solver
