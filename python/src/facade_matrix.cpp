// The facade's Matrix: a symmetric matrix from a replicated CSR (host or
// device arrays), from each rank's rows or from HDF5, checked; its
// distribution (partition and local order) and numbering; its operator.
#include "python/src/facade_internal.hpp"

namespace blockeigs::python {

using namespace internal;

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
bool keeps_input_rows(const cfg::ExecutionConfig& execution) {
  return execution.backend != Backend::cpu &&
         (execution.partition == PartitionMethod::automatic || execution.partition == PartitionMethod::contiguous) &&
         (execution.local_order == LocalOrder::automatic || execution.local_order == LocalOrder::none);
}

// The input as distributed when its rows stay as given (on the device: no rows on the host); `why` says why
// auto kept them ("device input").
solver::DistributedRows as_given(const solver::DistributedRows& input, std::pair<PartitionMethod, LocalOrder> requested,
                                 const std::string& why) {
  solver::DistributedRows d = input;
  d.partitioning.requested = requested.first;
  d.partitioning.used = PartitionMethod::contiguous;
  if (requested.first != PartitionMethod::contiguous)
    d.partitioning.reason = "auto: " + why + ", the rows stay on their ranks as given";
  d.local_order.requested = requested.second;
  d.local_order.used = LocalOrder::none;
  if (requested.second != LocalOrder::none) d.local_order.reason = "auto: " + why + ", the rows keep their order";
  return d;
}

}  // namespace

namespace {

// from_rows for real or complex values: checked (offsets, column range, finite values, the ranks' ranges
// forming a partition), then symmetric (real) or Hermitian (complex).
template <class V>
std::shared_ptr<Matrix> matrix_from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                         std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                         std::vector<V> values, const std::string& description) {
  return translated([&] {
    std::shared_ptr<Matrix> m = Matrix::empty(comm);
    const MPI_Comm c = m->impl->comm;
    solver::DistributedRows& d = m->impl->input;
    d.description = description;
    d.complex = is_complex_v<V>;
    CsrRowsOf<V> rows;
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
        sort_and_sum_duplicates(rows);
      validate(rows, description);
    });
    d.partition = gathered_partition(c, n, first_row, rows.local_rows(), description);
    d.numbering = solver::RowNumbering::identity(c, d.partition);
    std::int64_t nnz = rows.nnz();
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_INT64_T, MPI_SUM, c));
    d.global_nnz = nnz;
    if constexpr (is_complex_v<V>) {
      solver::check_hermitian(c, rows, d.partition, description);
      d.complex_rows = std::move(rows);
    } else {
      solver::check_symmetric(c, rows, d.partition, description);
      d.rows = std::move(rows);
    }
    return m;
  });
}

}  // namespace

std::shared_ptr<Matrix> Matrix::empty(CommHandle comm) {
  std::shared_ptr<Matrix> m(new Matrix());
  BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(to_comm(comm), &m->impl->comm));
  blockeigs::use_errors_return(m->impl->comm);
  return m;
}

std::shared_ptr<Matrix> Matrix::from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                          std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                          std::vector<double> values, const std::string& description) {
  return matrix_from_rows(comm, n, first_row, std::move(row_offsets), std::move(columns), std::move(values),
                          description);
}

std::shared_ptr<Matrix> Matrix::from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                          std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                          std::vector<std::complex<double>> values, const std::string& description) {
  return matrix_from_rows(comm, n, first_row, std::move(row_offsets), std::move(columns), std::move(values),
                          description);
}

std::shared_ptr<Matrix> Matrix::load(CommHandle comm, const std::string& file, const std::string& group) {
  return translated([&] {
    std::shared_ptr<Matrix> m = empty(comm);
    io::MatrixConfig config;
    config.source = io::MatrixSource::hdf5;
    config.file = file;
    config.group = group;
    solver::DistributedRows& d = m->impl->input;
    d = solver::load_distributed_rows(config, m->impl->comm, solver::Values::real_or_complex);
    if (d.complex)
      solver::check_hermitian(m->impl->comm, d.complex_rows, d.partition, d.description);
    else if (!d.symmetric_by_construction)
      solver::check_symmetric(m->impl->comm, d.rows, d.partition, d.description);
    return m;
  });
}

std::shared_ptr<Matrix> Matrix::from_replicated(CommHandle comm, const CsrArrays& whole,
                                                std::vector<std::int64_t> first_rows, const std::string& description) {
  return translated([&] {
    std::shared_ptr<Matrix> m = empty(comm);
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
    a.complex = whole.complex;
    a.begin = first_rows[rank];
    a.end = first_rows[rank + 1];
    {
      std::optional<dense::Context> device;  // the arrays' device, for the checks' kernels
      if (whole.device) device.emplace(dense::Context::cuda(whole.device_id));
      solver::check_replicated(c, a, device ? &*device : nullptr, description);
    }
    solver::DistributedRows& d = m->impl->input;
    d.description = description;
    d.complex = whole.complex;
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
std::int64_t Matrix::first_row() const { return impl->input.partition.begin(rank_of(impl->comm)); }
std::int64_t Matrix::local_rows() const { return impl->input.partition.rows(rank_of(impl->comm)); }
bool Matrix::distributed_on_device() const { return impl->on_device; }
const std::string& Matrix::description() const { return impl->input.description; }
CommHandle Matrix::comm() const { return to_handle(impl->comm); }
bool Matrix::complex() const { return impl->input.complex; }

Numbering Matrix::distribute(const Section& execution) {
  return translated([&] {
    const cfg::ExecutionConfig settings = read_execution(execution, impl->comm);
    const std::pair key{settings.partition, settings.local_order};
    if (!impl->distributed || impl->distributed_by != key) {
      impl->distributed.reset();
      // Real and complex rows alike (distribute_rows moves either).
      impl->on_device = impl->replicated && !impl->host_copied && keeps_input_rows(settings);
      if (impl->on_device) {
        impl->distributed = as_given(impl->input, key, "device input");
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

namespace internal {

// A's operator on `context`: split from the device arrays in place where distribute kept them there and
// the context runs on their device (every rank agreeing), else from the rows on the host (a device input's
// rows copied there now; the numbering stays the input's). Collective.
template <class T>
std::unique_ptr<solver::DistributedOperator<T>> make_operator(Matrix& a, const dense::Context& context) {
  Matrix::Impl& m = *a.impl;
  if (m.input.complex != is_complex_v<T>) throw Error("make_operator: the operator's values are not the matrix's");
  if (m.on_device) {
    int here = context.space() == Space::device && context.device() == m.replicated->device;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &here, 1, MPI_INT, MPI_LAND, m.comm));
    if (here)
      return std::make_unique<solver::DistributedOperator<T>>(m.comm, context, *m.replicated, m.distributed->partition);
    m.distributed->rows_for<T>() = m.host_input().rows_for<T>();
    m.on_device = false;
  }
  return std::make_unique<solver::DistributedOperator<T>>(m.comm, context, m.distributed->rows_for<T>(),
                                                          m.distributed->partition);
}

template std::unique_ptr<solver::DistributedOperator<double>> make_operator(Matrix&, const dense::Context&);
template std::unique_ptr<solver::DistributedOperator<std::complex<double>>> make_operator(Matrix&,
                                                                                          const dense::Context&);

}  // namespace internal

}  // namespace blockeigs::python
