#include "solver/operator/partition/renumber_columns.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

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

RemoteColumns::RemoteColumns(const std::vector<std::int64_t>& cols, std::int64_t global_cols, std::int64_t begin,
                             std::int64_t end) {
  const auto nnz = static_cast<std::int64_t>(cols.size());
  const bool bitmap = nnz > 0 && global_cols <= 4 * kBitmapBytesPerEntry * nnz;
  if (!bitmap) {
    for (const std::int64_t j : cols)
      if (j < begin || j >= end) columns_.push_back(j);
    std::sort(columns_.begin(), columns_.end());
    columns_.erase(std::unique(columns_.begin(), columns_.end()), columns_.end());
    return;
  }
  const std::int64_t words = (global_cols + 63) / 64;
  reserve_in_huge_pages(bits_, static_cast<std::size_t>(words));
  bits_.assign(static_cast<std::size_t>(words), 0);
  const auto entries = static_cast<std::int64_t>(cols.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < entries; ++k) {
    const std::int64_t j = cols[k];
    if (j >= begin && j < end) continue;
    const std::uint64_t bit = std::uint64_t{1} << (j & 63);
    std::atomic_ref<std::uint64_t> word(bits_[j >> 6]);
    if ((word.load(std::memory_order_relaxed) & bit) == 0) word.fetch_or(bit, std::memory_order_relaxed);
  }
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

int ColumnRenumbering::rank_of(MPI_Comm comm) { return comm_rank(comm); }

ColumnRenumbering::ColumnRenumbering(MPI_Comm comm, RemoteColumns&& columns, const RowPartition& old,
                                     const std::vector<std::int64_t>& renumbered)
    : begin_(old.begin(comm_rank(comm))),
      own_(static_cast<std::uint64_t>(old.rows(comm_rank(comm)))),
      remote_(std::move(columns)) {
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
  const auto asked_size = static_cast<std::int64_t>(asked.size());
  std::int64_t not_mine = 0;  // columns asked of a rank that does not own them
#pragma omp parallel for schedule(static) reduction(+ : not_mine)
  for (std::int64_t k = 0; k < asked_size; ++k) {
    const auto local = static_cast<std::uint64_t>(asked[k] - begin_);
    if (local < own_)
      asked[k] = renumbered[local];
    else
      ++not_mine;
  }
  BLOCKEIGS_ASSERT(not_mine == 0);
  const std::vector<std::int64_t> answers = all_to_all(comm, asked.data(), asked_counts);  // in the order asked
  const auto own = static_cast<std::int64_t>(renumbered.size()), remote = static_cast<std::int64_t>(answers.size());
  std::int64_t largest = -1;
#pragma omp parallel for schedule(static) reduction(max : largest)
  for (std::int64_t k = 0; k < own + remote; ++k)
    largest = std::max(largest, k < own ? renumbered[k] : answers[k - own]);
  if (largest > std::numeric_limits<std::int32_t>::max()) {
    reserve_in_huge_pages(index_, renumbered.size() + answers.size());
    index_.assign(renumbered.begin(), renumbered.end());
    index_.insert(index_.end(), answers.begin(), answers.end());
    return;
  }
  reserve_in_huge_pages(index32_, renumbered.size() + answers.size());
  index32_.resize(renumbered.size() + answers.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < own + remote; ++k)
    index32_[k] = static_cast<std::int32_t>(k < own ? renumbered[k] : answers[k - own]);
}

}  // namespace blockeigs::solver
