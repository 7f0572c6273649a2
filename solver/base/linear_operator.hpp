// What the solvers see of a matrix: a symmetric operator distributed by
// contiguous row blocks over the ranks of a communicator, applied to dense
// blocks whose rows are distributed the same way. Implemented by the
// distributed SpMM operator (solver/operator/distributed_operator.hpp), by
// preconditioners, and by test doubles.
//
// apply() is the one entry point: it checks its arguments and calls the
// implementation's apply_impl() (Ginkgo's LinOp, PETSc's MatMult).
// Capabilities only some solvers use are separate interfaces below
// (SingleInputOperator), queried with applies_single(A).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <complex>
#include <type_traits>

#include "core/scalar.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

// A dense block's place in memory with its element type erased, for the
// argument checks.
struct BlockExtent {
  Space space = Space::host;
  std::int64_t rows = 0, cols = 0, ld = 0;
  const void* data = nullptr;
  std::size_t element_bytes = 0;

  template <class U>
  static BlockExtent of(const dense::ConstDenseView<U>& v) {
    return {v.space, v.rows, v.cols, v.ld, v.data, sizeof(U)};
  }
};

// Whether two blocks share an element. Exact for blocks with the same row
// pitch in bytes (column blocks of one buffer side by side do not overlap);
// otherwise blocks whose byte ranges intersect count as overlapping. O(1).
bool blocks_overlap(const BlockExtent& a, const BlockExtent& b);

// Throws InputError, naming `call`, unless X and Y each have `local_rows`
// rows, the same number of columns and a leading dimension that holds them,
// live in `space`, and do not overlap. O(1); local (no communication).
void check_apply_arguments(const char* call, std::int64_t local_rows, Space space, const BlockExtent& X,
                           const BlockExtent& Y);

template <class T>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;

  virtual MPI_Comm comm() const = 0;
  virtual const dense::Context& context() const = 0;  // where X and Y live and work runs
  virtual std::int64_t global_rows() const = 0;
  virtual std::int64_t local_rows() const = 0;  // rows of X and Y on this rank
  virtual std::int64_t first_row() const = 0;   // global index of local row 0

  // Y = alpha * A * X + beta * Y on the local rows (beta == 0: Y is not read).
  // X and Y: local_rows() x k blocks in context().space() that do not
  // overlap; anything else throws InputError on the rank that passed it.
  // Collective: every rank calls it with the same block width.
  void apply(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
    check_apply_arguments("apply", local_rows(), context().space(), BlockExtent::of(X),
                          BlockExtent::of(dense::ConstDenseView<T>(Y)));
    apply_impl(alpha, X, beta, Y);
  }

  // The local part of the diagonal, local_rows() entries in context().space().
  virtual void diagonal(T* out) const = 0;

 protected:
  // apply() with its arguments checked.
  virtual void apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) = 0;
};

// An operator that also multiplies fp32 blocks itself: Y = A X with X in fp32
// (LOBPCG's residual block in its search precision,
// LobpcgOptions::search_precision), summed and stored in T.
template <class T>
class SingleInputOperator : public LinearOperator<T> {
 public:
  // Same arguments and checks as apply(); Y is not read. Collective.
  void apply_single(dense::ConstDenseView<float> X, dense::DenseView<T> Y) {
    check_apply_arguments("apply_single", this->local_rows(), this->context().space(), BlockExtent::of(X),
                          BlockExtent::of(dense::ConstDenseView<T>(Y)));
    apply_single_impl(X, Y);
  }
  // Whether fp32 input pays: an fp64 operator (for an fp32 one X is already
  // in its precision).
  bool applies_single() const { return std::is_same_v<T, double>; }

  // Whether rounded_to_single() gives a copy: an fp64 operator, real or complex.
  bool rounds_to_single() const { return std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>; }
  // The same matrix with its values rounded to single precision (fp32, or
  // complex fp32 for a complex operator), applied to blocks of that type
  // (Y = alpha A X + beta Y, all in it), for work that tolerates its rounding
  // throughout: the Chebyshev polynomial (ChebyshevOptions::precision), the
  // mixed filter. It may share this operator's storage and must not outlive
  // it. Collective; null where rounds_to_single() is false.
  virtual std::unique_ptr<LinearOperator<single_t<T>>> rounded_to_single() = 0;

 protected:
  virtual void apply_single_impl(dense::ConstDenseView<float> X, dense::DenseView<T> Y) = 0;
};

// An operator that can stand for A + shift I in its own products (its stored
// diagonal entries set to A(i, i) + shift), so that a solver's (A - c I) X
// costs one product instead of a product and a pass over X: the Chebyshev
// filter of Chebyshev-filtered subspace iteration (solver/chfsi).
template <class T>
class DiagonalShiftOperator {
 public:
  virtual ~DiagonalShiftOperator() = default;
  // From now on the products are those of A + shift I; shift 0 gives back A
  // bit for bit. False (on every rank, nothing changed) where some row stores
  // no diagonal entry. Collective.
  virtual bool set_diagonal_shift(T shift) = 0;
};

// A's single-precision copy (SingleInputOperator::rounded_to_single) where
// it offers one, else null. Collective.
template <class T>
std::unique_ptr<LinearOperator<single_t<T>>> rounded_to_single(LinearOperator<T>& A) {
  auto* single = dynamic_cast<SingleInputOperator<T>*>(&A);
  return single && single->rounds_to_single() ? single->rounded_to_single() : nullptr;
}

// True when A multiplies fp32 blocks itself (see SingleInputOperator).
template <class T>
bool applies_single(const LinearOperator<T>& A) {
  const auto* single = dynamic_cast<const SingleInputOperator<T>*>(&A);
  return single && single->applies_single();
}

}  // namespace blockeigs::solver
