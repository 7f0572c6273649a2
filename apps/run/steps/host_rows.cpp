#include "apps/run/steps/host_rows.hpp"

#include <complex>

#include "core/checks.hpp"
#include "core/scalar.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/collective.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {

io::DenseRows read_dense_rows(const std::string& file, const std::string& dataset,
                              const solver::RowNumbering& numbering, MPI_Comm comm, io::DenseValues values) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const solver::RowPartition& input = numbering.original();
  io::DenseRows rows = solver::collectively(comm, [&] {
    return io::read_hdf5_dense_rows(file, dataset, input.begin(rank), input.end(rank), input.global_rows(), values);
  });
  rows.values = numbering.from_original_rows(comm, rows.values, rows.doubles_per_row());
  return rows;
}

template <class T>
dense::DenseBlock<T> from_dense_rows(Space space, std::int64_t rows, const io::DenseRows& dense) {
  if constexpr (is_complex_v<T>) {
    dense::DenseBlock<T> block(space, rows, dense.cols);
    std::vector<T> values(static_cast<std::size_t>(rows * dense.cols));
    for (std::size_t e = 0; e < values.size(); ++e)
      values[e] = dense.complex ? T(dense.values[2 * e], dense.values[2 * e + 1]) : T(dense.values[e]);
    dense::copy_bytes(block.data(), space, values.data(), Space::host, sizeof(T) * values.size());
    return block;
  } else {
    BLOCKEIGS_ASSERT(!dense.complex);
    return from_host_doubles<T>(space, rows, dense.cols, dense.values);
  }
}

template <class T>
dense::DenseBlock<T> from_host_doubles(Space space, std::int64_t rows, std::int64_t cols,
                                       const std::vector<double>& values) {
  dense::DenseBlock<T> block(space, rows, cols);
  const std::vector<T> narrowed(values.begin(), values.end());
  dense::copy_bytes(block.data(), space, narrowed.data(), Space::host, sizeof(T) * narrowed.size());
  return block;
}

template <class T>
dense::DenseBlock<T> random_rows(const dense::Context& context, const solver::RowNumbering& numbering,
                                 std::int64_t cols, std::uint64_t seed, MPI_Comm comm, std::int64_t first_column) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t m = numbering.current().rows(rank);
  if (numbering.is_identity()) {
    dense::DenseBlock<T> block(context.space(), m, cols);
    solver::fill_random(context, block.view(), seed, numbering.current().begin(rank), first_column);
    return block;
  }
  // Each row drawn for its index in the input: no rows move.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) rows[i] = numbering.original_row(i);
  const dense::Buffer<std::int64_t> where(context.space(), rows);
  dense::DenseBlock<T> block(context.space(), m, cols);
  solver::fill_random_rows(context, block.view(), seed, where.data(), first_column);
  context.synchronize();  // `where` goes when this returns
  return block;
}

template dense::DenseBlock<float> random_rows(const dense::Context&, const solver::RowNumbering&, std::int64_t,
                                              std::uint64_t, MPI_Comm, std::int64_t);
template dense::DenseBlock<double> random_rows(const dense::Context&, const solver::RowNumbering&, std::int64_t,
                                               std::uint64_t, MPI_Comm, std::int64_t);
template dense::DenseBlock<std::complex<float>> random_rows(const dense::Context&, const solver::RowNumbering&,
                                                            std::int64_t, std::uint64_t, MPI_Comm, std::int64_t);
template dense::DenseBlock<std::complex<double>> random_rows(const dense::Context&, const solver::RowNumbering&,
                                                             std::int64_t, std::uint64_t, MPI_Comm, std::int64_t);
template dense::DenseBlock<float> from_host_doubles(Space, std::int64_t, std::int64_t, const std::vector<double>&);
template dense::DenseBlock<double> from_host_doubles(Space, std::int64_t, std::int64_t, const std::vector<double>&);
#define BLOCKEIGS_FROM_DENSE_ROWS(T) \
  template dense::DenseBlock<T> from_dense_rows(Space, std::int64_t, const io::DenseRows&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_FROM_DENSE_ROWS)

}  // namespace blockeigs::apps
