#include "test_matrices.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numbers>
#include <random>
#include <stdexcept>

namespace blockeigs::test {

std::string data_dir() {
  if (const char* env = std::getenv("BLOCKEIGS_DATA_DIR"); env && *env)
    return std::filesystem::is_directory(env) ? std::string(env) : std::string();
  return std::filesystem::is_directory(BLOCKEIGS_DATA_DIR) ? std::string(BLOCKEIGS_DATA_DIR) : std::string();
}

std::vector<std::string> data_matrix_names() {
  std::vector<std::string> names;
  const std::string dir = data_dir();
  if (dir.empty()) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".mtx.gz";
    if (file.size() > suffix.size() && file.ends_with(suffix))
      names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<double> dense(const CsrRows& m) {
  std::vector<double> a(static_cast<std::size_t>(m.global_rows * m.global_cols), 0.0);
  for (std::int64_t r = 0; r < m.local_rows(); ++r)
    for (std::int64_t p = m.row_offsets[r]; p < m.row_offsets[r + 1]; ++p)
      a[(m.first_row + r) * m.global_cols + m.col_indices[p]] += m.values[p];
  return a;
}

std::vector<double> dense_symmetric_eigenvalues(std::vector<double> a, int n) {
  double total = 0.0;
  for (const double x : a) total += x * x;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) off += a[i * n + j] * a[i * n + j];
    if (off <= 1e-30 * total) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (apq == 0.0) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < n; ++k) {  // columns p, q
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {  // rows p, q
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
      }
  }
  std::vector<double> eigenvalues(n);
  for (int i = 0; i < n; ++i) eigenvalues[i] = a[i * n + i];
  std::sort(eigenvalues.begin(), eigenvalues.end());
  return eigenvalues;
}

std::vector<double> dense_generalized_eigenvalues(const std::vector<double>& a, const std::vector<double>& b, int n) {
  // B = L L^T, lower triangular L.
  std::vector<double> l(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j) {
    double d = b[j * n + j];
    for (int k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) throw std::runtime_error("dense_generalized_eigenvalues: B is not positive definite");
    l[j * n + j] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double v = b[i * n + j];
      for (int k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = v / l[j * n + j];
    }
  }
  // Y = L^-1 A (forward substitution, column by column), then C = L^-1 Y^T = L^-1 A L^-T.
  auto solve_lower = [&](std::vector<double> m) {
    for (int c = 0; c < n; ++c)
      for (int i = 0; i < n; ++i) {
        double v = m[i * n + c];
        for (int k = 0; k < i; ++k) v -= l[i * n + k] * m[k * n + c];
        m[i * n + c] = v / l[i * n + i];
      }
    return m;
  };
  std::vector<double> y = solve_lower(a);
  std::vector<double> yt(y.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) yt[j * n + i] = y[i * n + j];
  std::vector<double> c = solve_lower(yt);
  for (int i = 0; i < n; ++i)  // symmetric to rounding: make it exactly so
    for (int j = 0; j < i; ++j) c[i * n + j] = c[j * n + i] = 0.5 * (c[i * n + j] + c[j * n + i]);
  return dense_symmetric_eigenvalues(std::move(c), n);
}

template <class T>
spmm::HostCsr<T> to_host_csr(const CsrRows& rows) {
  spmm::HostCsr<T> out;
  out.rows = rows.local_rows();
  out.cols = rows.global_cols;
  out.row_offsets.assign(rows.row_offsets.begin(), rows.row_offsets.end());
  out.col_indices.assign(rows.col_indices.begin(), rows.col_indices.end());
  out.values.assign(rows.values.begin(), rows.values.end());
  return out;
}

template <class T>
dense::DenseBlock<T> random_block(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t ld) {
  dense::DenseBlock<T> block(Space::host, rows, cols, ld);
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < block.ld(); ++j) block.data()[i * block.ld() + j] = static_cast<T>(uniform(engine));
  return block;
}

solver::HostMatrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  solver::HostMatrix M(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) M(i, j) = solver::hash_uniform(seed, i, j);
  return M;
}

const dense::Context& host_context() {
  static const dense::Context context = dense::Context::host();
  return context;
}

