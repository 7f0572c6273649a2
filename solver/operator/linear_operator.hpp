// What the solvers see of a matrix: a symmetric operator distributed by
// contiguous row blocks over the ranks of a communicator, applied to dense
// blocks whose rows are distributed the same way. Implemented by the
// distributed SpMM operator (solver/operator/distributed_operator.hpp), by
// preconditioners, and by test doubles.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "solver/blocks/block_ops.hpp"
#include "spmm/context.hpp"
#include "spmm/dense.hpp"

namespace blockeigs::solver {

template <class T>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;

  virtual MPI_Comm comm() const = 0;
  virtual const spmm::Context& context() const = 0;  // where X and Y live and work runs
  virtual std::int64_t global_rows() const = 0;
  virtual std::int64_t local_rows() const = 0;       // rows of X and Y on this rank
  virtual std::int64_t first_row() const = 0;        // global index of local row 0

  // Y = alpha * A * X + beta * Y on the local rows (beta == 0: Y is not read).
  // Collective: every rank calls it with the same block width.
  virtual void apply(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) = 0;

  // Y = A X with X in fp32 (LOBPCG's residual block in its search precision,
  // LobpcgOptions::search_precision), summed and stored in T. By default X is
  // widened to T in a temporary block and apply()'d; an operator that
  // multiplies fp32 blocks itself overrides this and applies_single().
  virtual void apply_single(spmm::ConstDenseView<float> X, spmm::DenseView<T> Y) {
    spmm::DenseBlock<T> widened(X.space, X.rows, X.cols);
    convert_block(context(), X, widened.view());
    apply(T(1), spmm::ConstDenseView<T>(widened.view()), T(0), Y);
  }
  virtual bool applies_single() const { return false; }

  // The local part of the diagonal, local_rows() entries in context().space().
  virtual void diagonal(T* out) const = 0;
};

}  // namespace blockeigs::solver
