// Small dense symmetric eigenproblems: Householder tridiagonalisation,
// implicit QL with recorded rotations, eigenvectors only where wanted (see
// symmetric_eigen.hpp for why not LAPACK's drivers).
#include "solver/symmetric_eigen.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace blockeigs::solver {
namespace {

// QL sweeps allowed per eigenvalue: Wilkinson's shift converges cubically,
// two or three sweeps is the norm (LAPACK's dsteqr allows 30 as well).
constexpr int max_sweeps = 30;

// sqrt(x^2 + y^2). QL's rotations form a chain of dependent scalar steps, so
// its time is their latency: std::hypot guards against overflow with a long
// library call (~40% of QL's time here); the plain formula is exact enough
// and only needs the guard when the squares could leave the exponent range.
double norm2(double x, double y) {
  const double m = std::max(std::abs(x), std::abs(y));
  if (m > 1e-150 && m < 1e150) return std::sqrt(x * x + y * y);
  return std::hypot(x, y);
}

// One plane rotation of QL, acting on rows i and i + 1 of a block.
struct Rotation {
  std::int64_t i;
  double c, s;
};

// Reduces the full symmetric n x n row-major `a` to tridiagonal form:
// diagonal d, subdiagonal e (e[n - 1] = 0). Reflector k (k < n - 2),
// I - tau[k] v v^T on indices k + 1 .. n - 1, is left in row k of `a` at
// those columns (tau[k] = 0: no reflection was needed).
void tridiagonalize(std::vector<double>& a, std::int64_t n, std::vector<double>& d, std::vector<double>& e,
                    std::vector<double>& tau) {
  std::vector<double> p(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k + 2 < n; ++k) {
    const std::int64_t s = n - k - 1;
    double* v = &a[k * n + k + 1];  // x, the column below the diagonal (row k by symmetry), becomes v
    d[k] = a[k * n + k];
    double scale = 0;
    for (std::int64_t i = 1; i < s; ++i) scale = std::max(scale, std::abs(v[i]));
    if (scale == 0) {  // already tridiagonal in this column
      tau[k] = 0;
      e[k] = v[0];
      continue;
    }
    scale = std::max(scale, std::abs(v[0]));
    double tail = 0;  // sum of (x_i / scale)^2 over i >= 1
    for (std::int64_t i = 1; i < s; ++i) tail += (v[i] / scale) * (v[i] / scale);
    const double x0 = v[0] / scale;
    const double norm = scale * std::sqrt(x0 * x0 + tail);
    const double alpha = v[0] >= 0 ? -norm : norm;  // H x = alpha e_1, sign chosen against cancellation
    // v = (x - alpha e_1) / (x_0 - alpha), so v_0 = 1 and tau = 2 / v^T v =
    // (alpha - x_0) / alpha: both free of the matrix's scale (no squares of
    // entries that could underflow or overflow).
    const double inverse = 1.0 / (v[0] - alpha);
    tau[k] = (alpha - v[0]) / alpha;
    v[0] = 1;
    for (std::int64_t i = 1; i < s; ++i) v[i] *= inverse;
    e[k] = alpha;
    // p = tau A22 v, by columns (A22 symmetric: column j is row j), so the
    // inner loops are contiguous and free of reductions.
    double* a22 = &a[(k + 1) * n + k + 1];
    std::fill(p.begin(), p.begin() + s, 0.0);
    for (std::int64_t j = 0; j < s; ++j) {
      const double vj = tau[k] * v[j];
      const double* row = a22 + j * n;
#pragma omp simd
      for (std::int64_t i = 0; i < s; ++i) p[i] += vj * row[i];
    }
    double pv = 0;
#pragma omp simd reduction(+ : pv)
    for (std::int64_t i = 0; i < s; ++i) pv += p[i] * v[i];
    const double half = 0.5 * tau[k] * pv;
    for (std::int64_t i = 0; i < s; ++i) w[i] = p[i] - half * v[i];
    // A22 -= v w^T + w v^T, both triangles (the next step reads rows).
    for (std::int64_t i = 0; i < s; ++i) {
      double* row = a22 + i * n;
      const double vi = v[i], wi = w[i];
#pragma omp simd
      for (std::int64_t j = 0; j < s; ++j) row[j] -= vi * w[j] + wi * v[j];
    }
  }
  if (n >= 2) {
    d[n - 2] = a[(n - 2) * n + n - 2];
    e[n - 2] = a[(n - 1) * n + n - 2];
  }
  d[n - 1] = a[(n - 1) * n + n - 1];
  e[n - 1] = 0;
}

// Implicit QL with Wilkinson shifts: d becomes the eigenvalues (unordered);
// the rotations that diagonalise T, in the order applied, are appended to
// `rotations` (T = Z diag(d) Z^T with Z = G_1 G_2 ... G_K, G_k acting on
// columns i, i + 1 as [c s; -s c]).
void implicit_ql(std::vector<double>& d, std::vector<double>& e, std::int64_t n, std::vector<Rotation>& rotations) {
  for (std::int64_t l = 0; l < n; ++l) {
    int sweeps = 0;
    for (;;) {
      // The first negligible subdiagonal at or after l ends the block that still couples l.
      std::int64_t m = l;
      for (; m + 1 < n; ++m) {
        const double dd = std::abs(d[m]) + std::abs(d[m + 1]);
        if (std::abs(e[m]) <= DBL_EPSILON * dd || std::abs(e[m]) < DBL_MIN) break;
      }
      if (m == l) break;
      if (++sweeps > max_sweeps)
        throw Error(detail::concat("small symmetric eigenproblem (", n, " x ", n,
                                   "): the QL iteration did not converge for eigenvalue ", l));
      // Shift: the eigenvalue of the leading 2 x 2 of the block nearer d[l].
      double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
      double r = norm2(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
      double s = 1, c = 1, p = 0;
      bool underflow = false;
      for (std::int64_t i = m - 1; i >= l; --i) {
        const double f = s * e[i], b = c * e[i];
        r = norm2(f, g);
        e[i + 1] = r;
        if (r == 0) {  // the bulge vanished: T split at i + 1; deflate and sweep again
          d[i + 1] -= p;
          e[m] = 0;
          underflow = true;
          break;
        }
        const double inverse = 1.0 / r;
        s = f * inverse;
        c = g * inverse;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2.0 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        rotations.push_back({i, c, s});
      }
      if (underflow) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
}

}  // namespace

SymmetricEigen symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  SymmetricEigen out;
  out.vectors = HostMatrix(n, count);
  if (n == 0) return out;
  // Full symmetric working copy from the lower triangle.
  std::vector<double> a(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const double v = M(i, j);
      if (!std::isfinite(v))
        throw Error(detail::concat("small symmetric eigenproblem (", n, " x ", n, "): entry (", i, ", ", j,
                                   ") is not finite"));
      a[i * n + j] = a[j * n + i] = v;
    }
  std::vector<double> d(static_cast<std::size_t>(n)), e(static_cast<std::size_t>(n)), tau(static_cast<std::size_t>(n));
  tridiagonalize(a, n, d, e, tau);
  std::vector<Rotation> rotations;
  rotations.reserve(static_cast<std::size_t>(3 * n * n));
  implicit_ql(d, e, n, rotations);

  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return d[x] < d[y]; });
  out.values.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.values[i] = d[order[i]];
  if (count == 0) return out;

