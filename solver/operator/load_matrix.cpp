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
  Values values = Values::real_only;
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

// Whether the values are loaded as complex: matrix.field, else as the source holds them. A complex source
// under field: real is refused (its imaginary parts would be lost); a real one under field: complex is taken
// with imaginary parts 0.
bool loads_complex(const io::MatrixConfig& config, bool source_complex, const std::string& description,
                   const Target& target) {
  if (target.like && target.values == Values::real_only && (source_complex || config.field == io::MatrixField::complex))
    fail_input(target.what(description),
               " holds complex values and A real ones: A x = lambda B x with a complex Hermitian B needs a complex "
               "A (matrix.field: complex takes a real A as complex)");
  if (config.field == io::MatrixField::real && source_complex)
    fail_input(description, " holds complex values but ", target.key,
               ".field is real (their imaginary parts would be lost): use field: complex or auto");
  const bool complex = source_complex || config.field == io::MatrixField::complex;
  if (complex && target.values == Values::real_only)
    fail_input(description, source_complex ? " holds complex values" : ": matrix.field is complex",
               ", and this program takes real matrices only (block-eigs takes complex Hermitian ones)");
  return complex;
}

// A real block as the complex rows it also is.
ComplexCsrRows as_complex(CsrRows&& rows) {
  ComplexCsrRows out{
      rows.global_rows, rows.global_cols, rows.first_row, std::move(rows.row_offsets), std::move(rows.col_indices), {}};
  out.values.assign(rows.values.begin(), rows.values.end());
  return out;
}

// Where this rank is and how many ranks share the matrix.
struct Place {
  int rank = 0, ranks = 1;
};

void load_generated(const io::MatrixConfig& config, MPI_Comm comm, const Place& at, const Target& target,
                    DistributedRows& out) {
  const io::GeneratorSpec& spec = config.generator;
  out.description = io::describe(spec);
  out.symmetric_by_construction = true;
  // Every rank computes the (cheap) row offsets, so no communication is needed.
  std::vector<std::int64_t> offsets = collectively(comm, [&] {
    io::validate(spec, target.key + ".generator");
    check_rows(io::generated_rows(spec), at.ranks, out.description, target);
    return io::generated_row_offsets(spec);
  });
  out.partition = split(offsets, at.ranks, target);
  out.global_nnz = offsets.back();
  out.complex =
      collectively(comm, [&] { return loads_complex(config, io::generates_complex(spec), out.description, target); });
  const std::int64_t begin = out.partition.begin(at.rank), end = out.partition.end(at.rank);
  if (io::generates_complex(spec))
    out.complex_rows = io::generate_complex_rows(spec, begin, end);
  else if (out.complex)
    out.complex_rows = as_complex(io::generate_rows(spec, begin, end));
  else
    out.rows = io::generate_rows(spec, begin, end);
}

void load_hdf5(const io::MatrixConfig& config, MPI_Comm comm, const Place& at, const Target& target,
               DistributedRows& out) {
  out.description = config.file + ":" + config.group;
  // Rank 0 reads and checks the offsets; the others receive them.
  int source_complex = 0;
  std::vector<std::int64_t> offsets = collectively(comm, [&] {
    std::vector<std::int64_t> o;
    if (at.rank == 0) {
      const io::Hdf5CsrInfo info = io::read_hdf5_csr_info(config.file, config.group);
      check_square(info.rows, info.cols, out.description, target);
      check_rows(info.rows, at.ranks, out.description, target);
      source_complex = info.complex ? 1 : 0;
      loads_complex(config, info.complex, out.description, target);  // refused here, named once
      o = io::read_hdf5_row_offsets(config.file, config.group);
    }
    return o;
  });
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&source_complex, 1, MPI_INT, 0, comm));
  out.complex = loads_complex(config, source_complex != 0, out.description, target);
  long long count = static_cast<long long>(offsets.size());
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, comm));
  offsets.resize(static_cast<std::size_t>(count));
  large_bcast(comm, offsets.data(), count, 0);  // rows + 1 int64: past 2^31 bytes from 268M rows
  out.partition = split(offsets, at.ranks, target);
  out.global_nnz = offsets.back();
  const std::int64_t begin = out.partition.begin(at.rank), end = out.partition.end(at.rank);
  collectively(comm, [&] {
    if (out.complex)
      out.complex_rows = io::read_hdf5_complex_csr_rows(config.file, config.group, begin, end);
    else
      out.rows = io::read_hdf5_csr_rows(config.file, config.group, begin, end);
  });
}

// Matrix Market files are text and at most a few million entries: each rank
// parses the file and keeps its own rows. A complex file not marked Hermitian
// is checked here, whole, as every rank holds it.
void load_matrix_market(const io::MatrixConfig& config, MPI_Comm comm, const Place& at, const Target& target,
                        DistributedRows& out) {
  out.description = config.file;
  out.complex = collectively(comm, [&] {
    const auto size = io::read_matrix_market_size(config.file);
    return loads_complex(config, size && size->complex, config.file, target);
  });
  const auto take = [&](auto& file, auto& rows) {
    out.partition = split(file.matrix.row_offsets, at.ranks, target);
    out.global_nnz = file.matrix.nnz();
    rows = slice_rows(file.matrix, out.partition.begin(at.rank), out.partition.end(at.rank));
  };
  const auto checked = [&](auto read) {
    return collectively(comm, [&] {
      auto f = read(config.file);
      check_square(f.matrix.global_rows, f.matrix.global_cols, config.file, target);
      check_rows(f.matrix.global_rows, at.ranks, config.file, target);
      return f;
    });
  };
  if (out.complex) {
    io::ComplexMatrixMarketFile file =
        checked([](const std::string& path) { return io::read_complex_matrix_market(path); });
    collectively(comm, [&] {  // square, so the check can pair every entry with its partner
      if (file.symmetry != io::MatrixMarketSymmetry::hermitian) io::check_hermitian(file.matrix, config.file);
    });
    out.symmetric_by_construction = true;
    take(file, out.complex_rows);
    return;
  }
  io::MatrixMarketFile file = checked([](const std::string& path) { return io::read_matrix_market(path); });
  out.symmetric_by_construction = file.symmetry != io::MatrixMarketSymmetry::general;
  take(file, out.rows);
}

DistributedRows load(const io::MatrixConfig& config, MPI_Comm comm, const Target& target) {
  Place at;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &at.rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &at.ranks));
  DistributedRows out;
  switch (config.source) {
    case io::MatrixSource::generator: load_generated(config, comm, at, target, out); break;
    case io::MatrixSource::hdf5: load_hdf5(config, comm, at, target, out); break;
    case io::MatrixSource::matrix_market: load_matrix_market(config, comm, at, target, out); break;
  }
  out.numbering = RowNumbering::identity(comm, out.partition);
  return out;
}

}  // namespace

DistributedRows load_distributed_rows(const io::MatrixConfig& config, MPI_Comm comm, Values values) {
  return load(config, comm, Target{nullptr, "matrix", values});
}

DistributedRows load_distributed_rows_like(const io::MatrixConfig& config, const RowPartition& like,
                                           const std::string& key, MPI_Comm comm, Values values) {
  return load(config, comm, Target{&like, key, values});
}

void widen_to_complex(DistributedRows& matrix) {
  if (matrix.complex) return;
  matrix.complex_rows = as_complex(std::move(matrix.rows));
  matrix.rows = CsrRows{};
  matrix.complex = true;
}

}  // namespace blockeigs::solver
