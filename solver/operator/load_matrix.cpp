#include "solver/operator/load_matrix.hpp"

#include <string>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/matrix_market.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::solver {
namespace {

// The matrix being loaded: the first (balanced on its own rows) or a second on another's partition.
struct Target {
  const RowPartition* like = nullptr;
  std::string key = "matrix";
  // "matrix_b: b.h5:/B" for messages about a second matrix; the description alone for the first.
  std::string what(const std::string& description) const { return like ? key + ": " + description : description; }
};

void check_square(std::int64_t rows, std::int64_t cols, const std::string& description, const Target& target) {
  if (rows == cols) return;
  fail_input(target.what(description), " is ", rows, " x ", cols, ": ",
             target.like ? "B of A x = lambda B x must be square" : "block-eigs and block-cg need a square matrix");
}

// The first matrix needs a row per rank; a second one the first's row count.
void check_rows(std::int64_t rows, int ranks, const std::string& description, const Target& target) {
  if (target.like) {
    const std::int64_t want = target.like->global_rows();
    if (rows != want)
      fail_input(target.what(description), " is ", rows, " x ", rows, ", but the matrix (A) is ", want, " x ", want,
                 ": B of A x = lambda B x must be the size of A");
    return;
  }
  if (rows < ranks)
    fail_input(description, " has ", rows, " rows, fewer than the ", ranks, " MPI ranks: run with at most ", rows,
               " ranks");
}

RowPartition split(const std::vector<std::int64_t>& offsets, int ranks, const Target& target) {
  return target.like ? *target.like : RowPartition::balanced(offsets, ranks);
}

DistributedRows load(const io::MatrixConfig& config, MPI_Comm comm, const Target& target) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  DistributedRows out;

  switch (config.source) {
    case io::MatrixSource::generator: {
      const io::GeneratorSpec& spec = config.generator;
      out.description = io::describe(spec);
      out.symmetric_by_construction = true;
      // Every rank computes the (cheap) row offsets, so no communication is needed.
      std::vector<std::int64_t> offsets = collectively(comm, [&] {
        io::validate(spec, target.key + ".generator");
        check_rows(io::generated_rows(spec), ranks, out.description, target);
        return io::generated_row_offsets(spec);
      });
      out.partition = split(offsets, ranks, target);
      out.global_nnz = offsets.back();
      out.rows = io::generate_rows(spec, out.partition.begin(rank), out.partition.end(rank));
      break;
    }
    case io::MatrixSource::hdf5: {
      out.description = config.file + ":" + config.group;
      // Rank 0 reads and checks the offsets; the others receive them.
      std::vector<std::int64_t> offsets = collectively(comm, [&] {
        std::vector<std::int64_t> o;
        if (rank == 0) {
          const io::Hdf5CsrInfo info = io::read_hdf5_csr_info(config.file, config.group);
          check_square(info.rows, info.cols, out.description, target);
          check_rows(info.rows, ranks, out.description, target);
          o = io::read_hdf5_row_offsets(config.file, config.group);
        }
        return o;
      });
      long long count = static_cast<long long>(offsets.size());
      BLOCKEIGS_MPI_CHECK(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, comm));
      offsets.resize(static_cast<std::size_t>(count));
      large_bcast(comm, offsets.data(), count, 0);  // rows + 1 int64: past 2^31 bytes from 268M rows
      out.partition = split(offsets, ranks, target);
      out.global_nnz = offsets.back();
      out.rows = collectively(comm, [&] {
        return io::read_hdf5_csr_rows(config.file, config.group, out.partition.begin(rank), out.partition.end(rank));
      });
      break;
    }
    case io::MatrixSource::matrix_market: {
      out.description = config.file;
      // Matrix Market files are text and at most a few million entries: each
      // rank parses the file and keeps its own rows.
      io::MatrixMarketFile file = collectively(comm, [&] {
        io::MatrixMarketFile f = io::read_matrix_market(config.file);
        check_square(f.matrix.global_rows, f.matrix.global_cols, config.file, target);
        check_rows(f.matrix.global_rows, ranks, config.file, target);
        return f;
      });
      out.symmetric_by_construction = file.symmetry != io::MatrixMarketSymmetry::general;
      out.partition = split(file.matrix.row_offsets, ranks, target);
      out.global_nnz = file.matrix.nnz();
      out.rows = slice_rows(file.matrix, out.partition.begin(rank), out.partition.end(rank));
      break;
    }
  }
  out.numbering = RowNumbering::identity(comm, out.partition);
  return out;
}

}  // namespace

DistributedRows load_distributed_rows(const io::MatrixConfig& config, MPI_Comm comm) {
  return load(config, comm, Target{});
}

DistributedRows load_distributed_rows_like(const io::MatrixConfig& config, const RowPartition& like,
                                           const std::string& key, MPI_Comm comm) {
  return load(config, comm, Target{&like, key});
}

}  // namespace blockeigs::solver
