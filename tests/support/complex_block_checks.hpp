// The block operations on complex blocks (complex double and single) against
// plain complex-double loops, in the memory space of a context: Gram
// products X^H Y and their Hermitian X^H X, norms, residuals, updates with
// complex coefficients, column moves and the random fill. Each rank checks
// its own rows of a block the hash defines whole, so that the reductions are
// checked over any row partition (an empty rank included). And the small
// Hermitian solvers' contracts (eigenpairs, the Cholesky inverse), shared by
// the host tests and the device ones.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dense/memory.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/symmetric_eigen.hpp"
#include "solver/operator/row_partition.hpp"
#include "tests/support/distributed_fixtures.hpp"

namespace blockeigs::test {

using Complex = std::complex<double>;

// A block of T in `space` with room for `pad` more columns (ld = cols + pad).
template <class T>
struct ComplexBlock {
  std::int64_t rows, cols, ld;
  dense::Buffer<T> data;
  ComplexBlock(Space space, std::int64_t r, std::int64_t c, std::int64_t pad = 0)
      : rows(r), cols(c), ld(c + pad), data(space, static_cast<std::size_t>(r * (c + pad))) {}
  dense::DenseView<T> view() { return {data.space(), rows, cols, ld, data.data()}; }
  dense::ConstDenseView<T> cview() const { return {data.space(), rows, cols, ld, data.data()}; }
};

// Every rank's rows of X (this rank's, rows x cols), in rank order, whole on every rank as complex doubles.
template <class T>
std::vector<Complex> gathered_rows(dense::ConstDenseView<T> X) {
  std::vector<T> local(static_cast<std::size_t>(X.rows * X.cols));
  for (std::int64_t i = 0; i < X.rows; ++i)
    dense::copy_bytes(local.data() + i * X.cols, Space::host, X.data + i * X.ld, X.space, sizeof(T) * X.cols);
  std::vector<double> mine;
  for (const T& v : local) {
    mine.push_back(double(v.real()));
    mine.push_back(double(v.imag()));
  }
  const int size = mpi_size();
  std::vector<int> counts(size), offsets(size);
  const int count = static_cast<int>(mine.size());
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  std::vector<Complex> out(all.size() / 2);
  for (std::size_t e = 0; e < out.size(); ++e) out[e] = Complex(all[2 * e], all[2 * e + 1]);
  return out;
}

// The block's entries on the host, as complex doubles (rows x cols, dense).
template <class T>
std::vector<Complex> entries(const ComplexBlock<T>& B) {
  std::vector<T> raw(static_cast<std::size_t>(B.rows * B.ld));
  dense::copy_bytes(raw.data(), Space::host, B.data.data(), B.data.space(), raw.size() * sizeof(T));
  std::vector<Complex> out(static_cast<std::size_t>(B.rows * B.cols));
  for (std::int64_t i = 0; i < B.rows; ++i)
    for (std::int64_t j = 0; j < B.cols; ++j) out[i * B.cols + j] = Complex(raw[i * B.ld + j]);
  return out;
}

template <class T>
void put(ComplexBlock<T>& B, const std::vector<Complex>& values) {
  std::vector<T> raw(static_cast<std::size_t>(B.rows * B.ld), T(std::numeric_limits<real_t<T>>::quiet_NaN()));
  for (std::int64_t i = 0; i < B.rows; ++i)
    for (std::int64_t j = 0; j < B.cols; ++j) raw[i * B.ld + j] = static_cast<T>(values[i * B.cols + j]);
  dense::copy_bytes(B.data.data(), B.data.space(), raw.data(), Space::host, raw.size() * sizeof(T));
}

// Entries within tol (1 + |reference|) of the reference (complex double), naming the first that is not.
inline void expect_entries(const std::vector<Complex>& got, const std::vector<Complex>& want, double tol,
                           const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t e = 0; e < got.size(); ++e)
    ASSERT_LE(std::abs(got[e] - want[e]), tol * (1 + std::abs(want[e])))
        << what << ", entry " << e << ": " << got[e] << " vs " << want[e];
}

// The hash's block (rows [first, first + rows) of the global block).
template <class T>
std::vector<Complex> hashed(std::uint64_t seed, std::int64_t first, std::int64_t rows, std::int64_t cols) {
  std::vector<Complex> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out[i * cols + j] = Complex(solver::random_entry<T>(seed, first + i, j));
  return out;
}

// S (rows x cols) of complex coefficients, the same on every rank.
inline solver::ComplexHostMatrix coefficients(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  solver::ComplexHostMatrix S(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) S(i, j) = solver::random_entry<Complex>(seed, i, j);
  return S;
}

