#include "solver/chfsi/chebyshev_filter.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {
namespace {

// Gives an operator its own diagonal back when the filter ends, however it ends (a local write: no messages).
template <class T>
struct ShiftRestore {
  DiagonalShiftOperator<T>* op;
  ~ShiftRestore() {
    if (op) op->set_diagonal_shift(T(0));
  }
};

}  // namespace

double filter_growth_per_degree(const FilterInterval& interval, double x) {
  const double c = 0.5 * (interval.a + interval.b), e = 0.5 * (interval.b - interval.a);
  const double t = std::abs((x - c) / e);
  return t <= 1 ? 1.0 : t + std::sqrt(t * t - 1);
}

template <class T>
std::int64_t chebyshev_filter(LinearOperator<T>& A, const FilterInterval& interval, const std::vector<int>& degrees,
                              dense::DenseView<T> V, dense::DenseView<T> scratch) {
  const std::int64_t m = V.cols;
  BLOCKEIGS_ASSERT(static_cast<std::int64_t>(degrees.size()) == m && scratch.cols >= m);
  if (m == 0) return 0;
  BLOCKEIGS_ASSERT(std::is_sorted(degrees.rbegin(), degrees.rend()));
  for (const int d : degrees)
    if (d < 2 || d % 2 != 0) throw Error(detail::concat("chebyshev_filter: degree ", d, " is not even and at least 2"));
  const dense::Context& ctx = A.context();
  const double e = 0.5 * (interval.b - interval.a), c = 0.5 * (interval.b + interval.a);
  if (!(e > 0) || !(interval.lowest < c))
    throw Error(detail::concat("chebyshev_filter: the interval [", interval.a, ", ", interval.b, "] with lowest ",
                               interval.lowest, " is empty or inverted"));
  const double s = interval.sign;
  // Columns still filtered at step i (those whose degree is at least i): a prefix.
  const auto width = [&](int i) {
    return static_cast<std::int64_t>(std::count_if(degrees.begin(), degrees.end(), [i](int d) { return d >= i; }));
  };
  const dense::DenseView<T> Y0 = V, Y1{scratch.space, scratch.rows, m, scratch.ld, scratch.data};
  // (s A - c) Y in one product where the operator can stand for A - s c I; else a product and a pass.
  auto* shiftable = dynamic_cast<DiagonalShiftOperator<T>*>(&A);
  const bool shifted = shiftable && shiftable->set_diagonal_shift(static_cast<T>(-s * c));
  const ShiftRestore<T> restore{shifted ? shiftable : nullptr};
  // C = alpha (s A - c) Y + beta C.
  const auto product = [&](double alpha, dense::ConstDenseView<T> Y, double beta, dense::DenseView<T> C) {
    if (!shifted) {
      axpby(ctx, static_cast<T>(-c * alpha), Y, static_cast<T>(beta), C);
      beta = 1;
    }
    A.apply(static_cast<T>(s * alpha), Y, static_cast<T>(beta), C);
  };
  std::int64_t products = 0;
  // Step 1: Y1 = (sigma1 / e) (s A - c) Y0.
  double sigma = e / (interval.lowest - c);
  const double sigma1 = sigma, tau = 2 / sigma1;
  product(sigma1 / e, dense::ConstDenseView<T>(Y0), 0, Y1);
  products += m;
  // Step i >= 2: Y_i = (2 sigma_i / e) (s A - c) Y_{i-1} - sigma_{i-1} sigma_i Y_{i-2}, over Y_{i-2}'s buffer.
  const int top = degrees.front();
  for (int i = 2; i <= top; ++i) {
    const double sigma_next = 1 / (tau - sigma);
    const std::int64_t w = width(i);
    const dense::DenseView<T>& older = i % 2 == 0 ? Y0 : Y1;  // Y_{i-2}, overwritten by Y_i
    const dense::DenseView<T>& last = i % 2 == 0 ? Y1 : Y0;   // Y_{i-1}
    product(2 * sigma_next / e, column_range(dense::ConstDenseView<T>(last), 0, w), -sigma * sigma_next,
            column_range(older, 0, w));
    products += w;
    sigma = sigma_next;
  }
  return products;
}

#define BLOCKEIGS_FILTER(T)                                                                                  \
  template std::int64_t chebyshev_filter(LinearOperator<T>&, const FilterInterval&, const std::vector<int>&, \
                                         dense::DenseView<T>, dense::DenseView<T>);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_FILTER)
#undef BLOCKEIGS_FILTER

}  // namespace blockeigs::solver
