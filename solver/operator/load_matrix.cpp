#include "solver/operator/load_matrix.hpp"

#include <string>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/matrix_market.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/large_messages.hpp"

namespace blockeigs::solver {
namespace {

void check_rank_count(std::int64_t rows, int ranks, const std::string& what) {
  if (rows < ranks)
    fail_input(what, " has ", rows, " rows, fewer than the ", ranks,
               " MPI ranks: run with at most ", rows, " ranks");
}

}  // namespace

DistributedRows load_distributed_rows(const io::MatrixConfig& config, MPI_Comm comm) {
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
        io::validate(spec, "matrix.generator");
        check_rank_count(io::generated_rows(spec), ranks, out.description);
        return io::generated_row_offsets(spec);
      });
      out.partition = RowPartition::balanced(offsets, ranks);
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
          if (info.rows != info.cols)
            fail_input(out.description, " is ", info.rows, " x ", info.cols,
                       ": block-eigs and block-cg need a square matrix");
          check_rank_count(info.rows, ranks, out.description);
          o = io::read_hdf5_row_offsets(config.file, config.group);
        }
        return o;
      });
      long long count = static_cast<long long>(offsets.size());
      BLOCKEIGS_MPI_CHECK(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, comm));
      offsets.resize(static_cast<std::size_t>(count));
      large_bcast(comm, offsets.data(), count, 0);  // rows + 1 int64: past 2^31 bytes from 268M rows
      out.partition = RowPartition::balanced(offsets, ranks);
      out.global_nnz = offsets.back();
      out.rows = collectively(comm, [&] {
        return io::read_hdf5_csr_rows(config.file, config.group, out.partition.begin(rank),
                                      out.partition.end(rank));
      });
      break;
    }
    case io::MatrixSource::matrix_market: {
      out.description = config.file;
      // Matrix Market files are text and at most a few million entries: each
      // rank parses the file and keeps its own rows.
      io::MatrixMarketFile file = collectively(comm, [&] {
        io::MatrixMarketFile f = io::read_matrix_market(config.file);
        if (f.matrix.global_rows != f.matrix.global_cols)
          fail_input(config.file, " is ", f.matrix.global_rows, " x ", f.matrix.global_cols,
                     ": block-eigs and block-cg need a square matrix");
        check_rank_count(f.matrix.global_rows, ranks, config.file);
        return f;
      });
      out.symmetric_by_construction = file.symmetry == io::MatrixMarketSymmetry::symmetric;
      out.partition = RowPartition::balanced(file.matrix.row_offsets, ranks);
      out.global_nnz = file.matrix.nnz();
      out.rows = io::slice_rows(file.matrix, out.partition.begin(rank), out.partition.end(rank));
      break;
    }
  }
  out.numbering = RowNumbering::identity(comm, out.partition);
  return out;
}

}  // namespace blockeigs::solver
