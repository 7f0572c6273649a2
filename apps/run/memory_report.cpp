#include "apps/run/memory_report.hpp"

#include <complex>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "apps/cli.hpp"
#include "apps/run/eigs_problem.hpp"
#include "apps/run/preconditioner_setup.hpp"
#include "apps/run/summary.hpp"
#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/hdf5_dense.hpp"
#include "io/matrix_market.hpp"
#include "solver/base/collective.hpp"
#include "solver/plan/memory_check.hpp"
#include "solver/precond/preconditioner_memory.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {
namespace {

// What is known of the matrix before it is loaded; `known` is false where
// the header cannot be read (the loader then says why).
struct MatrixExtent {
  std::int64_t rows = 0, nnz = 0;
  solver::MatrixSourceSize source;
  bool known = false;
};

MatrixExtent matrix_extent(const io::MatrixConfig& m, MPI_Comm comm) {
  MatrixExtent e;
  switch (m.source) {
    case io::MatrixSource::generator:
      e.source.origin = solver::MatrixOrigin::generator;
      solver::collectively(comm, [&] {
        io::validate(m.generator, "matrix.generator");
        e.rows = io::generated_rows(m.generator);
        e.nnz = io::generated_nnz(m.generator);
      });
      e.known = true;
      break;
    case io::MatrixSource::hdf5: {
      e.source.origin = solver::MatrixOrigin::hdf5;
      e.source.symmetric_by_construction = false;
      int rank = 0;
      BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
      long long size[2] = {0, 0};
      solver::collectively(comm, [&] {
        if (rank != 0) return;
        const io::Hdf5CsrInfo info = io::read_hdf5_csr_info(m.file, m.group);
        size[0] = info.rows;
        size[1] = info.nnz;
      });
      BLOCKEIGS_MPI_CHECK(MPI_Bcast(size, 2, MPI_LONG_LONG, 0, comm));
      e.rows = size[0];
      e.nnz = size[1];
      e.known = true;
      break;
    }
    case io::MatrixSource::matrix_market: {
      e.source.origin = solver::MatrixOrigin::matrix_market;
      const std::optional<io::MatrixMarketSize> size = io::read_matrix_market_size(m.file);
      int known = size ? 1 : 0, everywhere = 0;
      BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&known, &everywhere, 1, MPI_INT, MPI_MIN, comm));
      if (!everywhere) break;
      e.rows = size->rows;
      e.nnz = size->symmetric ? 2 * size->entries : size->entries;
      e.source.symmetric_by_construction = size->symmetric;
      // A gzip file's text is some times larger than the file (4x is typical of .mtx).
      e.source.text_bytes = size->compressed ? 4 * size->file_bytes : size->file_bytes;
      e.source.stored_entries = e.nnz;
      e.known = true;
      break;
    }
  }
  return e;
}

// The preconditioner the config asks for, and what it holds (as its class states it).
void set_preconditioner(const solver::PreconditionerOptions& p, SpectrumEnd end, bool eigensolver, Space space,
                        solver::SolverShape& s) {
  s.preconditioner = p.kind != PreconditionerKind::none;
  const Precision problem = s.value_bytes == 4 ? Precision::fp32 : Precision::fp64;
  s.preconditioner_memory =
      solver::preconditioner_memory(p.kind, problem, space, solver::chebyshev_options(p, end, eigensolver));
}

int value_bytes(const cfg::ExecutionConfig& execution) { return execution.spmm_precision == Precision::fp32 ? 4 : 8; }

// A complex run's shape, its values of `bytes` (8: complex single, 16: complex double): block CG's and
// LOBPCG's blocks twice the bytes of their parts (the polynomial's blocks too; its diagonals stay real); the
// filter's blocks likewise, mixed as its parts decide. (Where complex values take LOBPCG, real ones do too:
// `shape` is LOBPCG's already.)
template <class Config>
void complex_shape(const Config& config, solver::SolverShape& shape, std::int64_t rows, Space space, int bytes) {
  bool filter = false;
  if constexpr (requires { config.eigensolver; }) {
    const cfg::EigensolverSettings& s = config.eigensolver;
    filter = eigen_method(config, true).method == solver::EigenMethod::chebyshev_filter;
    if (filter) {
      shape = solver::filter_shape(s.lobpcg.k, s.lobpcg.block_size, bytes / 2, rows, s.lobpcg.search_precision, space);
      shape.output = !config.output.path.empty() && config.output.eigenvectors;
    }
  }
  if (!filter) shape.preconditioner_memory.block_bytes *= 2;
  shape.value_bytes = bytes;
  shape.complex = true;
}

