#include "python/src/facade.hpp"

#include <mpi.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/checks.hpp"
#include "core/enums.hpp"
#include "core/error.hpp"
#include "io/config.hpp"
#include "io/csr_rows.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/precond/preconditioner_config.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::python {
namespace {

// MPI_Comm is a pointer in Open MPI and an int in MPICH: a template, so that
// only the branch of this MPI is compiled.
template <class Comm = MPI_Comm>
Comm to_comm(CommHandle handle) {
  if constexpr (std::is_pointer_v<Comm>)
    return reinterpret_cast<Comm>(handle);
  else
    return static_cast<Comm>(handle);
}

template <class Comm = MPI_Comm>
CommHandle to_handle(Comm comm) {
  if constexpr (std::is_pointer_v<Comm>)
    return reinterpret_cast<CommHandle>(comm);
  else
    return static_cast<CommHandle>(comm);
}

// The library's exceptions as the module's two kinds.
template <class Step>
auto translated(Step&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const solver::AgreedError& e) {
    if (e.is_input_error()) throw InputError(e.what());
    throw Error(e.what());
  } catch (const blockeigs::InputError& e) {
    throw InputError(e.what());
  } catch (const InputError&) {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

// The settings a request names, read by the config's own reader (eigensolver.preconditioner,
// execution.*), so that a bad value gets the apps' message.
io::EigsConfig read_settings(const std::string& preconditioner, const Execution& execution) {
  const std::string text =
      "matrix: {generator: {type: laplacian_1d, nx: 2}}\n"
      "eigensolver: {preconditioner: " +
      preconditioner +
      "}\n"
      "execution: {backend: " +
      execution.backend + ", partition: " + execution.partition + ", local_order: " + execution.local_order + "}\n";
  return io::parse_eigs_config(text, "arguments");
}

double now() { return MPI_Wtime(); }

// A caller's block as a view in `space`: its own memory where it is there already, else a copy in `copy`.
spmm::ConstDenseView<double> in_space(const BlockRef& block, Space space, std::optional<spmm::DenseBlock<double>>& copy,
                                      const char* name) {
  const Space from = block.device ? Space::device : Space::host;
  if (from == space) return {space, block.rows, block.cols, block.ld, block.data};
  if (from == Space::device)
    fail_input(name, " is a device array, but the backend is the CPU (backend=\"cpu\", or no GPU): pass a host array");
  copy.emplace(space, block.rows, block.cols);
  for (std::int64_t i = 0; i < block.rows; ++i)
    spmm::copy_bytes(copy->data() + i * block.cols, space, block.data + i * block.ld, Space::host,
                     sizeof(double) * block.cols);
  return copy->cview();
}

template <class Preconditioner>
std::string describe_chebyshev(const Preconditioner& p) {
  const solver::ChebyshevInterval& iv = p.interval();
  return detail::concat("chebyshev, degree ", p.degree(), ", in ", to_string(p.precision()), ", 1/x on [", iv.a, ", ",
                        iv.b, "]");
}

// The preconditioner eigensolver.preconditioner describes, on `op` (null for none).
std::unique_ptr<solver::Preconditioner<double>> make_preconditioner(const io::PreconditionerConfig& config,
                                                                    solver::LinearOperator<double>& op, SpectrumEnd end,
                                                                    bool eigensolver, std::string& description) {
  description = std::string(to_string(config.kind));
  if (config.kind == PreconditionerKind::jacobi) return std::make_unique<solver::JacobiPreconditioner<double>>(op);
  if (config.kind == PreconditionerKind::chebyshev) {
    auto chebyshev = std::make_unique<solver::ChebyshevPreconditioner<double>>(
        op, solver::chebyshev_options(config, end, eigensolver));
    description = describe_chebyshev(*chebyshev);
    return chebyshev;
  }
  if (config.kind == PreconditionerKind::petsc)
    solver::fail_input_everywhere("M: type petsc is not offered by the Python module (use jacobi or chebyshev)");
  return nullptr;
}

OwnedBlock own(spmm::DenseBlock<double>&& block, const spmm::Context& context) {
  auto kept = std::make_shared<spmm::DenseBlock<double>>(std::move(block));
  OwnedBlock out;
  out.data = kept->data();
  out.rows = kept->rows();
  out.cols = kept->cols();
  out.ld = kept->ld();
  out.device = kept->space() == Space::device;
  out.device_id = std::max(context.device(), 0);
  out.keep = std::move(kept);
  return out;
}

// Between iterations: whether any rank's caller asks to stop. Collective.
std::function<bool()> agreed_stop(const std::function<bool()>& interrupted, MPI_Comm comm) {
  if (!interrupted) return {};
  return [&interrupted, comm] {
    int stop = interrupted() ? 1 : 0;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, comm));
    return stop != 0;
  };
}

}  // namespace