// Y = X S on the host in complex double.
inline std::vector<Complex> times(const std::vector<Complex>& X, std::int64_t rows,
                                  const solver::ComplexHostMatrix& S) {
  std::vector<Complex> Y(static_cast<std::size_t>(rows * S.cols()));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < S.cols(); ++j)
      for (std::int64_t a = 0; a < S.rows(); ++a) Y[i * S.cols() + j] += X[i * S.rows() + a] * S(a, j);
  return Y;
}

// The reductions over the ranks of `partition`: X^H Y, X^H X, the pair
// X^H [Y1 Y2] with X in two views, column norms and LOBPCG's residuals;
// X of k1 columns (at least 3), Y of k2 (the norms and residuals where k2 is 3).
template <class T>
void check_complex_reductions(const dense::Context& context, const solver::RowPartition& partition, std::int64_t k1 = 5,
                              std::int64_t k2 = 3) {
  const int rank = mpi_rank(MPI_COMM_WORLD);
  const std::int64_t N = partition.global_rows(), n = partition.rows(rank), first = partition.begin(rank);
  const double u = std::numeric_limits<real_t<T>>::epsilon(), tol = 4 * (N + 2) * u * N * 2;
  const Space space = context.space();
  ComplexBlock<T> X(space, n, k1, 1), Y(space, n, k2, 2);
  solver::fill_random<T>(context, X.view(), 21, first);
  solver::fill_random<T>(context, Y.view(), 22, first);
  const std::vector<Complex> x = entries(X), y = entries(Y);
  EXPECT_EQ(x, hashed<T>(21, first, n, k1)) << "fill_random differs from the hash";
  const std::vector<Complex> xw = hashed<T>(21, 0, N, k1), yw = hashed<T>(22, 0, N, k2);

  const solver::ComplexHostMatrix G = solver::gram<T>(context, MPI_COMM_WORLD, X.cview(), Y.cview());
  const solver::ComplexHostMatrix H = solver::gram<T>(context, MPI_COMM_WORLD, X.cview());
  // X^H [Y X(:, 1:3)] with X in two views.
  auto pair = solver::start_gram_pair<T>(
      context, MPI_COMM_WORLD,
      solver::SplitColumns<T>(solver::column_range(X.cview(), 0, 2), solver::column_range(X.cview(), 2, k1 - 2)),
      Y.cview(), solver::column_range(X.cview(), 1, 2));
  const solver::ComplexHostMatrix P = pair.finish();
  for (std::int64_t a = 0; a < k1; ++a) {
    for (std::int64_t b = 0; b < k2; ++b) {
      Complex want = 0;
      for (std::int64_t i = 0; i < N; ++i) want += std::conj(xw[i * k1 + a]) * yw[i * k2 + b];
      EXPECT_LE(std::abs(G(a, b) - want), tol) << "X^H Y (" << a << ", " << b << ")";
      EXPECT_LE(std::abs(P(a, b) - want), tol) << "X^H [Y1 Y2] (" << a << ", " << b << ")";
    }
    for (std::int64_t b = 0; b < k1; ++b) {
      Complex want = 0;
      for (std::int64_t i = 0; i < N; ++i) want += std::conj(xw[i * k1 + a]) * xw[i * k1 + b];
      EXPECT_LE(std::abs(H(a, b) - want), tol) << "X^H X (" << a << ", " << b << ")";
      EXPECT_EQ(H(a, b), std::conj(H(b, a))) << "X^H X not exactly Hermitian";
      if (b >= 1 && b < 3) {
        EXPECT_LE(std::abs(P(a, k2 + b - 1) - want), tol) << "X^H X(:, 1:3) (" << a << ", " << b << ")";
      }
    }
  }

  if (k2 != 3 || k1 < 3) return;  // the norms and residuals below are written for three columns of Y
  const std::vector<double> norms = solver::column_norms<T>(context, MPI_COMM_WORLD, Y.cview());
  const std::vector<double> lambda{0.5, -1.25, 2.0};
  ComplexBlock<T> R(space, n, k2);
  // R = A Y - Y diag(lambda) with A Y := X's first columns, R's columns permuted.
  const auto res = solver::eigen_residuals<T>(context, MPI_COMM_WORLD, Y.cview(),
                                              solver::column_range(X.cview(), 0, k2), lambda, R.view(), {2, 0, 1});
  const std::vector<Complex> r = entries(R);
  for (std::int64_t j = 0; j < k2; ++j) {
    double sq = 0, rsq = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      sq += std::norm(yw[i * k2 + j]);
      rsq += std::norm(xw[i * k1 + j] - lambda[j] * yw[i * k2 + j]);
    }
    EXPECT_NEAR(norms[j], std::sqrt(sq), tol);
    EXPECT_NEAR(res.x[j], std::sqrt(sq), tol);
    EXPECT_NEAR(res.residual[j], std::sqrt(rsq), tol);
    const std::int64_t at = std::vector<std::int64_t>{2, 0, 1}[j];
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::abs(r[i * k2 + at] - (x[i * k1 + j] - lambda[j] * y[i * k2 + j])), 8 * u) << "R row " << i;
  }
}