solver::SolverShape solver_shape(const cfg::EigsConfig& c, Space space, std::int64_t rows, MPI_Comm comm) {
  const cfg::EigensolverSettings& e = c.eigensolver;
  if (eigen_method(c).method == solver::EigenMethod::chebyshev_filter) {
    solver::SolverShape s = solver::filter_shape(e.lobpcg.k, e.lobpcg.block_size, value_bytes(c.execution), rows,
                                                 e.lobpcg.search_precision, space);
    if (!e.start_file.empty() || !c.resume.empty()) s.start_columns = s.block;
    s.output = !c.output.path.empty() && c.output.eigenvectors;
    return s;
  }
  solver::SolverShape s =
      solver::lobpcg_shape(e.lobpcg.k, e.lobpcg.block_size, e.lobpcg.test == StoppingTest::backward,
                           e.preconditioner.kind != PreconditionerKind::none, value_bytes(c.execution), space, rows);
  set_preconditioner(e.preconditioner, e.lobpcg.which, true, space, s);
  if (!e.start_file.empty()) s.start_columns = s.block;  // at most the block size
  s.output = !c.output.path.empty() && c.output.eigenvectors;
  s.generalized = c.matrix_b.has_value();
  if (e.constraints == cfg::ConstraintsSource::constant) s.constraint_columns = 1;
  if (e.constraints == cfg::ConstraintsSource::hdf5)  // the dataset's shape: no rows read
    s.constraint_columns = solver::collectively(comm, [&] {
      try {
        // (Complex columns too: whether the matrix takes them is read_constraints' check.)
        return io::read_hdf5_dense_rows(e.constraints_file, e.constraints_dataset, 0, 0, -1,
                                        io::DenseValues::real_or_complex)
            .cols;
      } catch (const InputError& error) {
        fail_input("eigensolver.constraints: ", error.what());
      }
    });
  return s;
}

solver::SolverShape solver_shape(const cfg::CgConfig& c, Space space, std::int64_t, MPI_Comm comm) {
  const cfg::BlockCgSettings& b = c.solver;
  solver::SolverShape s;
  s.kind = solver::SolverShape::Kind::block_cg;
  s.value_bytes = value_bytes(c.execution);
  s.columns = b.columns;
  if (b.rhs == cfg::RhsSource::hdf5)  // the dataset's shape: no rows read (whether its values fit: set_up_rhs)
    s.columns = solver::collectively(comm, [&] {
      return io::read_hdf5_dense_rows(b.rhs_file, b.rhs_dataset, 0, 0, -1, io::DenseValues::real_or_complex).cols;
    });
  set_preconditioner(b.preconditioner, SpectrumEnd::smallest, false, space, s);
  s.known_solution = b.rhs == cfg::RhsSource::known_solution;
  s.output = !c.output.path.empty();
  s.output_rhs = s.output && b.rhs != cfg::RhsSource::hdf5 && b.rhs_output;
  return s;
}

// Where the operator numbers rows otherwise than the input (a graph
// partition, a band order), block-eigs also holds a start block (its random
// columns are drawn for the input's rows and moved, eigs_run.cpp), and
// either app's results move back to the input's numbering on their way out.
void add_numbering(solver::SolverShape& s, const cfg::EigsConfig&, const solver::DistributedRows& matrix) {
  if (!matrix.numbering.is_identity()) s.start_columns = s.block;
  s.output_renumbered = !matrix.numbering.is_identity();
}
void add_numbering(solver::SolverShape& s, const cfg::CgConfig&, const solver::DistributedRows& matrix) {
  s.output_renumbered = !matrix.numbering.is_identity();
}

template <class V>
std::int64_t loaded_bytes(const CsrRowsOf<V>& rows) {
  return static_cast<std::int64_t>(8 * rows.row_offsets.size() + 8 * rows.col_indices.size() +
                                   sizeof(V) * rows.values.size());
}

// The plan at `ranks` ranks with the rows split evenly: what "how many ranks would do" tries.
auto plan_at_ranks(const MatrixExtent& e, const std::optional<MatrixExtent>& b, const solver::SolverShape& shape,
                   Space space) {
  return [e, b, shape, space](int ranks) {
    std::optional<solver::SecondMatrix> second;
    if (b) second = solver::SecondMatrix{solver::even_share(b->rows, b->nnz, ranks), b->source};
    return solver::plan_memory(solver::even_share(e.rows, e.nnz, ranks), e.source, shape, space,
                               second ? &*second : nullptr);
  };
}

