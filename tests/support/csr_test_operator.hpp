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
#include "core/csr_rows.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/operator/row_partition.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::test {

// Another operator's context, to share its stream (a B beside an A).
struct SharedContext {
  const dense::Context& context;
};

template <class T>
class CsrTestOperator final : public solver::LinearOperator<T> {
 public:
  // `whole` holds every row (first_row 0); this rank keeps its partition rows.
  CsrTestOperator(MPI_Comm comm, dense::Context context, const CsrRows& whole, solver::RowPartition partition)
      : comm_(comm), owned_(std::move(context)), context_(*owned_), partition_(std::move(partition)) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    rows_ = slice_rows(whole, partition_.begin(rank_), partition_.end(rank_));
  }
  CsrTestOperator(MPI_Comm comm, SharedContext shared, const CsrRows& whole, solver::RowPartition partition)
      : comm_(comm), context_(shared.context), partition_(std::move(partition)) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    rows_ = slice_rows(whole, partition_.begin(rank_), partition_.end(rank_));
  }

  MPI_Comm comm() const override { return comm_; }
  const dense::Context& context() const override { return context_; }
  std::int64_t global_rows() const override { return partition_.global_rows(); }
  std::int64_t local_rows() const override { return rows_.local_rows(); }
  std::int64_t first_row() const override { return partition_.begin(rank_); }

 protected:
  // The whole X gathered on every rank, then this rank's rows in double (csr_test_operator.cpp: compiled
  // once, optimised, as the suites' hottest loop).
  void apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) override;

 public:
  void diagonal(T* out) const override;

  const CsrRows& rows() const { return rows_; }
  // The block width of every apply so far, in order.
  const std::vector<std::int64_t>& widths() const { return widths_; }

 private:
  MPI_Comm comm_;
  std::optional<dense::Context> owned_;
  const dense::Context& context_;
  solver::RowPartition partition_;
  int rank_ = 0;
  CsrRows rows_;
  std::vector<std::int64_t> widths_;
};

// ---- matrices ---------------------------------------------------------------

// diag(d) as whole CSR rows.
inline CsrRows diagonal_matrix(const std::vector<double>& d) {
  CsrRows m;
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
inline CsrRows plus_diagonal(CsrRows A, const std::vector<double>& d) {
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
EigenpairCheck check_eigenpairs(MPI_Comm comm, const dense::Context& context, const CsrRows& whole,
                                const solver::RowPartition& partition, const std::vector<double>& lambda,
                                dense::ConstDenseView<T> vectors);

// Instantiated in csr_test_operator.cpp.
extern template class CsrTestOperator<float>;
extern template class CsrTestOperator<double>;
extern template EigenpairCheck check_eigenpairs(MPI_Comm, const dense::Context&, const CsrRows&,
                                                const solver::RowPartition&, const std::vector<double>&,
                                                dense::ConstDenseView<float>);
extern template EigenpairCheck check_eigenpairs(MPI_Comm, const dense::Context&, const CsrRows&,
                                                const solver::RowPartition&, const std::vector<double>&,
                                                dense::ConstDenseView<double>);

}  // namespace blockeigs::test
