// Jacobi (diagonal) preconditioner: W = |D|^{-1} R with D the operator's
// diagonal (real for a Hermitian operator). For an SPD matrix the diagonal is positive and this is classical
// Jacobi. For an indefinite matrix the absolute value keeps M SPD, which
// LOBPCG needs (a negative entry would make M indefinite). A zero (or
// non-finite) diagonal entry leaves no scaling to apply: the constructor
// rejects it with an InputError naming the global row, on every rank.
#pragma once

#include <vector>

#include "solver/base/linear_operator.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/preconditioner_memory.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

// 1 / |a_ii| for the local rows, on the host. A zero or non-finite diagonal
// entry is an InputError naming `who` and the global row, on every rank.
// Collective over A.comm().
template <class T>
std::vector<T> inverse_abs_diagonal(const LinearOperator<T>& A, const char* who);

template <class T>
class JacobiPreconditioner final : public Preconditioner<T> {
 public:
  // Collective over A.comm(). Keeps a reference to A's context.
  explicit JacobiPreconditioner(const LinearOperator<T>& A);

  void apply(dense::ConstDenseView<T> R, dense::DenseView<T> W) override;

  // For the memory plan: 1 / |d_i| kept, and the diagonal beside it while it is made.
  static PreconditionerMemory memory() { return {.vector_bytes = 2 * int{sizeof(T)}}; }

 private:
  const dense::Context& context_;
  dense::Buffer<T> inverse_;  // 1 / |d_i|, local rows, in the context's space
};

}  // namespace blockeigs::solver