bool initialize_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return false;
  int provided = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
  blockeigs::use_errors_return(MPI_COMM_WORLD);
  return true;
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

void finalize_mpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

CommHandle comm_world() { return to_handle(MPI_COMM_WORLD); }
int comm_rank(CommHandle comm) {
  return translated([&] { return rank_of(to_comm(comm)); });
}
int comm_size(CommHandle comm) {
  return translated([&] {
    int size = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(to_comm(comm), &size));
    return size;
  });
}

bool cuda_compiled() {
#ifdef BLOCKEIGS_PYTHON_CUDA
  return true;
#else
  return false;
#endif
}

std::string version() { return BLOCKEIGS_VERSION; }

void agree_on_input(CommHandle comm, const std::string& message) {
  translated([&] {
    solver::collectively(to_comm(comm), [&] {
      if (!message.empty()) throw blockeigs::InputError(message);
    });
  });
}

std::vector<double> allgather_rows(CommHandle comm, const std::vector<double>& rows, std::int64_t cols) {
  return translated([&] {
    const MPI_Comm c = to_comm(comm);
    int ranks = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(c, &ranks));
    const std::int64_t mine = static_cast<std::int64_t>(rows.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks));
    BLOCKEIGS_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, c));
    std::vector<int> sizes, offsets;
    std::int64_t total = 0;
    for (std::int64_t count : counts) {
      if (total + count > std::numeric_limits<int>::max())
        fail_input("gather=True: the ", cols, " columns of all rows hold more than 2^31 values; gather them yourself");
      offsets.push_back(static_cast<int>(total));
      sizes.push_back(static_cast<int>(count));
      total += count;
    }
    std::vector<double> all(static_cast<std::size_t>(total));
    BLOCKEIGS_MPI_CHECK(MPI_Allgatherv(rows.data(), static_cast<int>(mine), MPI_DOUBLE, all.data(), sizes.data(),
                                       offsets.data(), MPI_DOUBLE, c));
    return all;
  });
}

std::vector<std::int64_t> balanced_partition(const std::int64_t* row_offsets, std::int64_t rows, int ranks) {
  return solver::RowPartition::balanced(std::vector<std::int64_t>(row_offsets, row_offsets + rows + 1), ranks)
      .first_rows();
}

// --- Matrix --------------------------------------------------------------------

struct Matrix::Impl {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the caller's, errors returned
  solver::DistributedRows input;  // this rank's input rows (contiguous ranges)
  std::optional<solver::DistributedRows> distributed;
  std::pair<PartitionMethod, LocalOrder> distributed_by{};
  // from_replicated with device arrays: the caller's arrays; input.rows stays
  // empty until a host path needs the rank's rows (host_input).
  std::optional<solver::ReplicatedCsr> replicated;
  bool host_copied = false;
  bool on_device = false;  // distributed holds no rows: the operator splits `replicated`

  // The input with this rank's rows on the host (copied from the device once, where they are there).
  solver::DistributedRows& host_input() {
    if (replicated && !host_copied) {
      input.rows = solver::host_rows(*replicated);
      host_copied = true;
    }
    return input;
  }

  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};

