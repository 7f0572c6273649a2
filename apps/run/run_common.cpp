#include "apps/run/run_common.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "apps/build_info.hpp"
#include "apps/run/partition_file.hpp"
#include "core/checks.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {

std::string config_text(const std::string& path, const std::vector<std::string>& overrides, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank != 0) return {};
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  if (!overrides.empty()) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "# overridden on the command line:\n";
    for (const std::string& assignment : overrides) out += "# --set " + assignment + "\n";
  }
  return out;
}

void write_provenance(io::Hdf5Writer& writer, const std::string& app, const spmm::Context& context, MPI_Comm comm) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  writer.attribute("/", "app", app);
  writer.attribute("/", "version", std::string(version()));
  writer.attribute("/", "commit", std::string(git_commit()));
  writer.attribute("/", "backend", context.space() == Space::device ? "cuda" : "cpu");
  writer.attribute("/", "ranks", std::int64_t{ranks});
  writer.attribute("/", "date", date);
}

void check_output_path(const std::string& path, MPI_Comm comm, const std::string& key) {
  if (path.empty()) return;
  solver::collectively(comm, [&] {
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (rank == 0) io::check_output_writable(path, key);
  });
}

solver::DistributedRows load_symmetric_matrix(const io::MatrixConfig& config, PartitionMethod partition,
                                              LocalOrder order, MPI_Comm comm, const std::string& partition_file,
                                              RunAccount* account, const spmm::Context* context) {
  auto lap = [&](Phase phase) {
    if (account) account->lap(phase);
  };
  const bool saved = !partition_file.empty() && partition_file_exists(partition_file, comm);
  // A file to be written must be writable before the partitioner's time is spent.
  if (!partition_file.empty() && !saved) check_output_path(partition_file, comm, "execution.partition_file");
  lap(Phase::config);
  solver::DistributedRows matrix = solver::load_distributed_rows(config, comm);
  lap(Phase::read);
  if (saved) {
    read_partition_file(matrix, partition_file, comm);
    lap(Phase::partition);  // reading the file; moving the rows by it is moving rows
    if (account) account->move(Phase::partition, Phase::move_rows, matrix.partitioning.seconds);
    // After the move, where a row's partners are mostly on its own rank.
    if (!matrix.symmetric_by_construction)
      solver::check_symmetric(comm, matrix.rows, matrix.partition, matrix.description, "A", &matrix.numbering,
                              context);
    lap(Phase::symmetry);
    return matrix;
  }
  // The partitioner needs a symmetric pattern: checked first.
  if (!matrix.symmetric_by_construction)
    solver::check_symmetric(comm, matrix.rows, matrix.partition, matrix.description, "A", nullptr, context);
  lap(Phase::symmetry);
  solver::distribute_rows(matrix, partition, comm, order);
  lap(Phase::partition);
  if (account) {
    const solver::PartitionReport& p = matrix.partitioning;
    if (p.used == PartitionMethod::graph) account->move(Phase::partition, Phase::move_rows, p.seconds - p.partitioner_seconds);
    account->move(Phase::partition, Phase::local_order, matrix.local_order.seconds);
  }
  if (!partition_file.empty()) write_partition_file(matrix, partition_file, comm);
  lap(Phase::partition);
  return matrix;
}

void print_setup(const RunAccount& account, MPI_Comm comm) {
  const RunTimes t = account.agreed(comm);
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::printf("%s", t.setup_line().c_str());
    std::fflush(stdout);
  }
}

void write_account(RunAccount& account, io::Hdf5Writer* writer, double copying, MPI_Comm comm) {
  account.lap(Phase::write);
  account.move(Phase::write, Phase::gather, copying);
  const RunTimes t = account.agreed(comm);
  if (writer) t.write_attributes(*writer);
}

RunTimes print_account_end(RunAccount& account, MPI_Comm comm) {
  account.lap(Phase::report);
  const RunTimes t = account.agreed(comm);
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0) std::printf("%s%s", t.output_line().c_str(), t.wall_line().c_str());
  return t;
}

io::DenseRows read_dense_rows(const std::string& file, const std::string& dataset,
                              const solver::RowNumbering& numbering, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const solver::RowPartition& input = numbering.original();
  io::DenseRows rows = solver::collectively(comm, [&] {
    return io::read_hdf5_dense_rows(file, dataset, input.begin(rank), input.end(rank), input.global_rows());
  });
  rows.values = numbering.from_original_rows(comm, rows.values, rows.cols);
  return rows;
}

template <class T>
spmm::DenseBlock<T> from_host_doubles(Space space, std::int64_t rows, std::int64_t cols,
                                      const std::vector<double>& values) {
  spmm::DenseBlock<T> block(space, rows, cols);
  const std::vector<T> narrowed(values.begin(), values.end());
  spmm::copy_bytes(block.data(), space, narrowed.data(), Space::host, sizeof(T) * narrowed.size());
  return block;
}

template <class T>
spmm::DenseBlock<T> random_rows(const spmm::Context& context, const solver::RowNumbering& numbering,
                                std::int64_t cols, std::uint64_t seed, MPI_Comm comm, std::int64_t first_column) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t m = numbering.current().rows(rank);
  if (numbering.is_identity()) {
    spmm::DenseBlock<T> block(context.space(), m, cols);
    solver::fill_random(context, block.view(), seed, numbering.current().begin(rank), first_column);
    return block;
  }
  // Each row drawn for its index in the input: no rows move.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) rows[i] = numbering.original_row(i);
  const spmm::Buffer<std::int64_t> where(context.space(), rows);
  spmm::DenseBlock<T> block(context.space(), m, cols);
  solver::fill_random_rows(context, block.view(), seed, where.data(), first_column);
  context.synchronize();  // `where` goes when this returns
  return block;
}

std::string scientific(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*e", digits, value);
  return text;
}

template spmm::DenseBlock<float> random_rows(const spmm::Context&, const solver::RowNumbering&, std::int64_t,
                                             std::uint64_t, MPI_Comm, std::int64_t);
template spmm::DenseBlock<double> random_rows(const spmm::Context&, const solver::RowNumbering&, std::int64_t,
                                              std::uint64_t, MPI_Comm, std::int64_t);
template spmm::DenseBlock<float> from_host_doubles(Space, std::int64_t, std::int64_t, const std::vector<double>&);
template spmm::DenseBlock<double> from_host_doubles(Space, std::int64_t, std::int64_t, const std::vector<double>&);

}  // namespace blockeigs::apps
