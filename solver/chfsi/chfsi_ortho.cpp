#include "solver/chfsi/chfsi_ortho.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "core/checks.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

// D U^-1 for the Cholesky factor U of D G D (D = diag(G)^-1/2), shifted by
// `shift` times the identity; false where that is not positive definite.
template <class S>
bool scaled_cholesky_inverse(const HostMatrixOf<S>& G, double shift, const CholeskyInverseOf<S>& factor,
                             HostMatrixOf<S>& out) {
  const std::int64_t n = G.rows();
  std::vector<double> d(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = std::real(G(i, i));
    d[i] = g > 0 ? 1 / std::sqrt(g) : 1.0;
  }
  HostMatrixOf<S> scaled(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) scaled(i, j) = d[i] * G(i, j) * d[j] + (i == j ? shift : 0.0);
  HostMatrixOf<S> U;
  if (!(factor ? factor(scaled, U) : lapack_cholesky_inverse(scaled, U))) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) U(i, j) *= d[i];
  out = std::move(U);
  return true;
}

// One pass; true where the Gram matrix needed a shift.
template <class T>
bool one_pass(const dense::Context& ctx, MPI_Comm comm, dense::DenseView<T> V, std::int64_t first,
              dense::DenseView<T> scratch, const CholeskyInverseOf<small_t<T>>& factor) {
  const std::int64_t m = V.cols, ma = m - first;
  const dense::DenseView<T> Va = column_range(V, first, ma), Sa = column_range(scratch, 0, ma);
  if (first > 0) {  // Va -= V_L (V_L^T Va)
    const dense::ConstDenseView<T> locked = column_range(dense::ConstDenseView<T>(V), 0, first);
    const HostMatrixFor<T> C = gram<T>(ctx, comm, locked, dense::ConstDenseView<T>(Va));
    block_update(ctx, T(-1), locked, C, T(1), Va);
  }
  const HostMatrixFor<T> G = gram<T>(ctx, comm, dense::ConstDenseView<T>(Va));
  HostMatrixFor<T> R;
  HostMatrix shifted(1, 1);  // 1: the factor needed a shift
  if (rank_of(comm) == 0) {
    if (!scaled_cholesky_inverse(G, 0.0, factor, R)) {
      const double eps = std::numeric_limits<real_t<T>>::epsilon();
      double shift = 10 * static_cast<double>(ma) * eps;
      while (!scaled_cholesky_inverse(G, shift, factor, R)) shift *= 10;
      shifted(0, 0) = 1;
    }
  }
  broadcast(comm, R);
  broadcast(comm, shifted);
  transform_in_place(ctx, Va, R, Sa);
  return shifted(0, 0) != 0;
}

}  // namespace

template <class T>
void chfsi_orthonormalize(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> V, std::int64_t first,
                          dense::DenseView<T> scratch, const CholeskyInverseOf<small_t<T>>& factor) {
  if (V.cols - first <= 0) return;
  const bool shifted = one_pass(context, comm, V, first, scratch, factor);
  one_pass(context, comm, V, first, scratch, factor);
  if (shifted) one_pass(context, comm, V, first, scratch, factor);
}

#define BLOCKEIGS_ORTHONORMALIZE(T)                                                                      \
  template void chfsi_orthonormalize(const dense::Context&, MPI_Comm, dense::DenseView<T>, std::int64_t, \
                                     dense::DenseView<T>, const CholeskyInverseOf<small_t<T>>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_ORTHONORMALIZE)
#undef BLOCKEIGS_ORTHONORMALIZE

template <class S>
HostMatrixOf<S> projected_eigenpairs(MPI_Comm comm, HostMatrixOf<S>& H, const EigenSolverOf<S>& eigen, std::int64_t m,
                                     HostMatrix& values) {
  HostMatrixOf<S> Q;
  values = HostMatrix(1, m);
  if (rank_of(comm) == 0) {
    for (std::int64_t i = 0; i < m; ++i) {
      if constexpr (is_complex_v<S>) H(i, i) = std::real(H(i, i));
      for (std::int64_t j = 0; j < i; ++j) {
        if constexpr (is_complex_v<S>) {
          H(i, j) = 0.5 * (H(i, j) + std::conj(H(j, i)));
          H(j, i) = std::conj(H(i, j));
        } else {
          H(i, j) = H(j, i) = 0.5 * (H(i, j) + H(j, i));
        }
      }
    }
    EigenOf<S> e = eigen(H, 0, m);
    Q = std::move(e.vectors);
    std::copy(e.values.begin(), e.values.end(), values.data());
  }
  broadcast(comm, Q);
  broadcast(comm, values);
  return Q;
}
template HostMatrix projected_eigenpairs(MPI_Comm, HostMatrix&, const SymmetricEigenSolver&, std::int64_t, HostMatrix&);
template ComplexHostMatrix projected_eigenpairs(MPI_Comm, ComplexHostMatrix&, const HermitianEigenSolver&, std::int64_t,
                                                HostMatrix&);

}  // namespace blockeigs::solver
