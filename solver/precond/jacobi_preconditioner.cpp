#include "solver/precond/jacobi_preconditioner.hpp"

#include <cmath>
#include <complex>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::solver {

template <class T>
std::vector<T> inverse_abs_diagonal(const LinearOperator<T>& A, const char* who) {
  const std::int64_t n = A.local_rows();
  const dense::Context& context = A.context();
  return collectively(A.comm(), [&] {
    dense::Buffer<T> diagonal(context.space(), static_cast<std::size_t>(n));
    if (n > 0) A.diagonal(diagonal.data());
    context.synchronize();
    std::vector<T> d = diagonal.to_host();
    for (std::int64_t i = 0; i < n; ++i) {
      if (d[i] == T(0) || !std::isfinite(static_cast<double>(std::abs(d[i]))))
        fail_input(who, ": the matrix has diagonal entry ", d[i], " in row ", A.first_row() + i,
                   " (0-based); Jacobi scales each row by 1/|a_ii| and needs every diagonal entry "
                   "nonzero and finite (for an SPD matrix they are positive): choose a preconditioner "
                   "without Jacobi scaling for this matrix");
      d[i] = T(1) / std::abs(d[i]);
    }
    return d;
  });
}

template <class T>
JacobiPreconditioner<T>::JacobiPreconditioner(const LinearOperator<T>& A)
    : context_(A.context()), inverse_(context_.space(), inverse_abs_diagonal(A, "Jacobi preconditioner")) {}

template <class T>
void JacobiPreconditioner<T>::apply(dense::ConstDenseView<T> R, dense::DenseView<T> W) {
  if (static_cast<std::size_t>(R.rows) != inverse_.size())
    throw Error(detail::concat("Jacobi preconditioner: a block with ", R.rows, " rows, but the operator has ",
                               inverse_.size(), " local rows"));
  apply_diagonal(context_, inverse_.data(), R, W);
}

#define BLOCKEIGS_JACOBI(T)                                                            \
  template std::vector<T> inverse_abs_diagonal(const LinearOperator<T>&, const char*); \
  template class JacobiPreconditioner<T>;
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_JACOBI)
#undef BLOCKEIGS_JACOBI

}  // namespace blockeigs::solver
