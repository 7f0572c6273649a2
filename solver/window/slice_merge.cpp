// The pairs two slices both found near their shared end, merged once
// (slice_merge.hpp says how).
#include "solver/window/slice_merge.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/symmetric_eigen.hpp"

namespace blockeigs::solver {
namespace {

constexpr double kNewDirection = 0.5;  // a candidate's squared length outside the pairs below, to be kept

template <class Keep>
std::vector<std::int64_t> where(const std::vector<double>& values, Keep keep) {
  std::vector<std::int64_t> out;
  for (std::size_t j = 0; j < values.size(); ++j)
    if (keep(values[j])) out.push_back(static_cast<std::int64_t>(j));
  return out;
}

// `above` with its columns `kept` and the pairs (X, values, residuals) added, ascending.
template <class T>
void rebuild(const dense::Context& ctx, SliceOutcome<T>& above, const std::vector<std::int64_t>& kept,
             dense::ConstDenseView<T> X, const std::vector<double>& values, const std::vector<double>& residuals) {
  const auto k = static_cast<std::int64_t>(kept.size());
  std::vector<double> v, r;
  for (const std::int64_t j : kept) {
    v.push_back(above.values[j]);
    r.push_back(above.residuals[j]);
  }
  v.insert(v.end(), values.begin(), values.end());
  r.insert(r.end(), residuals.begin(), residuals.end());
  dense::DenseBlock<T> vectors(above.vectors.space(), above.vectors.rows(), static_cast<std::int64_t>(v.size()));
  if (k > 0) select_columns(ctx, above.vectors.cview(), kept, column_range(vectors.view(), 0, k));
  if (X.cols > 0) copy_block(ctx, X, column_range(vectors.view(), k, X.cols));
  std::vector<std::int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return v[x] < v[y]; });
  if (!order.empty()) permute_columns(ctx, vectors.view(), order);
  above.values.clear();
  above.residuals.clear();
  for (const std::int64_t j : order) {
    above.values.push_back(v[j]);
    above.residuals.push_back(r[j]);
  }
  above.vectors = std::move(vectors);
}

}  // namespace

template <class T>
MergeOutcome merge_shared_end(LinearOperator<T>& A, MPI_Comm comm, const SliceOutcome<T>& below, SliceOutcome<T>& above,
                              double from, double to) {
  const dense::Context& ctx = A.context();
  const Space space = ctx.space();
  const std::vector<std::int64_t> ib = where(below.values, [&](double v) { return v >= from; });
  const std::vector<std::int64_t> ia = where(above.values, [&](double v) { return v <= to; });
  MergeOutcome out;
  out.candidates_below = static_cast<int>(ib.size());
  out.candidates_above = static_cast<int>(ia.size());
  out.kept = out.candidates_above;
  if (ib.empty() || ia.empty()) return out;
  const std::int64_t n = A.local_rows(), b = out.candidates_below, c = out.candidates_above;
  // R: the candidates above less their components along those below (classical Gram-Schmidt, twice).
  dense::DenseBlock<T> Cb(space, n, b), R(space, n, c);
  select_columns(ctx, below.vectors.cview(), ib, Cb.view());
  select_columns(ctx, above.vectors.cview(), ia, R.view());
  for (int pass = 0; pass < 2; ++pass) {
    const HostMatrixFor<T> S = gram<T>(ctx, comm, Cb.cview(), R.cview());
    block_update<T>(ctx, T(-1), Cb.cview(), S, T(1), R.view());
  }
  const EigenOf<small_t<T>> g = small_eigen(gram<T>(ctx, comm, R.cview()), 0, c);
  std::vector<std::int64_t> directions;
  for (std::int64_t j = 0; j < c; ++j)
    if (g.values[j] > kNewDirection) directions.push_back(j);
  out.kept = static_cast<int>(directions.size());
  if (out.kept == c) return out;
  std::vector<std::int64_t> rest;  // above's pairs that are not candidates
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(above.values.size()); ++j)
    if (!std::binary_search(ia.begin(), ia.end(), j)) rest.push_back(j);
  if (out.kept == 0) {
    rebuild<T>(ctx, above, rest, dense::ConstDenseView<T>(space, n, 0, 0, nullptr), {}, {});
    return out;
  }
  // W: the new directions, orthonormal; then the Ritz pairs of A on them.
  const std::int64_t m = out.kept;
  HostMatrixFor<T> U(c, m);
  for (std::int64_t q = 0; q < m; ++q)
    for (std::int64_t i = 0; i < c; ++i) U(i, q) = g.vectors(i, directions[q]) / std::sqrt(g.values[directions[q]]);
  dense::DenseBlock<T> W(space, n, m), AW(space, n, m), X(space, n, m), AX(space, n, m);
  block_update<T>(ctx, T(1), R.cview(), U, T(0), W.view());
  A.apply(T(1), W.cview(), T(0), AW.view());
  const EigenOf<small_t<T>> h = small_eigen(gram<T>(ctx, comm, W.cview(), AW.cview()), 0, m);
  block_update<T>(ctx, T(1), W.cview(), h.vectors, T(0), X.view());
  block_update<T>(ctx, T(1), AW.cview(), h.vectors, T(0), AX.view());
  const std::vector<double> residuals =
      eigen_residuals<T>(ctx, comm, X.cview(), AX.cview(), h.values, W.view()).residual;
  rebuild<T>(ctx, above, rest, X.cview(), h.values, residuals);
  return out;
}

#define BLOCKEIGS_MERGE(T)                                                                                       \
  template MergeOutcome merge_shared_end(LinearOperator<T>&, MPI_Comm, const SliceOutcome<T>&, SliceOutcome<T>&, \
                                         double, double);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_MERGE)
#undef BLOCKEIGS_MERGE

}  // namespace blockeigs::solver