Matrix::Matrix() : impl(std::make_unique<Impl>()) {}
Matrix::~Matrix() = default;

namespace {

// The ranges the ranks hold must form a partition of [0, n): the row partition. Collective.
solver::RowPartition gathered_partition(MPI_Comm comm, std::int64_t n, std::int64_t first, std::int64_t rows,
                                        const std::string& description) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::int64_t mine[2] = {first, rows};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm));
  std::vector<std::int64_t> firsts{0};
  for (int r = 0; r < ranks; ++r) {
    if (all[2 * r] != firsts.back() || all[2 * r + 1] < 0)
      solver::fail_input_everywhere(description, ": rank ", r, " holds rows [", all[2 * r], ", ",
                                    all[2 * r] + all[2 * r + 1],
                                    "), but the ranks' rows must follow each other "
                                    "in rank order from row 0: rank ",
                                    r, " should start at row ", firsts.back());
    firsts.push_back(all[2 * r] + all[2 * r + 1]);
  }
  if (firsts.back() != n)
    solver::fail_input_everywhere(description, ": the ranks hold ", firsts.back(), " rows together, but the matrix is ",
                                  n, " x ", n);
  return solver::RowPartition(std::move(firsts));
}

// Whether `execution` keeps the input's rows where they are, as the device operator takes them.
bool keeps_input_rows(const io::ExecutionConfig& execution) {
  return execution.backend != Backend::cpu &&
         (execution.partition == PartitionMethod::automatic || execution.partition == PartitionMethod::contiguous) &&
         (execution.local_order == LocalOrder::automatic || execution.local_order == LocalOrder::none);
}

// The input as distributed when its rows stay as given, on the device (no rows on the host).
solver::DistributedRows on_device_as_given(const solver::DistributedRows& input,
                                           std::pair<PartitionMethod, LocalOrder> requested) {
  solver::DistributedRows d = input;
  d.partitioning.requested = requested.first;
  d.partitioning.used = PartitionMethod::contiguous;
  if (requested.first != PartitionMethod::contiguous)
    d.partitioning.reason = "auto: device input, the rows stay on their ranks' GPUs as given";
  d.local_order.requested = requested.second;
  d.local_order.used = LocalOrder::none;
  if (requested.second != LocalOrder::none) d.local_order.reason = "auto: device input, the rows keep their order";
  return d;
}

}  // namespace

std::shared_ptr<Matrix> Matrix::from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                          std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                          std::vector<double> values, const std::string& description) {
  return translated([&] {
    std::shared_ptr<Matrix> m(new Matrix());
    BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(to_comm(comm), &m->impl->comm));
    blockeigs::use_errors_return(m->impl->comm);
    const MPI_Comm c = m->impl->comm;
    solver::DistributedRows& d = m->impl->input;
    d.description = description;
    io::CsrRows& rows = d.rows;
    rows.global_rows = rows.global_cols = n;
    rows.first_row = first_row;
    rows.row_offsets = std::move(row_offsets);
    rows.col_indices = std::move(columns);
    rows.values = std::move(values);
    solver::collectively(c, [&] {
      if (rows.row_offsets.empty()) fail_input(description, ": the row offsets (indptr) are empty");
      // Columns in any order, repeated ones summed (as SciPy allows), where the offsets are sound; validate
      // names whatever else is wrong.
      const std::vector<std::int64_t>& o = rows.row_offsets;
      if (o.front() == 0 && o.back() == rows.nnz() && std::is_sorted(o.begin(), o.end()) &&
          rows.values.size() == rows.col_indices.size())
        io::sort_and_sum_duplicates(rows);
      io::validate(rows, description);
    });
    d.partition = gathered_partition(c, n, first_row, rows.local_rows(), description);
    d.numbering = solver::RowNumbering::identity(c, d.partition);
    std::int64_t nnz = rows.nnz();
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_INT64_T, MPI_SUM, c));
    d.global_nnz = nnz;
    solver::check_symmetric(c, rows, d.partition, description);
    return m;
  });
}

