#include "solver/operator/partition/distribute_rows.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <numeric>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"
#include "solver/operator/partition/move_rows.hpp"
#include "solver/operator/partition/renumber_columns.hpp"

namespace blockeigs::solver {
namespace {

std::atomic<bool> hidden_for_tests{false};

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

// The new numbering from each local row's part: rows are numbered by part,
// then by source rank, then in their local order, so that part p is the
// contiguous range [first[p], first[p + 1]). Returns the new partition and
// each local row's new index.
std::pair<RowPartition, std::vector<std::int64_t>> number_by_parts(MPI_Comm comm, const std::vector<int>& part,
                                                                   std::int64_t global_rows) {
  const int ranks = comm_size(comm);
  std::vector<std::int64_t> count(static_cast<std::size_t>(ranks), 0), before(count.size(), 0), total(count.size());
  for (const int p : part) ++count[p];
  BLOCKEIGS_MPI_CHECK(MPI_Exscan(count.data(), before.data(), ranks, MPI_INT64_T, MPI_SUM, comm));
  if (comm_rank(comm) == 0) std::fill(before.begin(), before.end(), 0);  // MPI_Exscan leaves rank 0's undefined
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(count.data(), total.data(), ranks, MPI_INT64_T, MPI_SUM, comm));
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (int p = 0; p < ranks; ++p) first[p + 1] = first[p] + total[p];
  BLOCKEIGS_ASSERT(first.back() == global_rows);
  std::vector<std::int64_t> next(static_cast<std::size_t>(ranks));
  for (int p = 0; p < ranks; ++p) next[p] = first[p] + before[p];
  std::vector<std::int64_t> renumbered(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) renumbered[i] = next[part[i]]++;
  return {RowPartition(std::move(first)), std::move(renumbered)};
}

// The rows (real or complex) moved to the numbering `current` (each local row's new index in `renumbered`, its
// part `part`), columns renumbered alike, and the numbering against the input's recorded. `source`: as
// move_rows takes it.
void move_to_numbering(DistributedRows& matrix, const std::vector<int>& part, std::vector<std::int64_t> renumbered,
                       RowPartition current, MPI_Comm comm, const std::string& source = "",
                       MoveTimings* timings = nullptr) {
  MoveTimings steps;
  std::vector<std::int64_t> original;
  const auto move = [&](auto& rows) {
    const double start = MPI_Wtime();
    const ColumnRenumbering columns(comm, rows, matrix.partition, renumbered);
    const double seconds = MPI_Wtime() - start;
    auto moved = move_rows(comm, std::move(rows), part, renumbered, columns, current, source);
    rows = std::move(moved.rows);
    original = std::move(moved.original);
    steps = moved.timings;
    steps.columns = seconds;
  };
  matrix.with_rows(move);
  double slowest[5] = {steps.columns, steps.pack, steps.heads, steps.entries, steps.place};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, slowest, 5, MPI_DOUBLE, MPI_MAX, comm));
  steps = {slowest[0], slowest[1], slowest[2], slowest[3], slowest[4]};
  matrix.partitioning.move = steps;
  if (timings) *timings = steps;
  matrix.numbering = RowNumbering(comm, matrix.partition, current, std::move(original), std::move(renumbered));
  matrix.partition = std::move(current);
}

// Each row's part: the rank whose range of `current` holds its new index.
std::vector<int> parts_of(const std::vector<std::int64_t>& renumbered, const RowPartition& current) {
  std::vector<int> part(renumbered.size());
  const auto rows = static_cast<std::int64_t>(part.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) part[i] = current.owner(renumbered[i]);
  return part;
}

// Partitions the graph (of complex rows: of their magnitudes, made for the partitioner and dropped before the
// move) and moves the rows; times the partitioner.
void partition_and_move(DistributedRows& matrix, MPI_Comm comm) {
  const int ranks = comm_size(comm);
  double start = MPI_Wtime();
  std::vector<int> part;
  {
    const CsrRows complex_pattern = matrix.complex ? magnitudes(matrix.complex_rows) : CsrRows{};
    const CsrRows& pattern = matrix.complex ? complex_pattern : matrix.rows;
    const GraphPartitionTuning tuning = chosen_partition_tuning(comm, pattern);
    part = partition_graph(comm, pattern, matrix.partition, ranks, tuning);
    matrix.partitioning.partitioner = describe_partitioner(tuning, ranks);
  }
  matrix.partitioning.partitioner_seconds = MPI_Wtime() - start;
  auto [current, renumbered] = number_by_parts(comm, part, matrix.partition.global_rows());
  move_to_numbering(matrix, part, std::move(renumbered), std::move(current), comm);
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}

}  // namespace

bool graph_partitioner_available() { return graph_partitioner_compiled() && !hidden_for_tests.load(); }

