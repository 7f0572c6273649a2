#include "solver/operator/partition/local_order.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/partition/band_order.hpp"
#include "solver/operator/partition/renumber_columns.hpp"

namespace blockeigs::solver {
namespace {

std::atomic<bool> hidden_for_tests{false};

// Sorts entries [begin, end) by column: insertion sort for the short rows of
// meshes, std::sort through a scratch vector for long ones.
void sort_row(std::int64_t* cols, double* values, std::int64_t length,
              std::vector<std::pair<std::int64_t, double>>& scratch) {
  constexpr std::int64_t kShort = 32;
  if (length <= kShort) {
    for (std::int64_t at = 1; at < length; ++at) {
      const std::int64_t j = cols[at];
      const double v = values[at];
      std::int64_t to = at;
      for (; to > 0 && cols[to - 1] > j; --to) {
        cols[to] = cols[to - 1];
        values[to] = values[to - 1];
      }
      cols[to] = j;
      values[to] = v;
    }
    return;
  }
  scratch.clear();
  for (std::int64_t k = 0; k < length; ++k) scratch.emplace_back(cols[k], values[k]);
  std::sort(scratch.begin(), scratch.end());
  for (std::int64_t k = 0; k < length; ++k) std::tie(cols[k], values[k]) = scratch[k];
}

// This rank's rows in their new order: new row position[i] is old row i,
// with `columns` (the new index of each entry's column), sorted in each row
// as CsrRows promises.
io::CsrRows permuted_rows(const io::CsrRows& rows, const std::vector<std::int64_t>& position,
                          const std::vector<std::int64_t>& columns) {
  const std::int64_t m = rows.local_rows();
  std::vector<std::int64_t> source(static_cast<std::size_t>(m));  // the old row of each new row
  for (std::int64_t i = 0; i < m; ++i) source[position[i]] = i;
  io::CsrRows out;
  out.global_rows = rows.global_rows;
  out.global_cols = rows.global_cols;
  out.first_row = rows.first_row;
  out.row_offsets.assign(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t r = 0; r < m; ++r)
    out.row_offsets[r + 1] = out.row_offsets[r] + rows.row_offsets[source[r] + 1] - rows.row_offsets[source[r]];
  out.col_indices.resize(rows.col_indices.size());
  out.values.resize(rows.values.size());
#pragma omp parallel
  {
    std::vector<std::pair<std::int64_t, double>> scratch;
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < m; ++r) {
      const std::int64_t from = rows.row_offsets[source[r]], at = out.row_offsets[r];
      const std::int64_t length = out.row_offsets[r + 1] - at;
      std::copy_n(columns.begin() + from, length, out.col_indices.begin() + at);
      std::copy_n(rows.values.begin() + from, length, out.values.begin() + at);
      sort_row(out.col_indices.data() + at, out.values.data() + at, length, scratch);
    }
  }
  return out;
}

// Orders every rank's rows by band and renumbers rows, columns and the numbering.
void order_by_band(DistributedRows& matrix, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::vector<std::int64_t> position = collectively(comm, [&] { return band_order(matrix.rows); });
  const std::int64_t begin = matrix.partition.begin(rank);
  std::vector<std::int64_t> renumbered(position.size());
  for (std::size_t i = 0; i < position.size(); ++i) renumbered[i] = begin + position[i];
  const std::vector<std::int64_t> columns = renumber_columns(comm, matrix.rows, matrix.partition, renumbered);
  matrix.rows = permuted_rows(matrix.rows, position, columns);
  matrix.numbering = matrix.numbering.reordered(comm, position);
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
  if (band_order_available()) return true;
  report.reason += "; a band order would help, but this build has no Scotch (libptscotch-dev)";
  return false;
}

}  // namespace

bool band_order_available() { return band_order_compiled() && !hidden_for_tests.load(); }

void hide_band_order_for_tests(bool hidden) { hidden_for_tests.store(hidden); }

BandStats band_stats(MPI_Comm comm, const io::CsrRows& rows) {
  const std::int64_t m = rows.local_rows(), begin = rows.first_row, end = begin + m;
  std::int64_t bandwidth = 0;
  double profile = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t first = i;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t j = rows.col_indices[k];
      if (j < begin || j >= end) continue;
      first = std::min(first, j - begin);
      bandwidth = std::max(bandwidth, std::abs(j - begin - i));
    }
    profile += double(i - first);
  }
  profile /= double(std::max<std::int64_t>(1, m));
  const double mine[3] = {double(bandwidth), profile, profile / double(std::max<std::int64_t>(1, m))};
  double most[3] = {0, 0, 0};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, comm));
  return {static_cast<std::int64_t>(most[0]), most[1], most[2]};
}

void order_rows_locally(DistributedRows& matrix, LocalOrder order, MPI_Comm comm) {
  const double start = MPI_Wtime();
  LocalOrderReport& report = matrix.local_order;
  report = LocalOrderReport{};
  report.requested = order;
  if (order == LocalOrder::none) return;
  if (order == LocalOrder::band && !band_order_available())
    fail_input_everywhere("execution.local_order: band needs Scotch, which this build of block-eigs does not have "
                          "(install libptscotch-dev and configure again: BLOCKEIGS_WITH_PTSCOTCH), or set "
                          "execution.local_order: none");
  report.before = band_stats(comm, matrix.rows);
  report.measured = true;
  if (order == LocalOrder::band || auto_orders(matrix, report)) {
    order_by_band(matrix, comm);
    report.used = LocalOrder::band;
    report.orderer = band_order_name();
    report.after = band_stats(comm, matrix.rows);
  }
  report.seconds = MPI_Wtime() - start;
}

}  // namespace blockeigs::solver
