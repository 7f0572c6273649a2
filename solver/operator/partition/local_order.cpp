#include "solver/operator/partition/local_order.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/band_order.hpp"
#include "core/huge_pages.hpp"
#include "solver/operator/partition/renumber_columns.hpp"

namespace blockeigs::solver {
namespace {

// This rank's rows in their new order: new row position[i] is old row i,
// its columns renumbered by `columns` and sorted, in one pass over the old
// rows in their order (each row's reads are sequential and its column
// lookups independent of one another; its writes go to its new place), each
// block of rows sorted while in cache.
template <class V>
CsrRowsOf<V> permuted_rows(const CsrRowsOf<V>& rows, const std::vector<std::int64_t>& position,
                           const ColumnRenumbering& columns) {
  const std::int64_t m = rows.local_rows();
  CsrRowsOf<V> out;
  out.global_rows = rows.global_rows;
  out.global_cols = rows.global_cols;
  out.first_row = rows.first_row;
  out.row_offsets.assign(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t i = 0; i < m; ++i) out.row_offsets[position[i] + 1] = rows.row_offsets[i + 1] - rows.row_offsets[i];
  for (std::int64_t r = 0; r < m; ++r) out.row_offsets[r + 1] += out.row_offsets[r];
  resize_for_parallel_fill(out.col_indices, rows.col_indices.size());
  resize_for_parallel_fill(out.values, rows.values.size());
  const std::int64_t blocks = (m + kRenumberBlockRows - 1) / kRenumberBlockRows;
#pragma omp parallel
  {
    std::vector<std::pair<std::int64_t, V>> scratch;
#pragma omp for schedule(static)
    for (std::int64_t block = 0; block < blocks; ++block) {
      const std::int64_t first = block * kRenumberBlockRows, last = std::min(m, first + kRenumberBlockRows);
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t from = rows.row_offsets[i], at = out.row_offsets[position[i]];
        const std::int64_t length = rows.row_offsets[i + 1] - from;
        columns.renumber(rows.col_indices.data() + from, rows.values.data() + from, length, out.col_indices.data() + at,
                         out.values.data() + at);
      }
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t at = out.row_offsets[position[i]];
        sort_row(out.col_indices.data() + at, out.values.data() + at, rows.row_offsets[i + 1] - rows.row_offsets[i],
                 scratch);
      }
    }
  }
  return out;
}

// Renumbers every rank's rows (real or complex), columns and numbering by `position` (new local row of each
// local row).
void apply_order(DistributedRows& matrix, const std::vector<std::int64_t>& position, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t begin = matrix.partition.begin(rank);
  std::vector<std::int64_t> renumbered(position.size());
  for (std::size_t i = 0; i < position.size(); ++i) renumbered[i] = begin + position[i];
  const auto permute = [&](auto& rows) {
    const ColumnRenumbering columns(comm, rows, matrix.partition, renumbered);
    rows = permuted_rows(rows, position, columns);
  };
  matrix.with_rows(permute);
  matrix.numbering = matrix.numbering.reordered(comm, position);
}

// The diagonal blocks' bandwidth and profile with local row i at
// position(i), maxima over ranks, without moving a row. Collective. Every
// thread takes its rows (docs/benchmarks/time-to-solution.md#band-statistics); the profile's
// terms are whole numbers, so its sum is the same in any order.
template <class V, class Position>
BandStats stats_at(MPI_Comm comm, const CsrRowsOf<V>& rows, const Position& position) {
  const std::int64_t m = rows.local_rows(), begin = rows.first_row, end = begin + m;
  std::int64_t bandwidth = 0;
  double profile = 0;
#pragma omp parallel for schedule(static) reduction(max : bandwidth) reduction(+ : profile)
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t at = position(i);
    std::int64_t first = at;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t j = rows.col_indices[k];
      if (j < begin || j >= end) continue;
      const std::int64_t to = position(j - begin);
      first = std::min(first, to);
      bandwidth = std::max(bandwidth, std::abs(to - at));
    }
    profile += double(at - first);
  }
  profile /= double(std::max<std::int64_t>(1, m));
  const double mine[3] = {double(bandwidth), profile, profile / double(std::max<std::int64_t>(1, m))};
  double most[3] = {0, 0, 0};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, comm));
  return {static_cast<std::int64_t>(most[0]), most[1], most[2]};
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}

