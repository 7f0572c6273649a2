#include "solver/chfsi/chfsi_ortho.hpp"

#include <algorithm>
#include <cmath>
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
bool scaled_cholesky_inverse(const HostMatrix& G, double shift, const CholeskyInverse& factor, HostMatrix& out) {
  const std::int64_t n = G.rows();
  std::vector<double> d(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) d[i] = G(i, i) > 0 ? 1 / std::sqrt(G(i, i)) : 1.0;
  HostMatrix scaled(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) scaled(i, j) = d[i] * G(i, j) * d[j] + (i == j ? shift : 0.0);
  HostMatrix U;
  if (!(factor ? factor(scaled, U) : lapack_cholesky_inverse(scaled, U))) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) U(i, j) *= d[i];
  out = std::move(U);
  return true;
}

// One pass; true where the Gram matrix needed a shift.
template <class T>
bool one_pass(const dense::Context& ctx, MPI_Comm comm, dense::DenseView<T> V, std::int64_t first,
              dense::DenseView<T> scratch, const CholeskyInverse& factor) {
  const std::int64_t m = V.cols, ma = m - first;
  const dense::DenseView<T> Va = column_range(V, first, ma), Sa = column_range(scratch, 0, ma);
  if (first > 0) {  // Va -= V_L (V_L^T Va)
    const dense::ConstDenseView<T> locked = column_range(dense::ConstDenseView<T>(V), 0, first);
    const HostMatrix C = gram<T>(ctx, comm, locked, dense::ConstDenseView<T>(Va));
    block_update(ctx, T(-1), locked, C, T(1), Va);
  }
  const HostMatrix G = gram<T>(ctx, comm, dense::ConstDenseView<T>(Va));
  HostMatrix R;
  HostMatrix shifted(1, 1);  // 1: the factor needed a shift
  if (rank_of(comm) == 0) {
    if (!scaled_cholesky_inverse(G, 0.0, factor, R)) {
      const double eps = std::numeric_limits<T>::epsilon();
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
                          dense::DenseView<T> scratch, const CholeskyInverse& factor) {
  if (V.cols - first <= 0) return;
  const bool shifted = one_pass(context, comm, V, first, scratch, factor);
  one_pass(context, comm, V, first, scratch, factor);
  if (shifted) one_pass(context, comm, V, first, scratch, factor);
}

template void chfsi_orthonormalize(const dense::Context&, MPI_Comm, dense::DenseView<float>, std::int64_t,
                                   dense::DenseView<float>, const CholeskyInverse&);
template void chfsi_orthonormalize(const dense::Context&, MPI_Comm, dense::DenseView<double>, std::int64_t,
                                   dense::DenseView<double>, const CholeskyInverse&);

HostMatrix projected_eigenpairs(MPI_Comm comm, HostMatrix& H, const SymmetricEigenSolver& eigen, std::int64_t m,
                                HostMatrix& values) {
  HostMatrix Q;
  values = HostMatrix(1, m);
  if (rank_of(comm) == 0) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < i; ++j) H(i, j) = H(j, i) = 0.5 * (H(i, j) + H(j, i));
    SymmetricEigen e = eigen(H, 0, m);
    Q = std::move(e.vectors);
    std::copy(e.values.begin(), e.values.end(), values.data());
  }
  broadcast(comm, Q);
  broadcast(comm, values);
  return Q;
}

}  // namespace blockeigs::solver
