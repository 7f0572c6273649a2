// Small dense symmetric eigenproblems: Householder tridiagonalisation,
// implicit QL with recorded rotations, eigenvectors only where wanted (see
// symmetric_eigen.hpp for why not LAPACK's drivers).
#include "solver/blocks/symmetric_eigen.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace blockeigs::solver {
namespace {

using small_dense::by_column_blocks;

// QL sweeps allowed per eigenvalue: Wilkinson's shift converges cubically,
// two or three sweeps is the norm (LAPACK's dsteqr allows 30 as well).
constexpr int max_sweeps = 30;

// sqrt(x^2 + y^2), guarded against overflow and underflow of the squares
// only where they could leave the exponent range (std::hypot is a long
// library call).
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

// The Householder reflector of row k right of the diagonal, x (the column
// below the diagonal, by symmetry): x becomes v in place, I - tau v v^T
// maps x to (e[k], 0, ..., 0), and d[k] is the diagonal entry. tau = 0 (and
// x left as it is) where x is already (e[k], 0, ..., 0).
BLOCKEIGS_SMALL_DENSE_INLINE inline void reflect(double* a, std::int64_t n, std::int64_t k, double* d, double* e,
                                                 double* tau) {
  const std::int64_t s = n - k - 1;
  double* v = a + k * n + k + 1;
  d[k] = a[k * n + k];
  double scale = 0;
#pragma omp simd reduction(max : scale)
  for (std::int64_t i = 1; i < s; ++i) scale = std::max(scale, std::abs(v[i]));
  if (scale == 0) {
    tau[k] = 0;
    e[k] = v[0];
    return;
  }
  scale = std::max(scale, std::abs(v[0]));
  // ||x|| with x scaled to entries of at most 1 (no squares that could
  // underflow or overflow); by a reciprocal unless that would overflow.
  const double unit = scale >= DBL_MIN ? 1.0 / scale : 0.0;
  double sum = 0;
  if (unit > 0) {
#pragma omp simd reduction(+ : sum)
    for (std::int64_t i = 0; i < s; ++i) sum += (v[i] * unit) * (v[i] * unit);
  } else {
    for (std::int64_t i = 0; i < s; ++i) sum += (v[i] / scale) * (v[i] / scale);
  }
  const double norm = scale * std::sqrt(sum);
  const double alpha = v[0] >= 0 ? -norm : norm;  // sign chosen against cancellation
  // v = (x - alpha e_1) / (x_0 - alpha), so v_0 = 1 and tau = 2 / v^T v =
  // (alpha - x_0) / alpha: both free of the matrix's scale (no squares of
  // entries that could underflow or overflow).
  const double inverse = 1.0 / (v[0] - alpha);
  tau[k] = (alpha - v[0]) / alpha;
  v[0] = 1;
  for (std::int64_t i = 1; i < s; ++i) v[i] *= inverse;
  e[k] = alpha;
}

// Rows `first` .. n - 1 of `a`, on `width` columns from `col`: each row i
// less v_i w + w_i v (the rank-2 update; v, w indexed from `first`), then
// p[col ..] = scale * (sum over the updated rows of next_v_i times the row)
// (next_v indexed from `first`): the next step's matrix-vector product in
// the same pass, by columns, with its sums in registers.
template <int width>
BLOCKEIGS_SMALL_DENSE_INLINE inline void update_and_multiply(double* a, std::int64_t n, std::int64_t first,
                                                             std::int64_t col, const double* v, const double* w,
                                                             const double* next_v, double scale, double* p) {
  double w_col[width], v_col[width], sum[width];
  for (int u = 0; u < width; ++u) {
    w_col[u] = w[col - first + u];
    v_col[u] = v[col - first + u];
    sum[u] = 0;
  }
  for (std::int64_t i = first; i < n; ++i) {
    double* row = a + i * n + col;
    const double vi = v[i - first], wi = w[i - first], next_vi = next_v[i - first];
#pragma omp simd
    for (int u = 0; u < width; ++u) {
      const double r = row[u] - vi * w_col[u] - wi * v_col[u];
      row[u] = r;
      sum[u] += next_vi * r;
    }
  }
  for (int u = 0; u < width; ++u) p[u] = scale * sum[u];
}

// Reduces the full symmetric n x n row-major `a` to tridiagonal form:
// diagonal d, subdiagonal e (e[n - 1] = 0). Reflector k (k < n - 2),
// I - tau[k] v v^T on indices k + 1 .. n - 1, is left in row k of `a` at
// those columns (tau[k] = 0: no reflection was needed). `scratch`: 3 n
// doubles.
//
// Step k updates the trailing matrix by v w^T + w v^T after reflector k,
// and the next reflector needs its product with the trailing matrix: after
// the first row of the update (the next reflector's x), both go in one pass
// over the rest, by blocks of columns held in registers.
BLOCKEIGS_SMALL_DENSE_CLONES
void tridiagonalize(double* a, std::int64_t n, double* d, double* e, double* tau, double* scratch) {
  double* p = scratch;  // tau[k] times the trailing matrix times v
  double* w = scratch + n;
  double* zero = scratch + 2 * n;
  std::fill(zero, zero + n, 0.0);
  // The pass over rows and columns [first, n): update by (v, w), product with next_v into p.
  auto pass = [&](std::int64_t first, const double* v, const double* wv, const double* next_v, double scale)
                  BLOCKEIGS_SMALL_DENSE_INLINE {
                    std::int64_t col = first;
                    for (; col + 16 <= n; col += 16)
                      update_and_multiply<16>(a, n, first, col, v, wv, next_v, scale, p + col - first);
                    for (; col + 4 <= n; col += 4)
                      update_and_multiply<4>(a, n, first, col, v, wv, next_v, scale, p + col - first);
                    for (; col < n; ++col)
                      update_and_multiply<1>(a, n, first, col, v, wv, next_v, scale, p + col - first);
                  };
  if (n >= 3) {
    reflect(a, n, 0, d, e, tau);
    pass(1, zero, zero, a + 1, tau[0]);
  }
  for (std::int64_t k = 0; k + 2 < n; ++k) {
    const std::int64_t s = n - k - 1;
    const double* v = a + k * n + k + 1;
    double pv = 0;
#pragma omp simd reduction(+ : pv)
    for (std::int64_t i = 0; i < s; ++i) pv += p[i] * v[i];
    const double half = 0.5 * tau[k] * pv;
    for (std::int64_t i = 0; i < s; ++i) w[i] = p[i] - half * v[i];
    // The first trailing row, then the next reflector from it.
    double* row = a + (k + 1) * n + k + 1;
    for (std::int64_t j = 0; j < s; ++j) row[j] -= v[0] * w[j] + w[0] * v[j];
    if (k + 3 < n) {
      reflect(a, n, k + 1, d, e, tau);
      pass(k + 2, v + 1, w + 1, a + (k + 1) * n + k + 2, tau[k + 1]);
    } else {
      a[(n - 1) * n + n - 1] -= 2 * v[1] * w[1];  // the last trailing row's one entry still needed
    }
  }
  if (n >= 2) {
    d[n - 2] = a[(n - 2) * n + n - 2];
    e[n - 2] = a[(n - 2) * n + n - 1];
  }
  d[n - 1] = a[(n - 1) * n + n - 1];
  e[n - 1] = 0;
}

// Below this, x = f^2 + g^2 in a QL step is left to the textbook step (see
// ql_sweep): T's entries are scaled to at most 1, so 1 / x <= 2^600 keeps
// the absolute error of any underflowed product (2^-1074) far below eps.
constexpr double smallest_fast_bulge = 0x1p-600;

// One implicit QL sweep over the unreduced block [l, m] of T, chasing the
// bulge from row m up to row l; g = d[m] - shift. Its rotations are
// appended to `rotations`.
//
// The textbook step normalises (f, g) by r = sqrt(f^2 + g^2) and carries
// c = g / r, s = f / r into the next step, so each step waits for a square
// root and then a division: a chain of ~60 cycles, ~2900 times for a 53 x 53
// problem. Written with x = r^2, what the next step needs is products with
// 1 / x; r (for e and the recorded c, s) comes from a square root that runs
// beside the division instead of before it, about halving a step's chain
// (docs/benchmarks/solvers.md#host-window).
// Where x is tiny (a block that is tiny throughout, below T's scale by
// 2^-300), the textbook step with hypot's guard takes over from where the
// sweep stands.
void ql_sweep(double* d, double* e, std::int64_t l, std::int64_t m, double g, std::vector<Rotation>& rotations) {
  // Each step starts from f = s e_i, b = c e_i (c and s of the step before;
  // 1 before the first), g, and p.
  double f = e[m - 1], b = f, p = 0;
  double ff = f * f;
  std::int64_t i = m - 1;
  for (; i >= l; --i) {
    const double x = g * g + ff;
    if (!(x >= smallest_fast_bulge)) break;
    const double x_inverse = 1.0 / x, r = std::sqrt(x), r_inverse = r * x_inverse;
    e[i + 1] = r;
    const double h = d[i + 1] - p;
    const double t_r = (d[i] - h) * f + 2.0 * g * b;  // r t, t = (d_i - h) s + 2 c b as in the textbook step
    p = f * t_r * x_inverse;                          // s t
    d[i + 1] = h + p;
    rotations.push_back({i, g * r_inverse, f * r_inverse});
    const double next = i > l ? e[i - 1] : 0.0;
    const double g_next = g * t_r * x_inverse - b;  // c t - b
    const double f_next = f * next;                 // r times the next f
    ff = f_next * x_inverse * f_next;               // the next f squared, without waiting for r
    f = f_next * r_inverse;
    b = g * next * r_inverse;
    g = g_next;
  }
  for (; i >= l; --i) {  // the textbook step
    const double r = norm2(f, g);
    e[i + 1] = r;
    if (r == 0) {  // the bulge vanished: T split at i + 1; the caller sweeps again
      d[i + 1] -= p;
      e[m] = 0;
      return;
    }
    const double inverse = 1.0 / r;
    const double s = f * inverse, c = g * inverse;
    const double h = d[i + 1] - p;
    const double t = (d[i] - h) * s + 2.0 * c * b;
    p = s * t;
    d[i + 1] = h + p;
    rotations.push_back({i, c, s});
    const double next = i > l ? e[i - 1] : 0.0;
    g = c * t - b;
    f = s * next;
    b = c * next;
  }
  d[l] -= p;
  e[l] = g;
  e[m] = 0;
}

// Implicit QL with Wilkinson shifts: d becomes the eigenvalues (unordered);
// the rotations that diagonalise T, in the order applied, are appended to
// `rotations` (T = Z diag(d) Z^T with Z = G_1 G_2 ... G_K, G_k acting on
// columns i, i + 1 as [c s; -s c]). e is overwritten.
void implicit_ql(double* d, double* e, std::int64_t n, std::vector<Rotation>& rotations) {
  // T scaled by a power of two (exact) to entries of at most 1, which the
  // sweeps' range argument needs.
  double largest = 0;
  for (std::int64_t i = 0; i < n; ++i) largest = std::max({largest, std::abs(d[i]), std::abs(e[i])});
  if (largest == 0) return;
  int exponent = 0;
  std::frexp(largest, &exponent);
  for (std::int64_t i = 0; i < n; ++i) {
    d[i] = std::ldexp(d[i], -exponent);
    e[i] = std::ldexp(e[i], -exponent);
  }
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
      const double r = norm2(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
      ql_sweep(d, e, l, m, g, rotations);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) d[i] = std::ldexp(d[i], exponent);
}

// V := G V for a run of rotations G on consecutive rows upwards: run[0]
// on rows i, i + 1, then run[-1] on rows i + 1, i + 2, ... (a QL sweep,
// read backwards), on `width` columns of V from `col`. Row i + 1, which the
// next rotation reads, is carried in registers rather than stored and
// loaded again, so that one rotation waits for the last only by one
// multiply-add.
template <int width>
BLOCKEIGS_SMALL_DENSE_INLINE inline void rotate_run(const Rotation* run, std::int64_t length, double* V,
                                                    std::int64_t ld, std::int64_t col) {
  double carry[width];
  double* row = V + run[0].i * ld + col;
  for (int u = 0; u < width; ++u) carry[u] = row[u];
  for (std::int64_t k = 0; k < length; ++k) {
    const double c = run[-k].c, s = run[-k].s;
    double* below = row + ld;
#pragma omp simd
    for (int u = 0; u < width; ++u) {
      // s x first: GCC then fuses it, not c y, into the carried value's
      // multiply-add, and keeps c y off the chain.
      const double x = carry[u], y = below[u], sx = s * x;
      row[u] = c * x + s * y;
      carry[u] = c * y - sx;
    }
    row = below;
  }
  for (int u = 0; u < width; ++u) row[u] = carry[u];
}

// V := G_1 ... G_K V (V has `cols` columns) for the rotations in QL order:
// the last one first.
BLOCKEIGS_SMALL_DENSE_CLONES
void apply_rotations(const std::vector<Rotation>& rotations, double* V, std::int64_t cols) {
  const Rotation* rot = rotations.data();
  for (std::int64_t last = static_cast<std::int64_t>(rotations.size()) - 1; last >= 0;) {
    std::int64_t length = 1;
    while (length <= last && rot[last - length].i == rot[last - length + 1].i + 1) ++length;
    const Rotation* run = rot + last;
    by_column_blocks(cols, [&]<int width>(std::int64_t col)
                               BLOCKEIGS_SMALL_DENSE_INLINE { rotate_run<width>(run, length, V, cols, col); });
    last -= length;
  }
}

// V := H_k V on `width` columns of V from `col`, H_k = I - tau v v^T on
// rows k + 1 .. n - 1: v^T V first, summed in registers, then the update.
template <int width>
BLOCKEIGS_SMALL_DENSE_INLINE inline void reflect_block(const double* v, double tau, std::int64_t rows, double* V,
                                                       std::int64_t ld) {
  double sum[width];
  for (int u = 0; u < width; ++u) sum[u] = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* row = V + i * ld;
    const double vi = v[i];
#pragma omp simd
    for (int u = 0; u < width; ++u) sum[u] += vi * row[u];
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    double* row = V + i * ld;
    const double f = tau * v[i];
#pragma omp simd
    for (int u = 0; u < width; ++u) row[u] -= f * sum[u];
  }
}