// B's extent where the config has one (block-eigs' matrix_b).
template <class Config>
std::optional<MatrixExtent> matrix_b_extent(const Config& config, MPI_Comm comm) {
  if constexpr (requires { config.matrix_b; }) {
    if (config.matrix_b) return matrix_extent(*config.matrix_b, comm);
  }
  return std::nullopt;
}

int comm_size(MPI_Comm comm) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  return ranks;
}

// The host's resident peak (VmHWM), every library's memory included; 0 where unknown.
std::int64_t resident_peak() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    long long kib = 0;
    if (key == "VmHWM:" && status >> kib) return kib * 1024;
  }
  return 0;
}

// What the loader will call the matrix.
std::string matrix_description(const io::MatrixConfig& m) {
  switch (m.source) {
    case io::MatrixSource::generator: return io::describe(m.generator);
    case io::MatrixSource::hdf5: return m.file + ":" + m.group;
    case io::MatrixSource::matrix_market: return m.file;
  }
  return m.file;
}

// --dry-run's report where the plan from the matrix's size does not fit: the
// even share each rank would get and the plan item by item (rank 0).
template <class Config>
void print_plan_from_sizes(const Config& config, const MatrixExtent& e, const std::optional<MatrixExtent>& b,
                           const solver::MemoryPlan& plan, Space space, solver::MemorySides sides, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank != 0) return;
  const int ranks = comm_size(comm);
  const bool device = space == Space::device;
  std::printf("dry run: %s, %lld x %lld, %lld nonzeros, %d rank%s, backend %s\n",
              matrix_description(config.matrix).c_str(), static_cast<long long>(e.rows), static_cast<long long>(e.rows),
              static_cast<long long>(e.nnz), ranks, ranks > 1 ? "s" : "", device ? "cuda" : "cpu");
  if (b) std::printf("dry run: A x = \u03bb B x, B %lld nonzeros\n", static_cast<long long>(b->nnz));
  std::printf(
      "dry run: the plan from the matrix's size (rows and nonzeros split evenly; the halo is known only "
      "once the rows are loaded), which does not fit: %s\n",
      sides == solver::MemorySides::device ? "the rows read, nothing on the device" : "nothing loaded");
  std::printf("  ranks        rows      nonzeros     host peak   device peak  (each, at most)\n");
  std::printf("  %5d  %10lld  %12lld  %12s  %12s\n", ranks, static_cast<long long>(plan.shape.local_rows),
              static_cast<long long>(plan.shape.local_nnz), solver::format_bytes(double(plan.host_peak)).c_str(),
              device ? solver::format_bytes(double(plan.device_peak)).c_str() : "-");
  std::printf("memory plan of each rank:\n%s", solver::describe(plan).c_str());
  std::fflush(stdout);
}

}  // namespace

template <class Config>
void check_memory_from_sizes(const Config& config, Space space, int device, MPI_Comm comm, bool dry_run,
                             solver::MemorySides sides) {
  const MatrixExtent e = matrix_extent(config.matrix, comm);
  const std::optional<MatrixExtent> b = matrix_b_extent(config, comm);
  if (!e.known || (b && !b->known)) return;
  const solver::SolverShape shape = solver_shape(config, space, e.rows, comm);
  const auto plan_at = plan_at_ranks(e, b, shape, space);
  const solver::MemoryPlan plan = plan_at(comm_size(comm));
  try {
    solver::check_memory_fits(comm, plan, 0, 0, device, plan_at, config.execution.memory_limit_bytes, sides);
  } catch (const solver::AgreedError&) {
    if (dry_run) print_plan_from_sizes(config, e, b, plan, space, sides, comm);  // every rank has the error
    throw;
  }
}

