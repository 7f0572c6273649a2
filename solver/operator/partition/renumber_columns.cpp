#include "solver/operator/partition/renumber_columns.hpp"

#include <algorithm>
#include <utility>

#include "core/checks.hpp"

namespace blockeigs::solver {

std::vector<std::int64_t> renumber_columns(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& old,
                                           const std::vector<std::int64_t>& renumbered) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::int64_t begin = old.begin(rank), end = old.end(rank);
  std::vector<std::int64_t> out(rows.col_indices.size());
  // The entries whose column another rank owns, as (column, entry), sorted:
  // each distinct column is asked once, and its answer goes to its entries
  // without a search.
  std::vector<std::pair<std::int64_t, std::int64_t>> remote;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t j = rows.col_indices[k];
    if (j >= begin && j < end)
      out[k] = renumbered[j - begin];
    else
      remote.emplace_back(j, static_cast<std::int64_t>(k));
  }
  std::sort(remote.begin(), remote.end());
  std::vector<std::vector<std::int64_t>> ask(static_cast<std::size_t>(ranks));
  for (std::size_t e = 0; e < remote.size(); ++e)  // sorted, so grouped by owner in rank order
    if (e == 0 || remote[e].first != remote[e - 1].first) ask[old.owner(remote[e].first)].push_back(remote[e].first);
  std::vector<std::int64_t> asked_per_rank;
  const std::vector<std::int64_t> asked = all_to_all(comm, ask, &asked_per_rank);
  std::vector<std::vector<std::int64_t>> answer(static_cast<std::size_t>(ranks));
  std::size_t at = 0;
  for (int q = 0; q < ranks; ++q)
    for (std::int64_t n = 0; n < asked_per_rank[q]; ++n, ++at) answer[q].push_back(renumbered[asked[at] - begin]);
  const std::vector<std::int64_t> answers = all_to_all(comm, answer);  // in the order asked: the columns' order

  std::size_t distinct = 0;
  for (std::size_t e = 0; e < remote.size(); ++e) {
    if (e > 0 && remote[e].first != remote[e - 1].first) ++distinct;
    out[remote[e].second] = answers[distinct];
  }
  return out;
}

}  // namespace blockeigs::solver
