#include "solver/chfsi/chebyshev_filter.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

double filter_growth_per_degree(const FilterInterval& interval, double x) {
  const double c = 0.5 * (interval.a + interval.b), e = 0.5 * (interval.b - interval.a);
  const double t = std::abs((x - c) / e);
  return t <= 1 ? 1.0 : t + std::sqrt(t * t - 1);
}

template <class T>
std::int64_t chebyshev_filter(LinearOperator<T>& A, const FilterInterval& interval, const std::vector<int>& degrees,
                              spmm::DenseView<T> V, spmm::DenseView<T> scratch) {
  const std::int64_t m = V.cols;
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(degrees.size()) == m && scratch.cols >= m);
  if (m == 0) return 0;
  BLOCKEIGS_ASSERT(std::is_sorted(degrees.rbegin(), degrees.rend()));
  for (const int d : degrees)
    if (d < 2 || d % 2 != 0) throw Error(detail::concat("chebyshev_filter: degree ", d, " is not even and at least 2"));
  const spmm::Context& ctx = A.context();
  const double e = 0.5 * (interval.b - interval.a), c = 0.5 * (interval.b + interval.a);
  if (!(e > 0) || !(interval.lowest < c))
    throw Error(detail::concat("chebyshev_filter: the interval [", interval.a, ", ", interval.b, "] with lowest ",
                               interval.lowest, " is empty or inverted"));
  const auto s = static_cast<T>(interval.sign);
  // Columns still filtered at step i (those whose degree is at least i): a prefix.
  const auto width = [&](int i) {
    return static_cast<std::int64_t>(std::count_if(degrees.begin(), degrees.end(), [i](int d) { return d >= i; }));
  };
  const spmm::DenseView<T> Y0 = V, Y1{scratch.space, scratch.rows, m, scratch.ld, scratch.data};
  std::int64_t products = 0;
  // Step 1: Y1 = (sigma1 / e) (s A - c) Y0.
  double sigma = e / (interval.lowest - c);
  const double sigma1 = sigma, tau = 2 / sigma1;
  axpby(ctx, static_cast<T>(-c * sigma1 / e), spmm::ConstDenseView<T>(Y0), T(0), Y1);
  A.apply(static_cast<T>(s * sigma1 / e), spmm::ConstDenseView<T>(Y0), T(1), Y1);
  products += m;
  // Step i >= 2: Y_i = (2 sigma_i / e) (s A - c) Y_{i-1} - sigma_{i-1} sigma_i Y_{i-2}, over Y_{i-2}'s buffer.
  const int top = degrees.front();
  for (int i = 2; i <= top; ++i) {
    const double sigma_next = 1 / (tau - sigma);
    const std::int64_t w = width(i);
    const spmm::DenseView<T>& older = i % 2 == 0 ? Y0 : Y1;  // Y_{i-2}, overwritten by Y_i
    const spmm::DenseView<T>& last = i % 2 == 0 ? Y1 : Y0;   // Y_{i-1}
    const spmm::DenseView<T> out = column_range(older, 0, w);
    const spmm::ConstDenseView<T> in = column_range(spmm::ConstDenseView<T>(last), 0, w);
    axpby(ctx, static_cast<T>(-2 * sigma_next * c / e), in, static_cast<T>(-sigma * sigma_next), out);
    A.apply(static_cast<T>(2 * sigma_next * s / e), in, T(1), out);
    products += w;
    sigma = sigma_next;
  }
  return products;
}

template std::int64_t chebyshev_filter(LinearOperator<float>&, const FilterInterval&, const std::vector<int>&,
                                       spmm::DenseView<float>, spmm::DenseView<float>);
template std::int64_t chebyshev_filter(LinearOperator<double>&, const FilterInterval&, const std::vector<int>&,
                                       spmm::DenseView<double>, spmm::DenseView<double>);

}  // namespace blockeigs::solver