template <class Config, class T>
solver::MemoryPlan check_memory_with_operator(const Config& config, const solver::DistributedRows& matrix,
                                              const solver::DistributedOperator<T>& op,
                                              const solver::DistributedRows* b,
                                              const solver::DistributedOperator<T>* op_b) {
  MPI_Comm comm = op.comm();
  const Space space = op.context().space();
  MatrixExtent e = matrix_extent(config.matrix, comm);
  e.rows = matrix.partition.global_rows();
  e.nnz = matrix.global_nnz;
  std::optional<MatrixExtent> b_extent = matrix_b_extent(config, comm);
  std::optional<solver::SecondMatrix> second;
  if (b && op_b) {
    b_extent->rows = b->partition.global_rows();
    b_extent->nnz = b->global_nnz;
    second = solver::SecondMatrix{solver::measured_shape(*op_b, b->global_nnz), b_extent->source};
  }
  solver::SolverShape shape = solver_shape(config, space, e.rows, comm);
  if constexpr (is_complex_v<T>) complex_shape(config, shape, e.rows, space, int(sizeof(T)));
  add_numbering(shape, config, matrix);
  const solver::MemoryPlan plan = solver::plan_memory(solver::measured_shape(op, matrix.global_nnz), e.source, shape,
                                                      space, second ? &*second : nullptr);
  // What this rank holds already counts as the plan's: the rows, the operators' Buffers.
  const std::int64_t host_held = loaded_bytes(matrix.rows) + loaded_bytes(matrix.complex_rows) +
                                 (b ? loaded_bytes(b->rows) : 0) + dense::memory_counters(Space::host).current;
  const std::int64_t device_held = space == Space::device ? dense::memory_counters(Space::device).current : 0;
  solver::check_memory_fits(comm, plan, host_held, device_held, op.context().device(),
                            plan_at_ranks(e, b_extent, shape, space), config.execution.memory_limit_bytes);
  return plan;
}

template <class Config>
int print_dry_run(const Config& config, const solver::DistributedRows& matrix, const solver::DistributedRows* b,
                  const dense::Context& context, MPI_Comm comm) {
  int rank = 0;
  const int ranks = comm_size(comm);
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const Space space = context.space();
  MatrixExtent e = matrix_extent(config.matrix, comm);
  e.rows = matrix.partition.global_rows();
  e.nnz = matrix.global_nnz;
  solver::SolverShape shape = solver_shape(config, space, e.rows, comm);
  if (matrix.complex) complex_shape(config, shape, e.rows, space, 2 * value_bytes(config.execution));
  add_numbering(shape, config, matrix);
  const solver::RankShape mine = matrix.with_rows(
      [&](const auto& rows) { return solver::measured_shape(comm, rows, matrix.partition, matrix.global_nnz); });
  std::optional<MatrixExtent> b_extent = matrix_b_extent(config, comm);
  std::optional<solver::SecondMatrix> second;
  if (b) {
    b_extent->rows = b->partition.global_rows();
    b_extent->nnz = b->global_nnz;
    second = solver::SecondMatrix{solver::measured_shape(comm, b->rows, b->partition, b->global_nnz), b_extent->source};
  }
  const solver::MemoryPlan plan = solver::plan_memory(mine, e.source, shape, space, second ? &*second : nullptr);

  constexpr int fields = 7;
  const std::int64_t first_row = matrix.with_rows([](const auto& rows) { return rows.first_row; });
  const long long row[fields] = {mine.local_rows, first_row,      mine.local_nnz,  mine.halo_rows,
                                 mine.neighbours, plan.host_peak, plan.device_peak};
  std::vector<long long> all(static_cast<std::size_t>(fields) * ranks);
  BLOCKEIGS_MPI_CHECK(MPI_Gather(row, fields, MPI_LONG_LONG, all.data(), fields, MPI_LONG_LONG, 0, comm));
  // The largest rank's items, by its host and device peaks together.
  long long weight = plan.host_peak + plan.device_peak;
  struct {
    long weight;
    int rank;
  } local{static_cast<long>(weight), rank}, largest{};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&local, &largest, 1, MPI_LONG_INT, MPI_MAXLOC, comm));
  std::string items = solver::describe(plan);
  if (largest.rank != 0) {
    long long length = rank == largest.rank ? static_cast<long long>(items.size()) : 0;
    BLOCKEIGS_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, largest.rank, comm));
    items.resize(static_cast<std::size_t>(length));
    BLOCKEIGS_MPI_CHECK(MPI_Bcast(items.data(), static_cast<int>(length), MPI_CHAR, largest.rank, comm));
  }
  if (rank == 0) {
    const bool device = space == Space::device;
    std::printf("dry run: %s, %lld x %lld, %lld nonzeros, %d rank%s, backend %s\n", matrix.description.c_str(),
                static_cast<long long>(e.rows), static_cast<long long>(e.rows), static_cast<long long>(e.nnz), ranks,
                ranks > 1 ? "s" : "", device ? "cuda" : "cpu");
    if (b)
      std::printf("dry run: A x = \u03bb B x, B %s, %lld nonzeros\n", b->description.c_str(),
                  static_cast<long long>(b->global_nnz));
    std::printf("%s", arrangement_lines(matrix).c_str());
    std::printf("  rank        rows   first row      nonzeros   halo rows  neighbours     host peak   device peak\n");
    for (int r = 0; r < ranks; ++r) {
      const long long* f = &all[static_cast<std::size_t>(r) * fields];
      std::printf("  %4d  %10lld  %10lld  %12lld  %10lld  %10lld  %12s  %12s\n", r, f[0], f[1], f[2], f[3], f[4],
                  solver::format_bytes(double(f[5])).c_str(),
                  device ? solver::format_bytes(double(f[6])).c_str() : "-");
    }
    std::printf("memory plan of rank %d, the largest:\n%s", largest.rank, items.c_str());
    std::fflush(stdout);
  }
  solver::check_memory_fits(
      comm, plan, loaded_bytes(matrix.rows) + loaded_bytes(matrix.complex_rows) + (b ? loaded_bytes(b->rows) : 0), 0,
      context.device(), plan_at_ranks(e, b_extent, shape, space), config.execution.memory_limit_bytes);
  const std::string& saved = matrix.partitioning.saved_to;
  if (rank == 0)
    std::printf("dry run: the plan fits the free memory; nothing solved, %s\n",
                saved.empty() ? "nothing written" : ("only the distribution written (to " + saved + ")").c_str());
  return exit_ok;
}