// The local operations on this rank's rows: updates with complex
// coefficients, axpby, real column factors, column moves, the diagonal.
template <class T>
void check_complex_updates(const dense::Context& context, std::int64_t n, std::int64_t k1, std::int64_t k2) {
  SCOPED_TRACE(testing::Message() << n << " rows, " << k1 << " x " << k2);
  const double u = std::numeric_limits<real_t<T>>::epsilon(), tol = 16 * (k1 + 4) * u * (k1 + 4);
  const Space space = context.space();
  ComplexBlock<T> X(space, n, k1, 1), Z(space, n, k2, 3);
  put(X, hashed<T>(31, 0, n, k1));
  put(Z, hashed<T>(32, 0, n, k2));
  const std::vector<Complex> x = entries(X), z = entries(Z);
  const solver::ComplexHostMatrix S = coefficients(k1, k2, 33);
  const std::vector<Complex> xs = times(x, n, S);
  const T alpha = static_cast<T>(Complex(1.5, -0.5)), beta = static_cast<T>(Complex(-0.25, 0.75));
  const Complex a(alpha), b(beta);
  auto combined = [&](Complex beta_) {
    std::vector<Complex> w(xs.size());
    for (std::size_t e = 0; e < w.size(); ++e) w[e] = a * xs[e] + beta_ * z[e];
    return w;
  };

  ComplexBlock<T> Y(space, n, k2, 2);
  put(Y, std::vector<Complex>(static_cast<std::size_t>(n * k2), Complex(NAN, NAN)));
  solver::block_update<T>(context, alpha, X.cview(), S, T(0), Y.view());  // beta 0: NaN not read
  expect_entries(entries(Y), combined(0), tol, "block_update, beta 0");
  put(Y, z);
  solver::block_update<T>(context, alpha, X.cview(), S, beta, Y.view());
  expect_entries(entries(Y), combined(b), tol, "block_update");
  solver::block_combine<T>(context, alpha, X.cview(), S, beta, Z.cview(), Y.view());
  expect_entries(entries(Y), combined(b), tol, "block_combine");
  // A real beta: on the device, the real narrow kernels over the values' parts where the doubled widths fit.
  const Complex real_b(-0.25, 0);
  put(Y, z);
  solver::block_update<T>(context, alpha, X.cview(), S, static_cast<T>(real_b), Y.view());
  expect_entries(entries(Y), combined(real_b), tol, "block_update, real beta");
  put(Y, std::vector<Complex>(static_cast<std::size_t>(n * k2), Complex(NAN, NAN)));
  solver::block_combine<T>(context, alpha, X.cview(), S, static_cast<T>(real_b), Z.cview(), Y.view());
  expect_entries(entries(Y), combined(real_b), tol, "block_combine, real beta");

  // [X1 X2] S with X1, X2 column ranges of X; X W in place.
  const std::int64_t h = k1 / 2;
  ComplexBlock<T> scratch(space, n, std::max(k1, k2));
  solver::block_combine_pair<T>(context, solver::column_range(X.cview(), 0, h), S.block(0, h, 0, k2),
                                solver::column_range(X.cview(), h, k1 - h), S.block(h, k1 - h, 0, k2), Y.view(),
                                scratch.view());
  expect_entries(entries(Y), xs, tol, "block_combine_pair");
  ComplexBlock<T> W(space, n, k1, 1);
  put(W, x);
  const solver::ComplexHostMatrix Q = coefficients(k1, std::min(k1, k2), 34);
  solver::transform_in_place<T>(context, W.view(), Q, scratch.view());
  const std::vector<Complex> xq = times(x, n, Q), w = entries(W);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < Q.cols(); ++j)
      ASSERT_LE(std::abs(w[i * k1 + j] - xq[i * Q.cols() + j]), tol) << "transform_in_place";

  // Element-wise: axpby, column_axpby (real factors), scale_columns, apply_diagonal.
  ComplexBlock<T> V(space, n, k1);
  put(V, hashed<T>(35, 0, n, k1));
  const std::vector<Complex> v = entries(V);
  solver::axpby<T>(context, alpha, X.cview(), beta, V.view());
  std::vector<Complex> want(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) want[e] = a * x[e] + b * v[e];
  expect_entries(entries(V), want, 8 * u, "axpby");
  std::vector<double> factors(static_cast<std::size_t>(k1));
  for (std::int64_t j = 0; j < k1; ++j) factors[j] = 0.5 - 0.25 * double(j);
  solver::column_axpby<T>(context, factors, X.cview(), T(0), V.view());
  for (std::size_t e = 0; e < x.size(); ++e) want[e] = factors[e % k1] * x[e];
  expect_entries(entries(V), want, 8 * u, "column_axpby");
  solver::scale_columns<T>(context, factors, V.view());
  for (std::size_t e = 0; e < x.size(); ++e) want[e] *= factors[e % k1];
  expect_entries(entries(V), want, 8 * u, "scale_columns");
  dense::Buffer<T> d(space, static_cast<std::size_t>(n));
  std::vector<T> dh(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) dh[i] = static_cast<T>(Complex(1.0 + 0.01 * double(i), -0.5));
  dense::copy_bytes(d.data(), space, dh.data(), Space::host, dh.size() * sizeof(T));
  solver::apply_diagonal<T>(context, d.data(), X.cview(), V.view());
  for (std::size_t e = 0; e < x.size(); ++e) want[e] = Complex(dh[e / k1]) * x[e];
  expect_entries(entries(V), want, 8 * u, "apply_diagonal");

  // Moves are exact: copy, select, keep, permute.
  solver::copy_block<T>(context, X.cview(), V.view());
  EXPECT_EQ(entries(V), x) << "copy_block";
  std::vector<std::int64_t> order(static_cast<std::size_t>(k1));
  for (std::int64_t j = 0; j < k1; ++j) order[j] = (j * 3 + 1) % k1;
  if (k1 % 3 != 0) {  // a permutation
    solver::permute_columns<T>(context, V.view(), order);
    const std::vector<Complex> p = entries(V);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < k1; ++j) ASSERT_EQ(p[i * k1 + j], x[i * k1 + order[j]]) << "permute_columns";
  }
  if (k1 < 2) return;
  solver::copy_block<T>(context, X.cview(), V.view());
  const std::vector<std::int64_t> kept{0, k1 - 1};
  solver::keep_columns<T>(context, V.view(), kept);
  const std::vector<Complex> k = entries(V);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < 2; ++j) ASSERT_EQ(k[i * k1 + j], x[i * k1 + kept[j]]) << "keep_columns";
}

