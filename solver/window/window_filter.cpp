#include "solver/window/window_filter.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/window/kpm_density.hpp"

namespace blockeigs::solver {

double WindowFilter::value(double x) const {
  const double t = std::clamp(scale.to_unit(x), -1.0, 1.0);
  double previous = 1, current = t, sum = coefficients[0];
  if (degree() >= 1) sum += coefficients[1] * t;
  for (int j = 2; j <= degree(); ++j) {
    const double next = 2 * t * current - previous;
    previous = current;
    current = next;
    sum += coefficients[j] * current;
  }
  return sum;
}

WindowFilter window_filter(const SpectrumScale& scale, double a, double b, int degree, double resolution,
                           int max_degree) {
  const double alpha = std::clamp(scale.to_unit(a), -1.0, 1.0), beta = std::clamp(scale.to_unit(b), -1.0, 1.0);
  if (degree <= 0) {
    const double angle = std::max(std::acos(alpha) - std::acos(beta), 1e-12);
    const double wanted = std::ceil(resolution * std::numbers::pi / angle);
    degree = static_cast<int>(std::clamp(wanted, 16.0, static_cast<double>(std::max(16, max_degree))));
  }
  WindowFilter f;
  f.scale = scale;
  f.coefficients = indicator_coefficients(alpha, beta, degree);
  // Lanczos' sigma factors: a sharper edge than Jackson's kernel at the same degree (the 20^3 Laplacian's
  // [1.0, 1.3]: 208k column products against 260k), with ripples of a few percent.
  for (int j = 1; j <= degree; ++j) {
    const double x = j * std::numbers::pi / (degree + 1);
    f.coefficients[j] *= std::sin(x) / x;
  }
  return f;
}

template <class T>
std::int64_t apply_window_filter(LinearOperator<T>& A, const WindowFilter& filter, dense::DenseView<T> V,
                                 dense::DenseView<T> scratch, dense::DenseView<T> Y) {
  const std::int64_t m = V.cols;
  BLOCKEIGS_ASSERT(scratch.cols >= m && Y.cols >= m && filter.degree() >= 1);
  if (m == 0) return 0;
  const dense::Context& ctx = A.context();
  const std::vector<double>& c = filter.coefficients;
  dense::DenseView<T> previous = V, current{scratch.space, scratch.rows, m, scratch.ld, scratch.data};
  ScaledOperator<T> op(A, filter.scale);
  op.apply(1, dense::ConstDenseView<T>(previous), 0, current);  // T_1
  axpby(ctx, static_cast<T>(c[0]), dense::ConstDenseView<T>(previous), T(0), Y);
  axpby(ctx, static_cast<T>(c[1]), dense::ConstDenseView<T>(current), T(1), Y);
  std::int64_t products = m;
  for (int j = 2; j <= filter.degree(); ++j) {
    op.apply(2, dense::ConstDenseView<T>(current), -1, previous);  // T_j = 2 A_hat T_{j-1} - T_{j-2}
    std::swap(previous, current);
    axpby(ctx, static_cast<T>(c[j]), dense::ConstDenseView<T>(current), T(1), Y);
    products += m;
  }
  return products;
}

#define BLOCKEIGS_WINDOW_FILTER(T)                                                                        \
  template std::int64_t apply_window_filter(LinearOperator<T>&, const WindowFilter&, dense::DenseView<T>, \
                                            dense::DenseView<T>, dense::DenseView<T>);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_WINDOW_FILTER)
#undef BLOCKEIGS_WINDOW_FILTER

}  // namespace blockeigs::solver