// V := H_0 H_1 ... H_{n-3} V (n x cols) for tridiagonalize's reflectors: the
// last one first.
BLOCKEIGS_SMALL_DENSE_CLONES
void apply_reflectors(const double* a, const double* tau, std::int64_t n, double* V, std::int64_t cols) {
  for (std::int64_t k = n - 3; k >= 0; --k) {
    if (tau[k] == 0) continue;
    by_column_blocks(cols, [&]<int width>(std::int64_t col) BLOCKEIGS_SMALL_DENSE_INLINE {
      reflect_block<width>(a + k * n + k + 1, tau[k], n - k - 1, V + (k + 1) * cols + col, cols);
    });
  }
}

}  // namespace

void full_symmetric_copy(const HostMatrix& M, double* out) {
  const std::int64_t n = M.rows();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const double v = M(i, j);
      if (!std::isfinite(v))
        throw Error(
            detail::concat("small symmetric eigenproblem (", n, " x ", n, "): entry (", i, ", ", j, ") is not finite"));
      out[i * n + j] = out[j * n + i] = v;
    }
}

void full_hermitian_copy(const ComplexHostMatrix& M, std::complex<double>* out) {
  const std::int64_t n = M.rows();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const std::complex<double> v = i == j ? std::complex<double>(M(i, i).real()) : M(i, j);
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
        throw Error(
            detail::concat("small Hermitian eigenproblem (", n, " x ", n, "): entry (", i, ", ", j, ") is not finite"));
      out[j * n + i] = v;             // (i, j), column-major
      out[i * n + j] = std::conj(v);  // (j, i)
    }
}