std::shared_ptr<Matrix> Matrix::load(CommHandle comm, const std::string& file, const std::string& group) {
  return translated([&] {
    std::shared_ptr<Matrix> m(new Matrix());
    BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(to_comm(comm), &m->impl->comm));
    blockeigs::use_errors_return(m->impl->comm);
    io::MatrixConfig config;
    config.source = io::MatrixSource::hdf5;
    config.file = file;
    config.group = group;
    solver::DistributedRows& d = m->impl->input;
    d = solver::load_distributed_rows(config, m->impl->comm);
    if (!d.symmetric_by_construction) solver::check_symmetric(m->impl->comm, d.rows, d.partition, d.description);
    return m;
  });
}

std::shared_ptr<Matrix> Matrix::from_replicated(CommHandle comm, const CsrArrays& whole,
                                                std::vector<std::int64_t> first_rows, const std::string& description) {
  return translated([&] {
    std::shared_ptr<Matrix> m(new Matrix());
    BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(to_comm(comm), &m->impl->comm));
    blockeigs::use_errors_return(m->impl->comm);
    const MPI_Comm c = m->impl->comm;
    int ranks = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(c, &ranks));
    const int rank = rank_of(c);
    if (static_cast<int>(first_rows.size()) != ranks + 1 || first_rows.front() != 0 || first_rows.back() != whole.n ||
        !std::is_sorted(first_rows.begin(), first_rows.end()))
      throw Error("Matrix.from_replicated: first_rows is not a partition of the rows over the ranks");
    solver::ReplicatedCsr a;
    a.space = whole.device ? Space::device : Space::host;
    a.device = whole.device ? whole.device_id : -1;
    a.n = whole.n;
    a.nnz = whole.nnz;
    a.offsets = whole.offsets;
    a.columns = whole.columns;
    a.wide = whole.wide;
    a.values = whole.values;
    a.begin = first_rows[rank];
    a.end = first_rows[rank + 1];
    {
      std::optional<spmm::Context> device;  // the arrays' device, for the checks' kernels
      if (whole.device) device.emplace(spmm::Context::cuda(whole.device_id));
      solver::check_replicated(c, a, device ? &*device : nullptr, description);
    }
    solver::DistributedRows& d = m->impl->input;
    d.description = description;
    d.rows.global_rows = d.rows.global_cols = whole.n;
    d.rows.first_row = a.begin;
    d.partition = solver::RowPartition(std::move(first_rows));
    d.numbering = solver::RowNumbering::identity(c, d.partition);
    d.global_nnz = whole.nnz;
    m->impl->replicated = a;
    if (!whole.device) m->impl->host_input();  // the rank's rows copied: the arrays need not outlive the Matrix
    return m;
  });
}

std::int64_t Matrix::global_rows() const { return impl->input.partition.global_rows(); }
std::int64_t Matrix::global_nnz() const { return impl->input.global_nnz; }
std::int64_t Matrix::first_row() const { return impl->input.rows.first_row; }
std::int64_t Matrix::local_rows() const {
  return impl->replicated && !impl->host_copied ? impl->replicated->local_rows() : impl->input.rows.local_rows();
}
bool Matrix::distributed_on_device() const { return impl->on_device; }
const std::string& Matrix::description() const { return impl->input.description; }
CommHandle Matrix::comm() const { return to_handle(impl->comm); }

