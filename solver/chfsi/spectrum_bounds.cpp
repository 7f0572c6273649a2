#include "solver/chfsi/spectrum_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {

template <class T>
SpectrumEstimate lanczos_bounds(LinearOperator<T>& A, int sign, int steps, std::uint64_t seed, MPI_Comm comm) {
  const dense::Context& ctx = A.context();
  const std::int64_t n = A.local_rows();
  dense::DenseBlock<T> q(ctx.space(), n, 1), previous(ctx.space(), n, 1), w(ctx.space(), n, 1);
  fill_random(ctx, q.view(), seed, A.first_row());
  const double norm = column_norms(ctx, comm, q.cview())[0];
  scale_columns(ctx, {1 / norm}, q.view());
  dense::fill_bytes(previous.data(), ctx.space(), 0, sizeof(T) * static_cast<std::size_t>(n));
  std::vector<double> alpha, beta;
  SpectrumEstimate out;
  double b = 0;
  for (int j = 0; j < steps; ++j) {
    A.apply(static_cast<T>(sign), q.cview(), T(0), w.view());  // w = s A q
    ++out.products;
    const double a = std::real(gram<T>(ctx, comm, q.cview(), w.cview())(0, 0));  // real for a Hermitian A
    axpby(ctx, static_cast<T>(-a), q.cview(), T(1), w.view());
    axpby(ctx, static_cast<T>(-b), previous.cview(), T(1), w.view());
    alpha.push_back(a);
    b = column_norms(ctx, comm, w.cview())[0];
    beta.push_back(b);
    if (!(b > 0)) break;  // an invariant subspace: T's values are eigenvalues
    std::swap(previous, q);
    copy_block(ctx, w.cview(), q.view());
    scale_columns(ctx, {1 / b}, q.view());
  }
  const auto k = static_cast<std::int64_t>(alpha.size());
  HostMatrix t(k, k);
  for (std::int64_t i = 0; i < k; ++i) {
    t(i, i) = alpha[i];
    if (i + 1 < k) t(i + 1, i) = t(i, i + 1) = beta[i];
  }
  const SymmetricEigen e = symmetric_eigen(t, k - 1, 1);
  out.lowest_ritz = e.values.front();
  out.top_ritz = e.values.back();
  out.upper_bound = e.values.back() + std::abs(beta.back());
  out.residual_bound = e.values.back() + std::abs(beta.back()) * std::abs(e.vectors(k - 1, 0));
  return out;
}

#define BLOCKEIGS_BOUNDS(T) \
  template SpectrumEstimate lanczos_bounds(LinearOperator<T>&, int, int, std::uint64_t, MPI_Comm);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_BOUNDS)
#undef BLOCKEIGS_BOUNDS

}  // namespace blockeigs::solver