  // Column c of Z is G_1 ... G_K e_j, j = order[first + c]: the rotations
  // applied to unit vectors last one first, on count columns only.
  HostMatrix& V = out.vectors;
  for (std::int64_t c = 0; c < count; ++c) V(order[first + c], c) = 1.0;
  for (auto it = rotations.rbegin(); it != rotations.rend(); ++it) {
    double* top = V.data() + it->i * count;
    double* bottom = top + count;
    const double c = it->c, s = it->s;
#pragma omp simd
    for (std::int64_t col = 0; col < count; ++col) {
      const double x = top[col], y = bottom[col];
      top[col] = c * x + s * y;
      bottom[col] = c * y - s * x;
    }
  }
  // M's eigenvectors are Q Z = H_0 H_1 ... H_{n-3} Z: the last reflector first.
  std::vector<double> wrow(static_cast<std::size_t>(count));
  for (std::int64_t k = n - 3; k >= 0; --k) {
    if (tau[k] == 0) continue;
    const double* v = &a[k * n + k + 1];
    const std::int64_t s = n - k - 1;
    std::fill(wrow.begin(), wrow.end(), 0.0);
    for (std::int64_t i = 0; i < s; ++i) {
      const double* row = V.data() + (k + 1 + i) * count;
      const double vi = v[i];
#pragma omp simd
      for (std::int64_t col = 0; col < count; ++col) wrow[col] += vi * row[col];
    }
    for (std::int64_t i = 0; i < s; ++i) {
      double* row = V.data() + (k + 1 + i) * count;
      const double f = tau[k] * v[i];
#pragma omp simd
      for (std::int64_t col = 0; col < count; ++col) row[col] -= f * wrow[col];
    }
  }
  return out;
}

}  // namespace blockeigs::solver