Numbering Matrix::distribute(const Execution& execution) {
  return translated([&] {
    const io::EigsConfig settings = solver::collectively(impl->comm, [&] { return read_settings("none", execution); });
    const std::pair key{settings.execution.partition, settings.execution.local_order};
    if (!impl->distributed || impl->distributed_by != key) {
      impl->distributed.reset();
      impl->on_device = impl->replicated && !impl->host_copied && keeps_input_rows(settings.execution);
      if (impl->on_device) {
        impl->distributed = on_device_as_given(impl->input, key);
      } else {
        solver::DistributedRows rows = impl->host_input();
        solver::distribute_rows(rows, key.first, impl->comm, key.second);
        impl->distributed = std::move(rows);
      }
      impl->distributed_by = key;
    }
    const solver::RowNumbering& numbering = impl->distributed->numbering;
    const int rank = rank_of(impl->comm);
    Numbering out;
    out.input_first = numbering.original().begin(rank);
    out.input_rows = numbering.original().rows(rank);
    out.rows = numbering.current().rows(rank);
    out.identity = numbering.is_identity();
    if (out.identity) return out;
    int stays = out.rows == out.input_rows;
    out.input_row.resize(static_cast<std::size_t>(out.rows));
    for (std::int64_t i = 0; i < out.rows; ++i) {
      out.input_row[i] = numbering.original_row(i);
      stays = stays && out.input_row[i] >= out.input_first && out.input_row[i] < out.input_first + out.input_rows;
    }
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stays, 1, MPI_INT, MPI_LAND, impl->comm));
    out.stay_on_rank = stays != 0;
    return out;
  });
}

std::string Matrix::distribution_summary() const {
  if (!impl->distributed) return "not distributed";
  const solver::PartitionReport& p = impl->distributed->partitioning;
  const solver::LocalOrderReport& o = impl->distributed->local_order;
  std::string text = std::string("partition ") + std::string(to_string(p.used));
  if (!p.reason.empty()) text += " (" + p.reason + ")";
  text += ", local order " + std::string(to_string(o.used));
  if (!o.reason.empty()) text += " (" + o.reason + ")";
  return text;
}

std::vector<double> Matrix::to_input_order(const std::vector<double>& block, std::int64_t cols) const {
  return translated([&] { return impl->distributed->numbering.to_original_rows(impl->comm, block, cols); });
}

std::vector<double> Matrix::from_input_order(const std::vector<double>& block, std::int64_t cols) const {
  return translated([&] { return impl->distributed->numbering.from_original_rows(impl->comm, block, cols); });
}

// --- solves ------------------------------------------------------------------

namespace {

// B's input rows on A's: the same ranges of the input's numbering on every rank. Collective.
solver::DistributedRows b_like_a(const Matrix& b, const Matrix& a, MPI_Comm comm) {
  const solver::DistributedRows& ai = a.impl->input;
  const solver::DistributedRows& bi = b.impl->host_input();  // B's rows on the host (copied from a device input)
  if (bi.partition.global_rows() != ai.partition.global_rows())
    solver::fail_input_everywhere("B (", bi.description, ") is ", bi.partition.global_rows(), " x ",
                                  bi.partition.global_rows(), ", but A is ", ai.partition.global_rows(), " x ",
                                  ai.partition.global_rows(), ": B of A x = lambda B x must be the size of A");
  if (bi.partition.first_rows() != ai.partition.first_rows())
    solver::fail_input_everywhere("B (", bi.description, ") holds other rows on the ranks than A (", ai.description,
                                  "): give both the same row ranges");
  solver::DistributedRows out = bi;
  solver::check_positive_diagonal(comm, out.rows, "B: " + bi.description);
  solver::distribute_like(out, *a.impl->distributed, comm);
  return out;
}

// A's operator on `context`: split from the device arrays in place where distribute kept them there and
// the context runs on their device (every rank agreeing), else from the rows on the host (a device input's
// rows copied there now; the numbering stays the input's). Collective.
std::unique_ptr<solver::DistributedOperator<double>> make_operator(Matrix& a, const spmm::Context& context) {
  Matrix::Impl& m = *a.impl;
  if (m.on_device) {
    int here = context.space() == Space::device && context.device() == m.replicated->device;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &here, 1, MPI_INT, MPI_LAND, m.comm));
    if (here)
      return std::make_unique<solver::DistributedOperator<double>>(m.comm, context, *m.replicated,
                                                                   m.distributed->partition);
    m.distributed->rows = m.host_input().rows;
    m.on_device = false;
  }
  return std::make_unique<solver::DistributedOperator<double>>(m.comm, context, m.distributed->rows,
                                                               m.distributed->partition);
}

