// A deliberately simple distributed operator for solver tests: each rank
// owns a contiguous block of rows of a CSR matrix (global column indices);
// apply gathers the whole X on every rank (MPI_Allgatherv) and multiplies its
// rows in double. Device blocks are staged through the host. Obviously
// correct rather than fast; the real operator is solver::DistributedOperator.
// Also: matrices with known spectra and an independent eigenpair check.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "io/csr_rows.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/operator/row_partition.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::test {

// Another operator's context, to share its stream (a B beside an A).
struct SharedContext {
  const spmm::Context& context;
};

template <class T>
class CsrTestOperator final : public solver::LinearOperator<T> {
 public:
  // `whole` holds every row (first_row 0); this rank keeps its partition rows.
  CsrTestOperator(MPI_Comm comm, spmm::Context context, const io::CsrRows& whole, solver::RowPartition partition)
      : comm_(comm), owned_(std::move(context)), context_(*owned_), partition_(std::move(partition)) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    rows_ = io::slice_rows(whole, partition_.begin(rank_), partition_.end(rank_));
  }
  CsrTestOperator(MPI_Comm comm, SharedContext shared, const io::CsrRows& whole, solver::RowPartition partition)
      : comm_(comm), context_(shared.context), partition_(std::move(partition)) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    rows_ = io::slice_rows(whole, partition_.begin(rank_), partition_.end(rank_));
  }

  MPI_Comm comm() const override { return comm_; }
  const spmm::Context& context() const override { return context_; }
  std::int64_t global_rows() const override { return partition_.global_rows(); }
  std::int64_t local_rows() const override { return rows_.local_rows(); }
  std::int64_t first_row() const override { return partition_.begin(rank_); }

 protected:
  void apply_impl(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) override {
    widths_.push_back(X.cols);
    const std::int64_t k = X.cols, n = local_rows();
    std::vector<T> mine(static_cast<std::size_t>(n * k));
    solver::copy_block(context_, X, spmm::DenseView<T>{Space::host, n, k, k, mine.data()});
    std::vector<int> counts(partition_.ranks()), displs(partition_.ranks());
    for (int r = 0; r < partition_.ranks(); ++r) {
      counts[r] = static_cast<int>(partition_.rows(r) * k);
      displs[r] = static_cast<int>(partition_.begin(r) * k);
    }
    std::vector<T> whole(static_cast<std::size_t>(global_rows() * k));
    const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
    BLOCKEIGS_MPI_CHECK(
        MPI_Allgatherv(mine.data(), counts[rank_], type, whole.data(), counts.data(), displs.data(), type, comm_));
    std::vector<T> y(static_cast<std::size_t>(n * k));
    if (beta != T(0))
      solver::copy_block(context_, spmm::ConstDenseView<T>(Y), spmm::DenseView<T>{Space::host, n, k, k, y.data()});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        double s = 0;
        for (std::int64_t p = rows_.row_offsets[i]; p < rows_.row_offsets[i + 1]; ++p)
          s += rows_.values[p] * double(whole[rows_.col_indices[p] * k + j]);
        const double out = double(alpha) * s;
        y[i * k + j] = static_cast<T>(beta == T(0) ? out : out + double(beta) * double(y[i * k + j]));
      }
    solver::copy_block(context_, spmm::ConstDenseView<T>{Space::host, n, k, k, y.data()}, Y);
  }

 public:
  void diagonal(T* out) const override {
    const std::int64_t n = local_rows();
    std::vector<T> d(static_cast<std::size_t>(n), T(0));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t p = rows_.row_offsets[i]; p < rows_.row_offsets[i + 1]; ++p)
        if (rows_.col_indices[p] == first_row() + i) d[i] += static_cast<T>(rows_.values[p]);
    spmm::copy_bytes(out, context_.space(), d.data(), Space::host, d.size() * sizeof(T));
  }

  const io::CsrRows& rows() const { return rows_; }
  // The block width of every apply so far, in order.
  const std::vector<std::int64_t>& widths() const { return widths_; }

 private:
  MPI_Comm comm_;
  std::optional<spmm::Context> owned_;
  const spmm::Context& context_;
  solver::RowPartition partition_;
  int rank_ = 0;
  io::CsrRows rows_;
  std::vector<std::int64_t> widths_;
};

// ---- matrices ---------------------------------------------------------------

// diag(d) as whole CSR rows.
inline io::CsrRows diagonal_matrix(const std::vector<double>& d) {
  io::CsrRows m;
  m.global_rows = m.global_cols = static_cast<std::int64_t>(d.size());
  m.row_offsets.push_back(0);
  for (std::size_t i = 0; i < d.size(); ++i) {
    m.col_indices.push_back(static_cast<std::int64_t>(i));
    m.values.push_back(d[i]);
    m.row_offsets.push_back(static_cast<std::int64_t>(i + 1));
  }
  return m;
}

// A + diag(d): d added to the (present) diagonal entries of a whole matrix.
inline io::CsrRows plus_diagonal(io::CsrRows A, const std::vector<double>& d) {
  for (std::int64_t i = 0; i < A.local_rows(); ++i)
    for (std::int64_t p = A.row_offsets[i]; p < A.row_offsets[i + 1]; ++p)
      if (A.col_indices[p] == i) A.values[p] += d[i];
  return A;
}

// Equal shares of the rows, except that rank 1 (when there is one) owns none.
inline solver::RowPartition partition_with_empty_rank(std::int64_t rows, int ranks) {
  if (ranks < 2) return solver::RowPartition::uniform(rows, ranks);
  const solver::RowPartition others = solver::RowPartition::uniform(rows, ranks - 1);
  std::vector<std::int64_t> first{0, others.end(0), others.end(0)};  // rank 1: [end0, end0)
  for (int r = 1; r < ranks - 1; ++r) first.push_back(others.end(r));
  return solver::RowPartition(first);
}

// ---- independent checks -------------------------------------------------------

struct EigenpairCheck {
  std::vector<double> residuals;  // ||A x_j - lambda_j x_j|| with x_j as returned
  double orthonormality = 0;      // max |X^T X - I|
};

// Gathers the eigenvectors (local rows x k, any space) to every rank and checks
// them against the whole matrix in plain loops.
template <class T>
EigenpairCheck check_eigenpairs(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& whole,
                                const solver::RowPartition& partition, const std::vector<double>& lambda,
                                spmm::ConstDenseView<T> vectors) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t k = vectors.cols, n = vectors.rows, N = whole.global_rows;
  std::vector<T> mine(static_cast<std::size_t>(n * k));
  solver::copy_block(context, vectors, spmm::DenseView<T>{Space::host, n, k, k, mine.data()});
  std::vector<int> counts(partition.ranks()), displs(partition.ranks());
  for (int r = 0; r < partition.ranks(); ++r) {
    counts[r] = static_cast<int>(partition.rows(r) * k);
    displs[r] = static_cast<int>(partition.begin(r) * k);
  }
  std::vector<T> x(static_cast<std::size_t>(N * k));
  const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
  BLOCKEIGS_MPI_CHECK(
      MPI_Allgatherv(mine.data(), counts[rank], type, x.data(), counts.data(), displs.data(), type, comm));
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

}  // namespace blockeigs::test
