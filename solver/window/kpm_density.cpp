#include "solver/window/kpm_density.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {
namespace {

constexpr double kPi = std::numbers::pi;

// sum_j g_j c_j mu_v[j] for one vector.
double damped_sum(const std::vector<double>& g, const std::vector<double>& c, const std::vector<double>& mu) {
  double s = 0;
  for (std::size_t j = 0; j < c.size(); ++j) s += g[j] * c[j] * mu[j];
  return s;
}

}  // namespace

std::vector<double> jackson_factors(int degree) {
  std::vector<double> g(static_cast<std::size_t>(degree) + 1);
  const double q = kPi / (degree + 2);
  for (int j = 0; j <= degree; ++j)
    g[j] = ((degree - j + 2) * std::cos(j * q) + std::sin(j * q) / std::tan(q)) / (degree + 2);
  return g;
}

std::vector<double> indicator_coefficients(double alpha, double beta, int degree) {
  alpha = std::clamp(alpha, -1.0, 1.0);
  beta = std::clamp(beta, -1.0, 1.0);
  const double ta = std::acos(alpha), tb = std::acos(beta);
  std::vector<double> c(static_cast<std::size_t>(degree) + 1);
  c[0] = (ta - tb) / kPi;
  for (int j = 1; j <= degree; ++j) c[j] = 2 * (std::sin(j * ta) - std::sin(j * tb)) / (j * kPi);
  return c;
}

template <class T>
DensityOfStates kpm_density(LinearOperator<T>& A, const SpectrumScale& scale, int vectors, int degree,
                            std::uint64_t seed, MPI_Comm comm) {
  BLOCKEIGS_ASSERT(vectors >= 1 && degree >= 2);
  const dense::Context& ctx = A.context();
  const std::int64_t n = A.local_rows();
  DensityOfStates dos;
  dos.scale = scale;
  dos.rows = A.global_rows();
  dense::DenseBlock<T> T0(ctx.space(), n, vectors), prev(ctx.space(), n, vectors), cur(ctx.space(), n, vectors);
  fill_random(ctx, T0.view(), seed, A.first_row());
  // Each vector scaled to squared norm `rows`: v^T M v then estimates tr M.
  std::vector<double> norms = column_norms(ctx, comm, T0.cview());
  for (double& x : norms) x = std::sqrt(static_cast<double>(dos.rows)) / x;
  scale_columns(ctx, norms, T0.view());
  ScaledOperator<T> op(A, scale);
  dos.mu.assign(static_cast<std::size_t>(vectors), std::vector<double>(static_cast<std::size_t>(degree) + 1));
  const auto diagonal = [&](dense::ConstDenseView<T> X, dense::ConstDenseView<T> Y) {
    const HostMatrixFor<T> G = gram<T>(ctx, comm, X, Y);
    std::vector<double> d(static_cast<std::size_t>(vectors));
    for (int v = 0; v < vectors; ++v) d[v] = std::real(G(v, v));  // v^H T_j(A) v, real for Hermitian A
    return d;
  };
  copy_block(ctx, T0.cview(), prev.view());
  op.apply(1, T0.cview(), 0, cur.view());  // T_1 = A_hat T_0
  dos.products += vectors;
  const std::vector<double> mu0 = diagonal(T0.cview(), T0.cview()), mu1 = diagonal(T0.cview(), cur.cview());
  for (int v = 0; v < vectors; ++v) {
    dos.mu[v][0] = mu0[v];
    dos.mu[v][1] = mu1[v];
  }
  // With prev = T_j and cur = T_{j+1}: mu_{2j+2} = 2 T_{j+1}^T T_{j+1} - mu_0, mu_{2j+1} = 2 T_{j+1}^T T_j - mu_1.
  for (int j = 0; 2 * j + 2 <= degree; ++j) {
    if (j > 0) {
      const std::vector<double> cross = diagonal(prev.cview(), cur.cview());
      for (int v = 0; v < vectors; ++v) dos.mu[v][2 * j + 1] = 2 * cross[v] - mu1[v];
    }
    const std::vector<double> square = diagonal(cur.cview(), cur.cview());
    for (int v = 0; v < vectors; ++v) dos.mu[v][2 * j + 2] = 2 * square[v] - mu0[v];
    if (2 * j + 3 > degree) break;
    op.apply(2, cur.cview(), -1, prev.view());  // prev = T_{j+2} = 2 A_hat T_{j+1} - T_j
    dos.products += vectors;
    std::swap(prev, cur);  // prev = T_{j+1}, cur = T_{j+2}
  }
  // The last odd moment where the loop stopped short of it.
  if (degree % 2 == 1 && degree >= 3) {
    const std::vector<double> cross = diagonal(prev.cview(), cur.cview());
    for (int v = 0; v < vectors; ++v) dos.mu[v][degree] = 2 * cross[v] - mu1[v];
  }
  return dos;
}

CountEstimate estimate_count(const DensityOfStates& dos, double a, double b) {
  const int d = dos.degree();
  const std::vector<double> g = jackson_factors(d);
  const std::vector<double> c = indicator_coefficients(dos.scale.to_unit(a), dos.scale.to_unit(b), d);
  const auto m = static_cast<double>(dos.mu.size());
  double sum = 0, square = 0;
  for (const auto& mu : dos.mu) {
    const double x = damped_sum(g, c, mu);
    sum += x;
    square += x * x;
  }
  CountEstimate e;
  e.count = sum / m;
  e.error = m > 1 ? std::sqrt(std::max(0.0, (square - m * e.count * e.count) / (m - 1)) / m) : 0.0;
  return e;
}

std::vector<double> slice_points(const DensityOfStates& dos, double a, double b, int slices) {
  std::vector<double> x{a};
  const double total = std::max(estimate_count(dos, a, b).count, 0.0);
  for (int i = 1; i < slices; ++i) {
    const double want = total * i / slices;
    double lo = x.back(), hi = b;
    for (int step = 0; step < 60; ++step) {  // the count up to a point grows with it: bisection
      const double mid = 0.5 * (lo + hi);
      (estimate_count(dos, a, mid).count < want ? lo : hi) = mid;
    }
    x.push_back(0.5 * (lo + hi));
  }
  x.push_back(b);
  return x;
}

std::vector<std::vector<double>> density_curve(const DensityOfStates& dos, int points) {
  const int d = dos.degree();
  const std::vector<double> g = jackson_factors(d);
  std::vector<double> mean(static_cast<std::size_t>(d) + 1, 0.0);
  for (const auto& mu : dos.mu)
    for (int j = 0; j <= d; ++j) mean[j] += mu[j] / static_cast<double>(dos.mu.size());
  std::vector<std::vector<double>> out(2);
  for (int i = 0; i < points; ++i) {
    const double t = std::cos(kPi * (i + 0.5) / points);  // Chebyshev points: dense near the ends
    double s = g[0] * mean[0];
    for (int j = 1; j <= d; ++j) s += 2 * g[j] * mean[j] * std::cos(j * std::acos(t));
    out[0].push_back(dos.scale.from_unit(t));
    out[1].push_back(s / (kPi * std::sqrt(1 - t * t) * dos.scale.half_width));
  }
  std::reverse(out[0].begin(), out[0].end());
  std::reverse(out[1].begin(), out[1].end());
  return out;
}

#define BLOCKEIGS_KPM_DENSITY(T) \
  template DensityOfStates kpm_density(LinearOperator<T>&, const SpectrumScale&, int, int, std::uint64_t, MPI_Comm);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_KPM_DENSITY)
#undef BLOCKEIGS_KPM_DENSITY

}  // namespace blockeigs::solver