void add_phase(Timings& t, const char* name, double seconds) { t.phases.emplace_back(name, seconds); }

// The pairs, their residuals, the history and the solver's phase times of r, into out.
void copy_result(const solver::LobpcgResult<double>& r, EigsResult& out) {
  out.eigenvalues = r.eigenvalues;
  out.residual_norms = r.residual_norms;
  out.relative_residuals = r.relative_residuals;
  out.converged = r.converged;
  out.iterations = r.iterations;
  out.block_size = r.block_size;
  out.stop = solver::to_string(r.stop);
  for (const solver::LobpcgStep& step : r.history) {
    out.history_eigenvalues.push_back(step.eigenvalues);
    out.history_residual_norms.push_back(step.residual_norms);
  }
  const solver::LobpcgTimings& t = r.stats.timings;
  for (auto [name, seconds] : {std::pair{"spmm", t.spmm},
                               {"orthogonalization", t.orthogonalization},
                               {"rayleigh_ritz", t.rayleigh_ritz},
                               {"small_eigenproblem", t.small_eigenproblem},
                               {"preconditioner", t.preconditioner},
                               {"other", t.other},
                               {"total", t.total}})
    add_phase(out.timings, name, seconds);
}

}  // namespace

EigsResult lobpcg(Matrix& a, Matrix* b, const EigsRequest& request) {
  return translated([&] {
    const double begin = now();
    MPI_Comm comm = a.impl->comm;
    const io::EigsConfig settings =
        solver::collectively(comm, [&] { return read_settings(request.preconditioner, request.execution); });
    a.distribute(request.execution);
    const solver::DistributedRows& rows = *a.impl->distributed;
    const std::int64_t n = rows.partition.global_rows();
    if (request.k >= n)
      solver::fail_input_everywhere("k = ", request.k, " but the matrix has ", n,
                                    " rows: k must be smaller than the number of rows");
    std::optional<solver::DistributedRows> b_rows;
    if (b) b_rows = b_like_a(*b, a, comm);

    const spmm::Context context = solver::make_context(settings.execution.backend, comm);
    const std::unique_ptr<solver::DistributedOperator<double>> a_op = make_operator(a, context);
    solver::DistributedOperator<double>& op = *a_op;
    std::unique_ptr<solver::DistributedOperator<double>> b_op;
    if (b_rows)
      b_op = std::make_unique<solver::DistributedOperator<double>>(comm, context, b_rows->rows, b_rows->partition);
    EigsResult out;
    const SpectrumEnd end = request.largest ? SpectrumEnd::largest : SpectrumEnd::smallest;
    const auto preconditioner = solver::collectively(comm, [&] {
      return make_preconditioner(settings.eigensolver.preconditioner, op, end, true, out.preconditioner);
    });

    std::optional<spmm::DenseBlock<double>> start_copy, constraints_copy;
    std::optional<spmm::ConstDenseView<double>> start, constraints;
    solver::collectively(comm, [&] {
      if (request.start) start = in_space(*request.start, context.space(), start_copy, "X");
      if (request.constraints) constraints = in_space(*request.constraints, context.space(), constraints_copy, "Y");
    });
    if (request.constraints && request.k + request.constraints->cols >= n)
      solver::fail_input_everywhere("Y has ", request.constraints->cols, " column",
                                    request.constraints->cols == 1 ? "" : "s", " and k is ", request.k,
                                    ": together they must be below the matrix's ", n, " rows");

    solver::LobpcgOptions options;
    options.k = request.k;
    options.block_size = request.block_size;
    options.which = end;
    options.tolerance = request.tolerance;
    options.max_iterations = request.max_iterations;
    options.seed = request.seed;
    const std::function<bool()> stop = agreed_stop(request.interrupted, comm);
    if (stop) options.between_iterations = [&stop](const solver::LobpcgIterate&) { return stop(); };
    context.synchronize();
    const double solve_begin = now();
    out.timings.setup = solve_begin - begin;
    solver::LobpcgResult<double> r = solver::collectively(comm, [&] {
      try {
        return solver::lobpcg<double>(op, options, preconditioner.get(), start, b_op.get(), constraints);
      } catch (const solver::BNotPositiveDefinite& e) {
        throw solver::AgreedError("B: " + b->description() + ": " + e.what(), true);
      }
    });
    context.synchronize();
    out.timings.solve = now() - solve_begin;
    copy_result(r, out);
    out.eigenvectors = own(std::move(r.eigenvectors), context);
    return out;
  });
}