double max_scaled_error(const dense::DenseBlock<double>& x, const dense::DenseBlock<double>& y,
                        const std::vector<double>& row_scale) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < x.rows(); ++i)
    for (std::int64_t j = 0; j < x.cols(); ++j) {
      const double a = x.data()[i * x.ld() + j], b = y.data()[i * y.ld() + j];
      if (std::isnan(a) != std::isnan(b)) return INFINITY;
      const double scale = std::max(row_scale[i], 1e-300);
      worst = std::max(worst, std::abs(a - b) / scale);
    }
  return worst;
}

template spmm::HostCsr<float> to_host_csr(const CsrRows&);
template spmm::HostCsr<double> to_host_csr(const CsrRows&);
template dense::DenseBlock<float> random_block(std::int64_t, std::int64_t, std::uint64_t, std::int64_t);
template dense::DenseBlock<double> random_block(std::int64_t, std::int64_t, std::uint64_t, std::int64_t);

Dense tridiagonal(std::int64_t n, double diag, double off) {
  Dense M(n, std::vector<double>(n, 0.0));
  for (std::int64_t i = 0; i < n; ++i) {
    M[i][i] = diag;
    if (i > 0) M[i][i - 1] = off;
    if (i + 1 < n) M[i][i + 1] = off;
  }
  return M;
}

Dense kron(const Dense& A, const Dense& B) {
  const std::size_t n = A.size(), m = B.size();
  Dense K(n * m, std::vector<double>(n * m, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (A[i][j] != 0)
        for (std::size_t k = 0; k < m; ++k)
          for (std::size_t l = 0; l < m; ++l) K[i * m + k][j * m + l] = A[i][j] * B[k][l];
  return K;
}

Dense plus(const Dense& A, const Dense& B) {
  Dense C = A;
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t j = 0; j < A.size(); ++j) C[i][j] += B[i][j];
  return C;
}

CsrRows random_local_rows(std::int64_t n, std::int64_t first, std::int64_t m, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  CsrRows rows;
  rows.global_rows = rows.global_cols = n;
  rows.first_row = first;
  rows.row_offsets = {0};
  for (std::int64_t i = 0; i < m; ++i) {
    std::map<std::int64_t, double> row;
    const int length = static_cast<int>(random() % 7);
    for (int e = 0; e < length; ++e) row[static_cast<std::int64_t>(random() % n)] = 1.0 + double(random() % 100);
    if (i % 3 == 0) row[first + i] = -5.0 - double(i);
    for (auto [c, v] : row) {
      rows.col_indices.push_back(c);
      rows.values.push_back(v);
    }
    rows.row_offsets.push_back(static_cast<std::int64_t>(rows.col_indices.size()));
  }
  return rows;
}

CsrRows to_csr(const Dense& M) {
  CsrRows c;
  const auto n = static_cast<std::int64_t>(M.size());
  c.global_rows = c.global_cols = n;
  c.row_offsets.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j)
      if (M[i][j] != 0) {
        c.col_indices.push_back(j);
        c.values.push_back(M[i][j]);
      }
    c.row_offsets.push_back(static_cast<std::int64_t>(c.col_indices.size()));
  }
  return c;
}

Pencil fem_p1(int dims, std::int64_t n) {
  const double h = 1.0 / double(n + 1);
  const Dense K1 = tridiagonal(n, 2 / h, -1 / h), M1 = tridiagonal(n, 4 * h / 6, h / 6);
  Dense K = K1, M = M1;
  for (int d = 1; d < dims; ++d) {
    K = plus(kron(K, M1), kron(M, K1));
    M = kron(M, M1);
  }
  std::vector<double> one;
  for (std::int64_t j = 1; j <= n; ++j) {
    const double c = std::cos(double(j) * std::numbers::pi * h);
    one.push_back(6 / (h * h) * (1 - c) / (2 + c));
  }
  std::vector<double> exact = one;
  for (int d = 1; d < dims; ++d) {
    std::vector<double> next;
    for (double a : exact)
      for (double b : one) next.push_back(a + b);
    exact = next;
  }
  std::sort(exact.begin(), exact.end());
  return {to_csr(K), to_csr(M), exact};
}

}  // namespace blockeigs::test