SymmetricEigen symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  SymmetricEigen out;
  out.vectors = HostMatrix(n, count);
  if (n == 0) return out;
  std::vector<double> a(static_cast<std::size_t>(n * n));
  full_symmetric_copy(M, a.data());
  std::vector<double> d(static_cast<std::size_t>(n)), e(static_cast<std::size_t>(n)), tau(static_cast<std::size_t>(n)),
      scratch(static_cast<std::size_t>(3 * n));
  tridiagonalize(a.data(), n, d.data(), e.data(), tau.data(), scratch.data());
  std::vector<Rotation> rotations;
  rotations.reserve(static_cast<std::size_t>(2 * n * n));  // ~0.8 n^2 at LOBPCG's problems
  implicit_ql(d.data(), e.data(), n, rotations);

  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return d[x] < d[y]; });
  out.values.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.values[i] = d[order[i]];
  if (count == 0) return out;

  // Column c of Z is G_1 ... G_K e_j, j = order[first + c]: the rotations
  // applied to unit vectors, on count columns only; M's eigenvectors are
  // then Q Z.
  HostMatrix& V = out.vectors;
  for (std::int64_t c = 0; c < count; ++c) V(order[first + c], c) = 1.0;
  apply_rotations(rotations, V.data(), count);
  apply_reflectors(a.data(), tau.data(), n, V.data(), count);
  return out;
}

}  // namespace blockeigs::solver