void hide_graph_partitioner_for_tests(bool hidden) { hidden_for_tests.store(hidden); }

template <class V>
double contiguous_halo_fraction(MPI_Comm comm, const CsrRowsOf<V>& rows, const RowPartition& partition) {
  const int rank = comm_rank(comm);
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank);
  const auto halo = static_cast<double>(RemoteColumns(rows, begin, end).columns().size());
  const double mine = halo / static_cast<double>(std::max<std::int64_t>(1, end - begin));
  double largest = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &largest, 1, MPI_DOUBLE, MPI_MAX, comm));
  return largest;
}

template double contiguous_halo_fraction(MPI_Comm, const CsrRows&, const RowPartition&);
template double contiguous_halo_fraction(MPI_Comm, const ComplexCsrRows&, const RowPartition&);

void distribute_rows(DistributedRows& matrix, PartitionMethod method, MPI_Comm comm, LocalOrder order) {
  const double start = MPI_Wtime();
  PartitionReport& report = matrix.partitioning;
  report = PartitionReport{};
  report.requested = method;
  const int ranks = comm_size(comm);
  bool partition = method == PartitionMethod::graph;
  if (method == PartitionMethod::graph && !graph_partitioner_available())
    fail_input_everywhere(
        "execution.partition: graph needs PT-Scotch, which this build of block-eigs does not "
        "have (install libptscotch-dev and configure again: BLOCKEIGS_WITH_PTSCOTCH), or set "
        "execution.partition: contiguous");
  if (method == PartitionMethod::automatic && ranks > 1) {
    report.contiguous_halo =
        matrix.with_rows([&](const auto& rows) { return contiguous_halo_fraction(comm, rows, matrix.partition); });
    report.reason = "auto: contiguous halo up to " + percent(report.contiguous_halo) + " of a rank's rows";
    if (report.contiguous_halo < kAutoHaloFraction) {
      report.reason += ", under " + percent(kAutoHaloFraction);
    } else if (!graph_partitioner_available()) {
      report.reason += "; a graph partition would cut it, but this build has no PT-Scotch (libptscotch-dev)";
    } else {
      partition = true;
    }
  } else if (ranks == 1 && method != PartitionMethod::contiguous) {
    report.reason = "1 rank: nothing to partition";
  }
  // One rank has no halo: nothing to gain from moving rows.
  if (partition && ranks > 1) {
    partition_and_move(matrix, comm);
    report.used = PartitionMethod::graph;
  }
  report.seconds = MPI_Wtime() - start;
  order_rows_locally(matrix, order, comm);
}

void distribute_by_numbering(DistributedRows& matrix, const RowPartition& current,
                             const std::vector<std::int64_t>& renumbered, const std::string& source, MPI_Comm comm,
                             MoveTimings* timings) {
  const double start = MPI_Wtime();
  const int ranks = comm_size(comm);
  const std::int64_t n = matrix.partition.global_rows();
  // Every index in range here; each range receiving each of its rows once, where they arrive (move_rows).
  collectively(comm, [&] {
    if (current.ranks() != ranks || current.global_rows() != n)
      fail_input(source, ": a numbering of ", current.global_rows(), " rows over ", current.ranks(),
                 " ranks, for a matrix of ", n, " rows on ", ranks);
    if (static_cast<std::int64_t>(renumbered.size()) != matrix.partition.rows(comm_rank(comm)))
      throw LibraryError("distribute_by_numbering: one index per local row expected");
    for (const std::int64_t i : renumbered)
      if (i < 0 || i >= n) fail_input(source, ": row index ", i, " is outside [0, ", n, ")");
  });
  matrix.partitioning = PartitionReport{};
  move_to_numbering(matrix, parts_of(renumbered, current), renumbered, current, comm, source, timings);
  matrix.partitioning.source = source;
  matrix.partitioning.seconds = MPI_Wtime() - start;
  matrix.local_order = LocalOrderReport{};  // the saved numbering holds the order too
}

void distribute_like(DistributedRows& second, const DistributedRows& first, MPI_Comm comm) {
  const RowNumbering& numbering = first.numbering;
  if (second.partition.first_rows() != numbering.original().first_rows())
    throw LibraryError("distribute_like: the second matrix is not on the first's input partition");
  second.partitioning = first.partitioning;
  if (!numbering.is_identity()) {
    const std::vector<std::int64_t>& renumbered = numbering.current_of_original();
    const std::vector<int> part = parts_of(renumbered, numbering.current());
    second.with_rows([&](auto& rows) {
      const ColumnRenumbering columns(comm, rows, second.partition, renumbered);
      rows = move_rows(comm, std::move(rows), part, renumbered, columns, numbering.current()).rows;
    });
  }
  second.partition = first.partition;
  second.numbering = numbering;
}

}  // namespace blockeigs::solver
