#include "solver/operator/partition/renumber_columns.hpp"

#include <algorithm>

#include "core/checks.hpp"

namespace blockeigs::solver {

std::vector<std::int64_t> renumber_columns(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& old,
                                           const std::vector<std::int64_t>& renumbered) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::int64_t begin = old.begin(rank), end = old.end(rank);
  std::vector<std::int64_t> wanted;
  for (const std::int64_t j : rows.col_indices)
    if (j < begin || j >= end) wanted.push_back(j);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<std::vector<std::int64_t>> ask(static_cast<std::size_t>(ranks));
  for (const std::int64_t j : wanted) ask[old.owner(j)].push_back(j);  // sorted, so grouped by owner in rank order
  std::vector<std::int64_t> asked_per_rank;
  const std::vector<std::int64_t> asked = all_to_all(comm, ask, &asked_per_rank);
  std::vector<std::vector<std::int64_t>> answer(static_cast<std::size_t>(ranks));
  std::size_t at = 0;
  for (int q = 0; q < ranks; ++q)
    for (std::int64_t n = 0; n < asked_per_rank[q]; ++n, ++at) answer[q].push_back(renumbered[asked[at] - begin]);
  const std::vector<std::int64_t> answers = all_to_all(comm, answer);

  std::vector<std::int64_t> out(rows.col_indices.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t j = rows.col_indices[k];
    out[k] = j >= begin && j < end ? renumbered[j - begin]
                                   : answers[std::lower_bound(wanted.begin(), wanted.end(), j) - wanted.begin()];
  }
  return out;
}

}  // namespace blockeigs::solver
