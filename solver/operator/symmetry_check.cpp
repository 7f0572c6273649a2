#include "solver/operator/symmetry_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/large_messages.hpp"

namespace blockeigs::solver {
namespace {

struct Entry {
  std::int64_t row, col;
  double value;
  bool operator<(const Entry& o) const { return std::tie(row, col) < std::tie(o.row, o.col); }
};

}  // namespace

void check_symmetric(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& partition,
                     const std::string& what, const std::string& symbol) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  if (rows.global_rows != rows.global_cols)
    collectively(comm, [&] { fail_input(what, " is ", rows.global_rows, " x ", rows.global_cols, ", not square"); });

  // Transposed entries, grouped by the owner of their (new) row.
  std::vector<std::vector<Entry>> outgoing(static_cast<std::size_t>(ranks));
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t j = rows.col_indices[k];
      outgoing[partition.owner(j)].push_back({j, rows.first_row + i, rows.values[k]});
    }
  // Byte counts in int64 and the exchange in pieces: a rank's entries may pass 2^31 bytes.
  std::vector<std::int64_t> send_bytes(static_cast<std::size_t>(ranks));
  std::vector<Entry> send;
  for (int q = 0; q < ranks; ++q) {
    send_bytes[q] = static_cast<std::int64_t>(outgoing[q].size() * sizeof(Entry));
    send.insert(send.end(), outgoing[q].begin(), outgoing[q].end());
  }
  const std::vector<std::int64_t> recv_bytes = exchange_counts(comm, send_bytes);
  std::int64_t received = 0;
  for (const std::int64_t bytes : recv_bytes) received += bytes;
  std::vector<Entry> transposed(static_cast<std::size_t>(received) / sizeof(Entry));
  large_alltoallv(comm, send.data(), send_bytes, transposed.data(), recv_bytes);
  std::sort(transposed.begin(), transposed.end());

  std::vector<Entry> own;
  own.reserve(static_cast<std::size_t>(rows.nnz()));
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      own.push_back({rows.first_row + i, rows.col_indices[k], rows.values[k]});
  std::sort(own.begin(), own.end());

  // Merge the two sorted lists; an entry present on one side only is
  // compared with zero.
  collectively(comm, [&] {
    auto mismatch = [&](std::int64_t i, std::int64_t j, double aij, double aji) {
      std::ostringstream text;
      text << what << ": the matrix is not symmetric: " << symbol << "(" << i << ", " << j << ") = " << aij << " but "
           << symbol << "(" << j << ", " << i << ") = " << aji << " (zero-based indices); "
           << (symbol == "A" ? "block-eigs and block-cg need a symmetric matrix"
                             : symbol + " of A x = lambda B x must be symmetric positive definite");
      throw InputError(text.str());
    };
    auto close = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); };
    std::size_t p = 0, q = 0;
    while (p < own.size() || q < transposed.size()) {
      if (q == transposed.size() || (p < own.size() && own[p] < transposed[q])) {
        if (own[p].value != 0) mismatch(own[p].row, own[p].col, own[p].value, 0.0);
        ++p;
      } else if (p == own.size() || transposed[q] < own[p]) {
        if (transposed[q].value != 0) mismatch(transposed[q].col, transposed[q].row, transposed[q].value, 0.0);
        ++q;
      } else {
        if (!close(own[p].value, transposed[q].value))
          mismatch(own[p].row, own[p].col, own[p].value, transposed[q].value);
        ++p, ++q;
      }
    }
  });
}

}  // namespace blockeigs::solver