// B^H B / n + shift I for a random B with entries in the unit square: Hermitian, positive definite for shift > 0.
inline solver::ComplexHostMatrix random_hermitian(std::int64_t n, std::uint64_t seed, double shift) {
  solver::ComplexHostMatrix B(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) B(i, j) = solver::random_entry<std::complex<double>>(seed, i, j);
  solver::ComplexHostMatrix M = solver::transpose_times(B, B);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) M(i, j) /= double(n);
    M(i, i) = M(i, i).real() + shift;
  }
  return M;
}

// M V(:, c) = values[first + c] V(:, c), V^H V = I, values ascending.
inline void expect_hermitian_eigenpairs(const solver::ComplexHostMatrix& M, const solver::HermitianEigen& e,
                                        std::int64_t first) {
  const std::int64_t n = M.rows(), count = e.vectors.cols();
  ASSERT_EQ(static_cast<std::int64_t>(e.values.size()), n);
  ASSERT_TRUE(std::is_sorted(e.values.begin(), e.values.end()));
  double norm = 0;
  for (const auto& v : M.values()) norm = std::max(norm, std::abs(v));
  const double tol = 64 * double(n) * std::numeric_limits<double>::epsilon() * (norm * double(n) + 1);
  const solver::ComplexHostMatrix MV = solver::multiply(M, e.vectors);
  const solver::ComplexHostMatrix VV = solver::transpose_times(e.vectors, e.vectors);
  for (std::int64_t c = 0; c < count; ++c) {
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::abs(MV(i, c) - e.values[first + c] * e.vectors(i, c)), tol) << "pair " << first + c;
    for (std::int64_t d = 0; d < count; ++d)
      ASSERT_LE(std::abs(VV(c, d) - (c == d ? 1.0 : 0.0)), tol) << "V^H V (" << c << ", " << d << ")";
  }
}

// inverse = U^-1 for G = U^H U: U^-H G U^-1 = I, the strictly lower part zero.
inline void expect_cholesky_inverse(const solver::ComplexHostMatrix& G, const solver::ComplexHostMatrix& inverse) {
  const std::int64_t n = G.rows();
  const solver::ComplexHostMatrix GU = solver::multiply(G, inverse);
  const solver::ComplexHostMatrix I = solver::transpose_times(inverse, GU);
  const double tol = 1e3 * double(n) * std::numeric_limits<double>::epsilon();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      ASSERT_LE(std::abs(I(i, j) - (i == j ? 1.0 : 0.0)), tol) << "U^-H G U^-1 (" << i << ", " << j << ")";
      if (j < i) {
        ASSERT_EQ(inverse(i, j), std::complex<double>(0)) << "lower part (" << i << ", " << j << ")";
      }
    }
}

}  // namespace blockeigs::test
