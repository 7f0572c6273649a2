#include "bench/apps/partition_variants.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "solver/operator/partition/band_order.hpp"
#include "solver/operator/partition/graph_partition.hpp"

namespace blockeigs::apps {
namespace {

using Tuning = solver::GraphPartitionTuning;

struct Quality {
  double imbalance = 0;        // the heaviest part's load (nonzeros + rows) over the mean
  long long halo_largest = 0;  // the most rows a part reads from the others
  long long halo_all = 0;
};

// Each row's part, gathered whole (the bench's matrices fit every rank).
std::vector<int> all_parts(MPI_Comm comm, const std::vector<int>& mine) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size() + 1, 0);
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
  for (int r = 0; r < ranks; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<int> all(static_cast<std::size_t>(offsets.back()));
  BLOCKEIGS_MPI_CHECK(
      MPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT, comm));
  return all;
}

// The balance and halo of `part` (this rank's rows' parts, in [0, parts < 64)).
Quality quality(MPI_Comm comm, const CsrRows& rows, const std::vector<int>& part, int parts) {
  const std::vector<int> owner = all_parts(comm, part);
  std::vector<long long> load(static_cast<std::size_t>(parts), 0), halo(load.size(), 0);
  for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
    const int p = part[i];
    load[p] += rows.row_offsets[i + 1] - rows.row_offsets[i] + 1;
    std::uint64_t readers = 0;  // the other parts that read this row
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      if (const int q = owner[rows.col_indices[k]]; q != p) readers |= std::uint64_t{1} << q;
    for (int q = 0; q < parts; ++q) halo[q] += (readers >> q) & 1;
  }
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, load.data(), parts, MPI_LONG_LONG, MPI_SUM, comm));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, halo.data(), parts, MPI_LONG_LONG, MPI_SUM, comm));
  long long total = 0;
  for (const long long l : load) total += l;
  Quality q;
  q.imbalance = double(*std::max_element(load.begin(), load.end())) * parts / double(total);
  q.halo_largest = *std::max_element(halo.begin(), halo.end());
  for (const long long h : halo) q.halo_all += h;
  return q;
}

std::string describe(const Tuning& t) {
  std::string s = t.flags == 0 ? "default" : "";
  if (t.flags & Tuning::speed) s += "speed ";
  if (t.flags & Tuning::safety) s += "safety ";
  if (t.flags & Tuning::balance) s += "balance ";
  if (!s.empty() && s.back() == ' ') s.pop_back();
  char rest[64];
  std::snprintf(rest, sizeof rest, ", imbalance %.2f, %d thread%s", t.imbalance, t.threads, t.threads > 1 ? "s" : "");
  return (t.gathered ? "rank 0: " : "") + s + rest;
}

// The largest |position(i) - position(j)| over the local block's entries.
std::int64_t bandwidth(const CsrRows& rows, const std::vector<std::int64_t>& position) {
  const std::int64_t begin = rows.first_row, end = begin + rows.local_rows();
  std::int64_t widest = 0;
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      if (const std::int64_t j = rows.col_indices[k]; j >= begin && j < end)
        widest = std::max(widest, std::abs(position[i] - position[j - begin]));
  return widest;
}

}  // namespace

void time_band_orders(MPI_Comm comm, const CsrRows& rows) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<int> variants = {0};  // 0: the apps' order; else Scotch's with that many passes
  if (solver::scotch_band_order_compiled()) variants.insert(variants.end(), {3, 1});
  for (const int passes : variants) {
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
    double seconds = MPI_Wtime();
    const std::vector<std::int64_t> position =
        passes == 0 ? solver::band_order(rows) : solver::scotch_band_order(rows, passes);
    seconds = MPI_Wtime() - seconds;
    long long width = bandwidth(rows, position);
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &width, 1, MPI_LONG_LONG, MPI_MAX, comm));
    if (rank != 0) continue;
    if (passes == 0)
      std::printf("  band order, %-32s %8.3f s, bandwidth %lld (largest over ranks)\n",
                  (solver::band_order_name() + ":").c_str(), seconds, width);
    else
      std::printf("  band order, Scotch's GPS, %d pass%s: %*s%8.3f s, bandwidth %lld (largest over ranks)\n", passes,
                  passes > 1 ? "es" : "", passes > 1 ? 9 : 11, "", seconds, width);
  }
}

void print_move_steps(MPI_Comm comm, const char* what, const solver::MoveTimings& steps) {
  double t[5] = {steps.columns, steps.pack, steps.heads, steps.entries, steps.place};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, t, 5, MPI_DOUBLE, MPI_MAX, comm));
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0)
    std::printf(
        "  %s, by step (slowest rank): columns %.3f s, pack %.3f s, heads %.3f s, entries %.3f s, "
        "place %.3f s\n",
        what, t[0], t[1], t[2], t[3], t[4]);
}

void time_partition_variants(MPI_Comm comm, const solver::DistributedRows& matrix, int threads) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  std::vector<Tuning> variants = {
      {0, 0.03, 1, false}, {Tuning::speed | Tuning::safety, 0.03, 1, false}, {0, 0.03, 1, true}};
  if (threads > 1) variants.push_back({0, 0.03, threads, true});
  // PT-Scotch's own threads need MPI_THREAD_MULTIPLE; 16 took 128 s where one took 30 s (2 ranks, 256^3).
  if (rank == 0) std::printf("PT-Scotch variants, %d parts:\n", ranks);
  for (const Tuning& tuning : variants) {
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
    double seconds = MPI_Wtime();
    const std::vector<int> part = solver::partition_graph(comm, matrix.rows, matrix.partition, ranks, tuning);
    seconds = MPI_Wtime() - seconds;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
    const Quality q = quality(comm, matrix.rows, part, ranks);
    if (rank == 0)
      std::printf("  %-44s %8.3f s, load %.3fx the mean, halo rows largest part %lld, all %lld\n",
                  describe(tuning).c_str(), seconds, q.imbalance, q.halo_largest, q.halo_all);
  }
}

}  // namespace blockeigs::apps