// Whether `auto` orders, with its reason in the report.
bool auto_orders(const DistributedRows& matrix, LocalOrderReport& report) {
  if (matrix.partitioning.used == PartitionMethod::graph) {
    report.reason = "auto: after the graph partition";
  } else {
    report.reason = "auto: profile up to " + percent(report.before.profile_fraction) + " of a rank's rows";
    if (report.before.profile_fraction < kAutoProfileFraction) {
      report.reason += ", under " + percent(kAutoProfileFraction);
      return false;
    }
  }
  return true;
}

// Whether the band order giving `after` is kept: as set with `band`, under
// `auto` where it narrows the bandwidth or the profile (the maxima over
// ranks); the rule and its outcome added to the report's reason.
bool keeps(LocalOrder order, const BandStats& after, LocalOrderReport& report) {
  const BandStats& before = report.before;
  const bool narrows = after.bandwidth < before.bandwidth || after.profile < before.profile;
  const char* text = nullptr;
  if (order == LocalOrder::band)
    text = narrows ? nullptr : "as set, though it narrows neither the bandwidth nor the profile";
  else if (narrows)
    text = "kept: it narrows the bandwidth or the profile";
  if (text) report.reason += (report.reason.empty() ? "" : "; ") + std::string(text);
  if (order == LocalOrder::band || narrows) return true;
  char line[192];
  std::snprintf(line, sizeof line,
                "; not kept: it narrows neither the bandwidth (%lld -> %lld) nor the profile (%.0f -> %.0f rows)",
                static_cast<long long>(before.bandwidth), static_cast<long long>(after.bandwidth), before.profile,
                after.profile);
  report.reason += line;
  return false;
}

}  // namespace

template <class V>
BandStats band_stats(MPI_Comm comm, const CsrRowsOf<V>& rows) {
  return stats_at(comm, rows, [](std::int64_t i) { return i; });
}
template BandStats band_stats(MPI_Comm, const CsrRows&);
template BandStats band_stats(MPI_Comm, const ComplexCsrRows&);

void order_rows_locally(DistributedRows& matrix, LocalOrder order, MPI_Comm comm) {
  const double start = MPI_Wtime();
  LocalOrderReport& report = matrix.local_order;
  report = LocalOrderReport{};
  report.requested = order;
  if (order == LocalOrder::none) return;
  report.before = matrix.with_rows([&](const auto& rows) { return band_stats(comm, rows); });
  report.measured = true;
  if (order != LocalOrder::band && !auto_orders(matrix, report)) {
    report.seconds = MPI_Wtime() - start;
    return;
  }
  double lap = MPI_Wtime();
  // Complex rows ordered by their magnitudes' graph (band_order skips explicit zeros).
  const std::vector<std::int64_t> position = collectively(
      comm, [&] { return matrix.complex ? band_order(magnitudes(matrix.complex_rows)) : band_order(matrix.rows); });
  report.ordering_seconds = MPI_Wtime() - lap;
  const auto at = [&](std::int64_t i) { return position[i]; };
  const BandStats after = matrix.with_rows([&](const auto& rows) { return stats_at(comm, rows, at); });
  const bool keep = keeps(order, after, report);
  if (keep) {
    lap = MPI_Wtime();
    apply_order(matrix, position, comm);
    report.renumbering_seconds = MPI_Wtime() - lap;
    report.used = LocalOrder::band;
    report.orderer = band_order_name();
    report.after = after;
  }
  report.seconds = MPI_Wtime() - start;
}

}  // namespace blockeigs::solver