CgResult cg(Matrix& a, const CgRequest& request) {
  return translated([&] {
    const double begin = now();
    MPI_Comm comm = a.impl->comm;
    const io::EigsConfig settings =
        solver::collectively(comm, [&] { return read_settings(request.preconditioner, request.execution); });
    a.distribute(request.execution);
    const spmm::Context context = solver::make_context(settings.execution.backend, comm);
    const std::unique_ptr<solver::DistributedOperator<double>> a_op = make_operator(a, context);
    solver::DistributedOperator<double>& op = *a_op;
    CgResult out;
    const auto preconditioner = solver::collectively(comm, [&] {
      return make_preconditioner(settings.eigensolver.preconditioner, op, SpectrumEnd::smallest, false,
                                 out.preconditioner);
    });
    const Space space = context.space();
    const std::int64_t m = op.local_rows(), s = request.rhs.cols;
    std::optional<spmm::DenseBlock<double>> rhs_copy;
    spmm::DenseBlock<double> x(space, m, s);
    const spmm::ConstDenseView<double> rhs =
        solver::collectively(comm, [&] { return in_space(request.rhs, space, rhs_copy, "B"); });
    if (request.start) {
      const BlockRef& x0 = *request.start;
      const Space from = x0.device ? Space::device : Space::host;
      solver::collectively(comm, [&] {
        if (from == Space::device && space == Space::host)
          fail_input("X0 is a device array, but the backend is the CPU: pass a host array");
      });
      for (std::int64_t i = 0; i < m; ++i)
        spmm::copy_bytes(x.data() + i * s, space, x0.data + i * x0.ld, from, sizeof(double) * s);
    } else {
      spmm::fill_bytes(x.data(), space, 0, sizeof(double) * m * s);
    }

    solver::BlockCgOptions options;
    options.rtol = request.rtol;
    options.atol = request.atol;
    options.max_iterations = request.max_iterations;
    const std::function<bool()> stop = agreed_stop(request.interrupted, comm);
    if (stop) options.between_iterations = [&stop](const solver::BlockCgIterate&) { return stop(); };
    context.synchronize();
    const double solve_begin = now();
    out.timings.setup = solve_begin - begin;
    const solver::BlockCgResult r = solver::collectively(
        comm, [&] { return solver::block_cg<double>(op, rhs, x.view(), options, preconditioner.get()); });
    context.synchronize();
    out.timings.solve = now() - solve_begin;
    out.iterations = r.iterations;
    out.converged = r.converged;
    out.rhs_norms = r.rhs_norms;
    out.residual_norms = r.residual_norms;
    out.true_residual_norms = r.true_residual_norms;
    out.total_iterations = r.total_iterations;
    out.stop = solver::to_string(r.stop);
    out.history = r.history;
    const solver::BlockCgTimings& t = r.stats.timings;
    for (auto [name, seconds] : {std::pair{"spmm", t.spmm},
                                 {"orthogonalization", t.orthogonalization},
                                 {"update", t.update},
                                 {"preconditioner", t.preconditioner},
                                 {"other", t.other},
                                 {"total", t.total}})
      add_phase(out.timings, name, seconds);
    out.solution = own(std::move(x), context);
    return out;
  });
}

}  // namespace blockeigs::python
