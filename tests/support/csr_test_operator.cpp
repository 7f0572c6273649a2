// CsrTestOperator's product and the eigenpair check, out of line: the suites' hottest loops, compiled once
// with the support library's optimisation whatever the tests' own sources get.
#include "csr_test_operator.hpp"

namespace blockeigs::test {
namespace {

// A block of `k` columns (any space), `partition`'s rows on each rank, whole on every rank (row-major, host).
template <class T>
std::vector<T> whole_on_every_rank(MPI_Comm comm, const dense::Context& context, const solver::RowPartition& partition,
                                   dense::ConstDenseView<T> block) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t k = block.cols, n = block.rows;
  std::vector<T> mine(static_cast<std::size_t>(n * k));
  solver::copy_block(context, block, dense::DenseView<T>{Space::host, n, k, k, mine.data()});
  std::vector<int> counts(partition.ranks()), displs(partition.ranks());
  for (int r = 0; r < partition.ranks(); ++r) {
    counts[r] = static_cast<int>(partition.rows(r) * k);
    displs[r] = static_cast<int>(partition.begin(r) * k);
  }
  std::vector<T> whole(static_cast<std::size_t>(partition.global_rows() * k));
  const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
  BLOCKEIGS_MPI_CHECK(
      MPI_Allgatherv(mine.data(), counts[rank], type, whole.data(), counts.data(), displs.data(), type, comm));
  return whole;
}

}  // namespace

template <class T>
void CsrTestOperator<T>::apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
  widths_.push_back(X.cols);
  const std::int64_t k = X.cols, n = local_rows();
  const std::vector<T> whole = whole_on_every_rank(comm_, context_, partition_, X);
  std::vector<T> y(static_cast<std::size_t>(n * k));
  if (beta != T(0))
    solver::copy_block(context_, dense::ConstDenseView<T>(Y), dense::DenseView<T>{Space::host, n, k, k, y.data()});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (std::int64_t p = rows_.row_offsets[i]; p < rows_.row_offsets[i + 1]; ++p)
        s += rows_.values[p] * double(whole[rows_.col_indices[p] * k + j]);
      const double out = double(alpha) * s;
      y[i * k + j] = static_cast<T>(beta == T(0) ? out : out + double(beta) * double(y[i * k + j]));
    }
  solver::copy_block(context_, dense::ConstDenseView<T>{Space::host, n, k, k, y.data()}, Y);
}

template <class T>
void CsrTestOperator<T>::diagonal(T* out) const {
  const std::int64_t n = local_rows();
  std::vector<T> d(static_cast<std::size_t>(n), T(0));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = rows_.row_offsets[i]; p < rows_.row_offsets[i + 1]; ++p)
      if (rows_.col_indices[p] == first_row() + i) d[i] += static_cast<T>(rows_.values[p]);
  dense::copy_bytes(out, context_.space(), d.data(), Space::host, d.size() * sizeof(T));
}

template <class T>
EigenpairCheck check_eigenpairs(MPI_Comm comm, const dense::Context& context, const CsrRows& whole,
                                const solver::RowPartition& partition, const std::vector<double>& lambda,
                                dense::ConstDenseView<T> vectors) {
  const std::int64_t k = vectors.cols, N = whole.global_rows;
  const std::vector<T> x = whole_on_every_rank(comm, context, partition, vectors);
  EigenpairCheck check;
  for (std::int64_t j = 0; j < k; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      double ax = 0;
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        ax += whole.values[p] * double(x[whole.col_indices[p] * k + j]);
      const double r = ax - lambda[j] * double(x[i * k + j]);
      s += r * r;
    }
    check.residuals.push_back(std::sqrt(s));
    for (std::int64_t l = 0; l < k; ++l) {
      double g = 0;
      for (std::int64_t i = 0; i < N; ++i) g += double(x[i * k + j]) * double(x[i * k + l]);
      check.orthonormality = std::max(check.orthonormality, std::abs(g - (j == l ? 1.0 : 0.0)));
    }
  }
  return check;
}

template class CsrTestOperator<float>;
template class CsrTestOperator<double>;
template EigenpairCheck check_eigenpairs(MPI_Comm, const dense::Context&, const CsrRows&, const solver::RowPartition&,
                                         const std::vector<double>&, dense::ConstDenseView<float>);
template EigenpairCheck check_eigenpairs(MPI_Comm, const dense::Context&, const CsrRows&, const solver::RowPartition&,
                                         const std::vector<double>&, dense::ConstDenseView<double>);

}  // namespace blockeigs::test
