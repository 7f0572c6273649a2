#include "apps/run/partition_file.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "apps/run/output/distributed_output.hpp"
#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/distribute_rows.hpp"

namespace blockeigs::apps {
namespace {

constexpr const char* kKind = "block-eigs partition";

// A float64 column's entries as row indices: whole numbers in [0, limit].
std::vector<std::int64_t> as_indices(const io::DenseRows& rows, const std::string& what, std::int64_t limit) {
  std::vector<std::int64_t> out;
  out.reserve(rows.values.size());
  for (const double v : rows.values) {
    if (!(v >= 0 && v <= static_cast<double>(limit) && v == std::floor(v)))
      fail_input(what, " holds ", v, ", not a row index in [0, ", limit, "]");
    out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

}  // namespace

bool partition_file_exists(const std::string& path, MPI_Comm comm) {
  int rank = 0, exists = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0) exists = std::filesystem::exists(path) ? 1 : 0;
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&exists, 1, MPI_INT, 0, comm));
  return exists != 0;
}

void read_partition_file(solver::DistributedRows& matrix, const std::string& path, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::string source = "execution.partition_file " + path;
  const std::int64_t n = matrix.partition.global_rows();
  // Every rank reads the attributes and /first_rows (small) and its own range of /row_index.
  auto [first_rows, renumbered] = solver::collectively(comm, [&] {
    if (io::read_root_string_if_present(path, "kind").value_or("") != kKind)
      fail_input(source, ": not a partition file (its root attribute kind is not \"", kKind, "\")");
    const std::int64_t file_ranks = io::read_root_integer(path, "ranks");
    const std::int64_t file_rows = io::read_root_integer(path, "global_rows");
    const std::int64_t file_nnz = io::read_root_integer(path, "global_nnz");
    if (file_ranks != ranks)
      fail_input(source, " was written for ", file_ranks, " ranks; this run has ", ranks,
                 " (remove it, or name another file, to partition again)");
    if (file_rows != n || file_nnz != matrix.global_nnz)
      fail_input(source, " was written for a matrix of ", file_rows, " rows and ", file_nnz, " nonzeros; this one (",
                 matrix.description, ") has ", n, " and ", matrix.global_nnz);
    const io::DenseRows first = io::read_hdf5_dense_rows(path, "/first_rows", 0, ranks + 1, ranks + 1);
    const solver::RowPartition& input = matrix.partition;
    const io::DenseRows index = io::read_hdf5_dense_rows(path, "/row_index", input.begin(rank), input.end(rank), n);
    if (first.cols != 1 || index.cols != 1) fail_input(source, ": /first_rows and /row_index must be vectors");
    std::vector<std::int64_t> f = as_indices(first, source + ": /first_rows", n);
    for (int r = 0; r < ranks; ++r)
      if (f[r] > f[r + 1]) fail_input(source, ": /first_rows decreases at rank ", r + 1);
    if (f.front() != 0 || f.back() != n) fail_input(source, ": /first_rows must run from 0 to ", n);
    return std::pair{std::move(f), as_indices(index, source + ": /row_index", n - 1)};
  });
  solver::distribute_by_numbering(matrix, solver::RowPartition(std::move(first_rows)), renumbered, source, comm);
}

void write_partition_file(solver::DistributedRows& matrix, const std::string& path, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const solver::RowNumbering& numbering = matrix.numbering;
  const solver::RowPartition& input = numbering.original();
  // Each input row's row in the operator's numbering (itself where nothing moved).
  std::vector<double> index(static_cast<std::size_t>(input.rows(rank)));
  const std::vector<std::int64_t>& moved = numbering.current_of_original();
  for (std::size_t i = 0; i < index.size(); ++i)
    index[i] = static_cast<double>(moved.empty() ? input.begin(rank) + static_cast<std::int64_t>(i) : moved[i]);
  const std::vector<std::int64_t>& first = matrix.partition.first_rows();
  const solver::PartitionReport& p = matrix.partitioning;
  write_distributed_output(
      comm, path,
      [&](io::Hdf5Writer& w) {
        w.attribute("/", "kind", kKind);
        w.attribute("/", "ranks", std::int64_t{ranks});
        w.attribute("/", "global_rows", input.global_rows());
        w.attribute("/", "global_nnz", matrix.global_nnz);
        w.attribute("/", "matrix", matrix.description);
        w.attribute("/", "partitioner", p.partitioner.empty() ? std::string("none (contiguous)") : p.partitioner);
        w.write_matrix("/first_rows", ranks + 1, 1, std::vector<double>(first.begin(), first.end()));
      },
      {held_block("/row_index", input.global_rows(), 1, input.begin(rank), std::move(index))});
  matrix.partitioning.saved_to = path;
}

}  // namespace blockeigs::apps