std::string memory_line(const solver::MemoryPlan& plan, MPI_Comm comm) {
  const bool device = plan.space == Space::device;
  const dense::MemoryCount buffers = dense::memory_counters(plan.space);
  const long long mine[5] = {plan.buffers_peak, buffers.peak, plan.device_peak,
                             device ? dense::device_used_at_peak() - dense::device_used_at_reset() : 0,
                             resident_peak()};
  long long most[5];
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(mine, most, 5, MPI_LONG_LONG, MPI_MAX, 0, comm));
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank != 0) return {};
  using solver::format_bytes;
  const double change = most[0] > 0 ? 100.0 * (double(most[1]) - double(most[0])) / double(most[0]) : 0.0;
  char line[400];
  if (device)
    std::snprintf(line, sizeof line,
                  "memory     per rank (largest): planned %s in Buffers, %s on the device; measured %s in Buffers "
                  "at the peak (%+.1f%%), device use at that peak %s above its use before loading; host resident "
                  "peak %s\n",
                  format_bytes(double(most[0])).c_str(), format_bytes(double(most[2])).c_str(),
                  format_bytes(double(most[1])).c_str(), change, format_bytes(double(most[3])).c_str(),
                  format_bytes(double(most[4])).c_str());
  else
    std::snprintf(line, sizeof line,
                  "memory     per rank (largest): planned %s in Buffers; measured %s at the peak (%+.1f%%); host "
                  "resident peak %s\n",
                  format_bytes(double(most[0])).c_str(), format_bytes(double(most[1])).c_str(), change,
                  format_bytes(double(most[4])).c_str());
  return line;
}

template void check_memory_from_sizes(const cfg::EigsConfig&, Space, int, MPI_Comm, bool, solver::MemorySides);
template void check_memory_from_sizes(const cfg::CgConfig&, Space, int, MPI_Comm, bool, solver::MemorySides);
template solver::MemoryPlan check_memory_with_operator(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<float>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<float>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<double>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<double>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<std::complex<float>>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<std::complex<float>>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<std::complex<double>>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<std::complex<double>>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::CgConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<float>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<float>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::CgConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<double>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<double>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::CgConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<std::complex<float>>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<std::complex<float>>*);
template solver::MemoryPlan check_memory_with_operator(const cfg::CgConfig&, const solver::DistributedRows&,
                                                       const solver::DistributedOperator<std::complex<double>>&,
                                                       const solver::DistributedRows*,
                                                       const solver::DistributedOperator<std::complex<double>>*);
template int print_dry_run(const cfg::EigsConfig&, const solver::DistributedRows&, const solver::DistributedRows*,
                           const dense::Context&, MPI_Comm);
template int print_dry_run(const cfg::CgConfig&, const solver::DistributedRows&, const solver::DistributedRows*,
                           const dense::Context&, MPI_Comm);

}  // namespace blockeigs::apps
