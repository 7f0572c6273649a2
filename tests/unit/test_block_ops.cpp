// Host block operations (solver/blocks/block_ops.hpp) against naive loops, on
// awkward shapes (no rows, one row, odd widths, ld > cols, more rows than a
// summation chunk), with NaN-filled outputs where beta == 0 promises not to
// read them; and the random fill's independence of the row split. One MPI
// rank (the reductions over ranks are covered by tests/mpi/).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_matrices.hpp"
#include "tests/support/typed_precisions.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;

template <class T>
class BlockOps : public test::PrecisionTest<T> {};
TYPED_TEST_SUITE(BlockOps, test::Precisions, test::PrecisionNames);

const dense::Context& host() { return test::host_context(); }

struct Shape {
  std::int64_t rows, k1, k2, ld_pad;
};
// Rows 0 and 1, odd widths, and 2500 rows (three 1024-row summation chunks).
const Shape shapes[] = {{0, 3, 2, 0}, {1, 1, 1, 0}, {17, 5, 3, 2}, {129, 8, 8, 1}, {2500, 7, 13, 3}};

template <class T>
dense::DenseBlock<T> random_block(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t pad) {
  return test::random_block<T>(rows, cols, seed, cols + pad);
}

template <class T>
dense::DenseBlock<T> nan_block(std::int64_t rows, std::int64_t cols, std::int64_t pad) {
  dense::DenseBlock<T> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows * b.ld(); ++i) b.data()[i] = std::numeric_limits<T>::quiet_NaN();
  return b;
}

// Rounding bound for a sum of L products: gamma_L * sum |a_i b_i| (Higham), L * u.
template <class T>
double dot_bound(std::int64_t length, double abs_sum) {
  return (double(length) + 1) * std::numeric_limits<T>::epsilon() * abs_sum + 1e-300;
}

template <class T>
void check_gram() {
  for (const Shape& s : shapes) {
    const auto X = random_block<T>(s.rows, s.k1, 1, s.ld_pad);
    const auto Y = random_block<T>(s.rows, s.k2, 2, s.ld_pad + 1);
    const HostMatrix G = solver::gram<T>(host(), MPI_COMM_WORLD, X.cview(), Y.cview());
    ASSERT_EQ(G.rows(), s.k1);
    ASSERT_EQ(G.cols(), s.k2);
    for (std::int64_t a = 0; a < s.k1; ++a)
      for (std::int64_t b = 0; b < s.k2; ++b) {
        double exact = 0, abs_sum = 0;
        for (std::int64_t i = 0; i < s.rows; ++i) {
          exact += double(X.view()(i, a)) * double(Y.view()(i, b));
          abs_sum += std::abs(double(X.view()(i, a)) * double(Y.view()(i, b)));
        }
        EXPECT_NEAR(G(a, b), exact, dot_bound<T>(s.rows, abs_sum)) << s.rows << " rows, (" << a << ", " << b << ")";
      }
    const HostMatrix S = solver::gram<T>(host(), MPI_COMM_WORLD, X.cview());
    for (std::int64_t a = 0; a < s.k1; ++a)
      for (std::int64_t b = 0; b < s.k1; ++b) {
        EXPECT_EQ(S(a, b), S(b, a));  // exactly symmetric
        double exact = 0, abs_sum = 0;
        for (std::int64_t i = 0; i < s.rows; ++i) {
          exact += double(X.view()(i, a)) * double(X.view()(i, b));
          abs_sum += std::abs(double(X.view()(i, a)) * double(X.view()(i, b)));
        }
        EXPECT_NEAR(S(a, b), exact, dot_bound<T>(s.rows, abs_sum));
      }
  }
}

TYPED_TEST(BlockOps, Gram) { check_gram<TypeParam>(); }

template <class T>
void check_block_update() {
  for (const Shape& s : shapes) {
    const auto X = random_block<T>(s.rows, s.k1, 3, s.ld_pad);
    const HostMatrix S = test::random_matrix(s.k1, s.k2, 4);
    for (const T beta : {T(0), T(1), T(-0.5)}) {
      const T alpha = T(1.5);
      auto Y = beta == T(0) ? nan_block<T>(s.rows, s.k2, s.ld_pad) : random_block<T>(s.rows, s.k2, 5, s.ld_pad);
      const auto Y0 = random_block<T>(s.rows, s.k2, 5, s.ld_pad);
      solver::block_update<T>(host(), alpha, X.cview(), S, beta, Y.view());
      for (std::int64_t i = 0; i < s.rows; ++i)
        for (std::int64_t b = 0; b < s.k2; ++b) {
          double exact = 0, abs_sum = 0;
          for (std::int64_t a = 0; a < s.k1; ++a) {
            exact += double(alpha) * double(X.view()(i, a)) * double(T(S(a, b)));
            abs_sum += std::abs(double(alpha) * double(X.view()(i, a)) * S(a, b));
          }
          if (beta != T(0)) {
            exact += double(beta) * double(Y0.view()(i, b));
            abs_sum += std::abs(double(beta) * double(Y0.view()(i, b)));
          }
          ASSERT_FALSE(std::isnan(double(Y.view()(i, b)))) << "beta = 0 read Y";
          EXPECT_NEAR(double(Y.view()(i, b)), exact, dot_bound<T>(s.k1 + 1, abs_sum));
        }
    }
  }
  // An empty product (k1 = 0) gives beta * Y, and zeros for beta == 0.
  auto Y = nan_block<T>(5, 3, 0);
  const dense::DenseBlock<T> X(Space::host, 5, 0);
  solver::block_update<T>(host(), T(1), X.cview(), HostMatrix(0, 3), T(0), Y.view());
  for (std::int64_t i = 0; i < 15; ++i) EXPECT_EQ(Y.data()[i], T(0));
}

TYPED_TEST(BlockOps, BlockUpdate) { check_block_update<TypeParam>(); }

// Block CG's layout: [P | Q | R] in one buffer, the new P = P S1 + R S2
// written over the old P's columns (shifted when its width changes).
template <class T>
void check_block_combine_pair() {
  struct Case {
    std::int64_t rows, s, r, a, r_next;
  };
  const Case cases[] = {{0, 4, 4, 4, 4},  {1, 1, 1, 1, 1},   {37, 6, 6, 5, 6},
                        {37, 6, 6, 5, 3}, {130, 8, 3, 8, 7}, {300, 16, 16, 16, 16}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " rows, s " << c.s << ", r " << c.r << ", a " << c.a << " -> "
                                    << c.r_next);
    const std::int64_t ld = 3 * c.s;
    auto buffer = random_block<T>(c.rows, ld, 11, 0);
    const auto original = random_block<T>(c.rows, ld, 11, 0);
    auto view = [&](std::int64_t first, std::int64_t cols) {
      return dense::DenseView<T>{Space::host, c.rows, cols, ld, buffer.data() + first};
    };
    const std::int64_t p0 = 2 * c.s - 2 * c.r, r0 = 2 * c.s, y0 = 2 * c.s - 2 * c.r_next;
    const HostMatrix S1 = test::random_matrix(c.r, c.r_next, 12), S2 = test::random_matrix(c.a, c.r_next, 13);
    auto scratch = nan_block<T>(c.rows, c.r_next, 1);
    solver::block_combine_pair<T>(host(), dense::ConstDenseView<T>(view(p0, c.r)), S1,
                                  dense::ConstDenseView<T>(view(r0, c.a)), S2, view(y0, c.r_next), scratch.view());
    for (std::int64_t i = 0; i < c.rows; ++i) {
      const T* o = original.data() + i * ld;
      for (std::int64_t j = 0; j < c.r_next; ++j) {
        double want = 0, size = 0;
        for (std::int64_t k = 0; k < c.r; ++k)
          want += double(o[p0 + k]) * S1(k, j), size += std::abs(o[p0 + k] * S1(k, j));
        for (std::int64_t k = 0; k < c.a; ++k)
          want += double(o[r0 + k]) * S2(k, j), size += std::abs(o[r0 + k] * S2(k, j));
        ASSERT_NEAR(buffer.data()[i * ld + y0 + j], want, dot_bound<T>(c.r + c.a, size)) << "row " << i << " col " << j;
      }
      // R's columns are not touched.
      for (std::int64_t j = r0; j < ld; ++j) ASSERT_EQ(buffer.data()[i * ld + j], o[j]);
    }
  }
}

TYPED_TEST(BlockOps, BlockCombinePairOverlappingViews) { check_block_combine_pair<TypeParam>(); }

TEST(BlockOps, AxpbyAndColumnAxpby) {
  for (const Shape& s : shapes) {
    const auto X = random_block<double>(s.rows, s.k1, 6, s.ld_pad);
    const auto Y0 = random_block<double>(s.rows, s.k1, 7, s.ld_pad + 1);
    std::vector<double> alpha(static_cast<std::size_t>(s.k1));
    for (std::int64_t j = 0; j < s.k1; ++j) alpha[j] = 0.25 * double(j) - 1.0;
    auto Y = nan_block<double>(s.rows, s.k1, s.ld_pad + 1);
    solver::axpby<double>(host(), 2.0, X.cview(), 0.0, Y.view());
    auto Z = random_block<double>(s.rows, s.k1, 7, s.ld_pad + 1);
    solver::axpby<double>(host(), 2.0, X.cview(), -3.0, Z.view());
    auto C = nan_block<double>(s.rows, s.k1, 0);
    solver::column_axpby<double>(host(), alpha, X.cview(), 0.0, C.view());
    auto D = random_block<double>(s.rows, s.k1, 7, s.ld_pad + 1);
    solver::column_axpby<double>(host(), alpha, X.cview(), 0.5, D.view());
    for (std::int64_t i = 0; i < s.rows; ++i)
      for (std::int64_t j = 0; j < s.k1; ++j) {
        const double x = X.view()(i, j), y0 = Y0.view()(i, j);
        EXPECT_EQ(Y.view()(i, j), 2.0 * x);
        EXPECT_EQ(Z.view()(i, j), 2.0 * x + -3.0 * y0);
        EXPECT_EQ(C.view()(i, j), alpha[j] * x);
        EXPECT_EQ(D.view()(i, j), alpha[j] * x + 0.5 * y0);
      }
  }
}

// R = AX - X diag(lambda) and the column norms of R and X, against loops,
// with R's columns in order and reversed (r_position).
template <class T>
void check_eigen_residuals() {
  for (const Shape& s : shapes)
    for (const bool reversed : {false, true}) {
      std::vector<std::int64_t> position;
      for (std::int64_t j = 0; reversed && j < s.k1; ++j) position.push_back(s.k1 - 1 - j);
      const auto X = random_block<T>(s.rows, s.k1, 11, s.ld_pad);
      const auto AX = random_block<T>(s.rows, s.k1, 12, s.ld_pad + 2);
      std::vector<double> lambda(static_cast<std::size_t>(s.k1));
      for (std::int64_t j = 0; j < s.k1; ++j) lambda[j] = 0.3 * double(j) - 0.7;
      auto R = nan_block<T>(s.rows, s.k1, 1);
      const solver::ResidualNorms norms =
          solver::eigen_residuals<T>(host(), MPI_COMM_WORLD, X.cview(), AX.cview(), lambda, R.view(), position);
      ASSERT_EQ(norms.residual.size(), std::size_t(s.k1));
      ASSERT_EQ(norms.x.size(), std::size_t(s.k1));
      for (std::int64_t j = 0; j < s.k1; ++j) {
        double rr = 0, xx = 0, abs_r = 0;
        for (std::int64_t i = 0; i < s.rows; ++i) {
          const T x = X.view()(i, j);
          const T r = AX.view()(i, j) - T(lambda[j]) * x;
          // Two roundings, or one where the compiler fuses a multiply-add.
          const double scale = std::abs(double(AX.view()(i, j))) + std::abs(lambda[j] * double(x));
          EXPECT_NEAR(R.view()(i, reversed ? s.k1 - 1 - j : j), r, 2 * std::numeric_limits<T>::epsilon() * scale);
          rr += double(r) * double(r);
          xx += double(x) * double(x);
          abs_r += double(r) * double(r);
        }
        EXPECT_NEAR(norms.residual[j] * norms.residual[j], rr, dot_bound<double>(s.rows, abs_r));
        EXPECT_NEAR(norms.x[j] * norms.x[j], xx, dot_bound<double>(s.rows, xx) + 4e-16 * xx);
      }
    }
}

TYPED_TEST(BlockOps, EigenResiduals) { check_eigen_residuals<TypeParam>(); }

// Columns moved to the front in place; the columns after the kept ones are
// left as they were, and bad column lists are rejected.
TEST(BlockOps, KeepColumnsInPlace) {
  for (const Shape& s : shapes) {
    const auto X0 = random_block<double>(s.rows, s.k2, 13, s.ld_pad);
    for (const std::vector<std::int64_t>& keep :
         {std::vector<std::int64_t>{}, std::vector<std::int64_t>{s.k2 - 1}, std::vector<std::int64_t>{0}}) {
      auto X = random_block<double>(s.rows, s.k2, 13, s.ld_pad);
      solver::keep_columns<double>(host(), X.view(), keep);
      for (std::int64_t i = 0; i < s.rows; ++i)
        for (std::int64_t j = 0; j < s.k2; ++j)
          EXPECT_EQ(X.view()(i, j), j < std::int64_t(keep.size()) ? X0.view()(i, keep[j]) : X0.view()(i, j));
    }
    std::vector<std::int64_t> odd;
    for (std::int64_t j = 1; j < s.k2; j += 2) odd.push_back(j);
    auto X = random_block<double>(s.rows, s.k2, 13, s.ld_pad);
    solver::keep_columns<double>(host(), X.view(), odd);
    for (std::int64_t i = 0; i < s.rows; ++i)
      for (std::size_t j = 0; j < odd.size(); ++j) EXPECT_EQ(X.view()(i, std::int64_t(j)), X0.view()(i, odd[j]));
  }
  auto X = random_block<double>(4, 3, 1, 0);
  EXPECT_THROW(solver::keep_columns<double>(host(), X.view(), {1, 1}), Error);
  EXPECT_THROW(solver::keep_columns<double>(host(), X.view(), {2, 1}), Error);
  EXPECT_THROW(solver::keep_columns<double>(host(), X.view(), {0, 3}), Error);
}

// Columns permuted in place (reversed, and rotated by one), and lists that
// are not permutations rejected.
TEST(BlockOps, PermuteColumnsInPlace) {
  for (const Shape& s : shapes) {
    const auto X0 = random_block<double>(s.rows, s.k2, 13, s.ld_pad);
    std::vector<std::int64_t> reversed, rotated;
    for (std::int64_t j = 0; j < s.k2; ++j) {
      reversed.push_back(s.k2 - 1 - j);
      rotated.push_back((j + 1) % s.k2);
    }
    for (const auto& order : {reversed, rotated}) {
      auto X = random_block<double>(s.rows, s.k2, 13, s.ld_pad);
      solver::permute_columns<double>(host(), X.view(), order);
      for (std::int64_t i = 0; i < s.rows; ++i)
        for (std::int64_t j = 0; j < s.k2; ++j) EXPECT_EQ(X.view()(i, j), X0.view()(i, order[j]));
    }
  }
  auto X = random_block<double>(4, 3, 1, 0);
  EXPECT_THROW(solver::permute_columns<double>(host(), X.view(), {1, 1, 0}), Error);
  EXPECT_THROW(solver::permute_columns<double>(host(), X.view(), {0, 1}), Error);
  EXPECT_THROW(solver::permute_columns<double>(host(), X.view(), {0, 1, 3}), Error);
}

TEST(BlockOps, ColumnNormsScaleSelectCopyDiagonal) {
  for (const Shape& s : shapes) {
    const auto X = random_block<double>(s.rows, s.k2, 8, s.ld_pad);
    const std::vector<double> norms = solver::column_norms<double>(host(), MPI_COMM_WORLD, X.cview());
    ASSERT_EQ(norms.size(), std::size_t(s.k2));
    for (std::int64_t j = 0; j < s.k2; ++j) {
      double sum = 0;
      for (std::int64_t i = 0; i < s.rows; ++i) sum += X.view()(i, j) * X.view()(i, j);
      EXPECT_NEAR(norms[j], std::sqrt(sum), dot_bound<double>(s.rows, std::sqrt(sum)));
    }
    // Same input, same bits.
    EXPECT_EQ(norms, solver::column_norms<double>(host(), MPI_COMM_WORLD, X.cview()));

    std::vector<double> scale(static_cast<std::size_t>(s.k2));
    for (std::int64_t j = 0; j < s.k2; ++j) scale[j] = 1.0 + double(j);
    auto Xs = random_block<double>(s.rows, s.k2, 8, s.ld_pad);
    solver::scale_columns<double>(host(), scale, Xs.view());

    std::vector<std::int64_t> pick;
    for (std::int64_t j = s.k2 - 1; j >= 0; j -= 2) pick.push_back(j);
    auto P = nan_block<double>(s.rows, std::int64_t(pick.size()), 1);
    solver::select_columns<double>(host(), X.cview(), pick, P.view());

    auto Cp = nan_block<double>(s.rows, s.k2, 3);
    solver::copy_block<double>(host(), X.cview(), Cp.view());

    std::vector<double> d(static_cast<std::size_t>(s.rows));
    for (std::int64_t i = 0; i < s.rows; ++i) d[i] = 0.5 + double(i % 7);
    auto Dx = nan_block<double>(s.rows, s.k2, 0);
    solver::apply_diagonal<double>(host(), d.data(), X.cview(), Dx.view());

    for (std::int64_t i = 0; i < s.rows; ++i) {
      for (std::int64_t j = 0; j < s.k2; ++j) {
        EXPECT_EQ(Xs.view()(i, j), X.view()(i, j) * scale[j]);
        EXPECT_EQ(Cp.view()(i, j), X.view()(i, j));
        EXPECT_EQ(Dx.view()(i, j), d[i] * X.view()(i, j));
      }
      for (std::size_t c = 0; c < pick.size(); ++c) EXPECT_EQ(P.view()(i, std::int64_t(c)), X.view()(i, pick[c]));
    }
  }
}

TEST(BlockOps, ColumnRangeViewsShareStorage) {
  auto X = random_block<double>(4, 6, 9, 1);
  const auto mid = solver::column_range(X.view(), 2, 3);
  EXPECT_EQ(mid.cols, 3);
  EXPECT_EQ(mid.ld, X.ld());
  EXPECT_EQ(&mid(1, 0), &X.view()(1, 2));
}

TEST(BlockOps, RandomFillDoesNotDependOnTheRowSplit) {
  const std::int64_t N = 1000, k = 5;
  dense::DenseBlock<double> whole(Space::host, N, k);
  solver::fill_random<double>(host(), whole.view(), 42, 0);
  // Any split into row ranges, each filled with its first global row.
  for (const std::int64_t cut : {std::int64_t{1}, std::int64_t{333}, std::int64_t{999}}) {
    dense::DenseBlock<double> top(Space::host, cut, k, k + 2), bottom(Space::host, N - cut, k);
    solver::fill_random<double>(host(), top.view(), 42, 0);
    solver::fill_random<double>(host(), bottom.view(), 42, cut);
    for (std::int64_t i = 0; i < N; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        const double v = i < cut ? top.view()(i, j) : bottom.view()(i - cut, j);
        ASSERT_EQ(0, std::memcmp(&v, &whole.view()(i, j), sizeof v)) << "row " << i << " col " << j;
      }
  }
  // A column range is the same hash columns.
  dense::DenseBlock<double> right(Space::host, N, 2);
  solver::fill_random<double>(host(), right.view(), 42, 0, 3);
  for (std::int64_t i = 0; i < N; ++i) EXPECT_EQ(right.view()(i, 1), whole.view()(i, 4));
  // Rows by their global index: the same entries in any order.
  std::vector<std::int64_t> order(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) order[i] = (7 * i + 3) % N;
  dense::DenseBlock<double> scattered(Space::host, N, k);
  solver::fill_random_rows<double>(host(), scattered.view(), 42, order.data());
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t j = 0; j < k; ++j) ASSERT_EQ(scattered.view()(i, j), whole.view()(order[i], j));
  // Float is the double value rounded.
  dense::DenseBlock<float> single(Space::host, N, k);
  solver::fill_random<float>(host(), single.view(), 42, 0);
  for (std::int64_t i = 0; i < N; ++i) EXPECT_EQ(single.view()(i, 0), float(whole.view()(i, 0)));
}

TEST(BlockOps, RandomFillLooksUniform) {
  // Mean 0 and variance 1/3 of U[-1, 1) to within 5 standard errors; another
  // seed, another block; values in range.
  const std::int64_t N = 20000;
  dense::DenseBlock<double> a(Space::host, N, 2), b(Space::host, N, 2);
  solver::fill_random<double>(host(), a.view(), 1, 0);
  solver::fill_random<double>(host(), b.view(), 2, 0);
  double sum = 0, sum_sq = 0, cross = 0;
  std::int64_t equal = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    const double x = a.view()(i, 0);
    ASSERT_GE(x, -1.0);
    ASSERT_LT(x, 1.0);
    sum += x;
    sum_sq += x * x;
    cross += x * a.view()(i, 1);
    equal += x == b.view()(i, 0) ? 1 : 0;
  }
  const double n = double(N);
  EXPECT_NEAR(sum / n, 0.0, 5 * std::sqrt(1.0 / 3 / n));
  EXPECT_NEAR(sum_sq / n, 1.0 / 3, 5 * std::sqrt(4.0 / 45 / n));
  EXPECT_NEAR(cross / n, 0.0, 5 * std::sqrt(1.0 / 9 / n));  // columns uncorrelated
  EXPECT_EQ(equal, 0);
}

// start_gram / finish give gram()'s bits, finished in any order.
TEST(BlockOps, GramInFlightEqualsGram) {
  const auto X = random_block<double>(2500, 7, 1, 3);
  const auto Y = random_block<double>(2500, 13, 2, 0);
  solver::GramInFlight first = solver::start_gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y.cview());
  solver::GramInFlight second = solver::start_gram<double>(host(), MPI_COMM_WORLD, Y.cview(), X.cview());
  EXPECT_EQ(second.finish().values(), solver::gram<double>(host(), MPI_COMM_WORLD, Y.cview(), X.cview()).values());
  EXPECT_EQ(first.finish().values(), solver::gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y.cview()).values());
}

// start_gram_pair: X^T [Y1 Y2], each half gram()'s bits; an empty Y2.
TEST(BlockOps, GramPairPutsTwoGramsSideBySide) {
  const auto X = random_block<double>(2500, 7, 3, 1);
  const auto Y = random_block<double>(2500, 13, 4, 2);
  const auto Y1 = solver::column_range(Y.cview(), 0, 5), Y2 = solver::column_range(Y.cview(), 8, 4);
  const HostMatrix both = solver::start_gram_pair<double>(host(), MPI_COMM_WORLD, X.cview(), Y1, Y2).finish();
  ASSERT_EQ(both.rows(), 7);
  ASSERT_EQ(both.cols(), 9);
  EXPECT_EQ(both.block(0, 7, 0, 5).values(), solver::gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y1).values());
  EXPECT_EQ(both.block(0, 7, 5, 4).values(), solver::gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y2).values());
  const HostMatrix alone =
      solver::start_gram_pair<double>(host(), MPI_COMM_WORLD, X.cview(), Y1, solver::column_range(Y1, 0, 0)).finish();
  EXPECT_EQ(alone.values(), solver::gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y1).values());
}

// On the host the phases are wall-clock intervals, each charged once.
TEST(PhaseTimer, HostPhasesAreWallClockIntervals) {
  double a = 0, b = 0;
  solver::PhaseTimer clock(host());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.to(a);
  clock.settle_done();  // nothing to settle on the host
  clock.to(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  clock.to(b);
  clock.finish();
  EXPECT_GE(a, 0.019);
  EXPECT_GE(b, 0.009);
  EXPECT_LT(b, a);
}

TEST(BlockOps, AllreduceOnOneRankIsTheIdentity) {
  std::vector<double> v{1.5, -2.0, 3.25};
  const std::vector<double> before = v;
  solver::allreduce_sum(MPI_COMM_WORLD, v.data(), v.size());
  EXPECT_EQ(v, before);
}

TEST(BlockOps, MismatchedShapesAreErrors) {
  const auto X = random_block<double>(4, 2, 1, 0);
  const auto Y = random_block<double>(5, 2, 1, 0);
  EXPECT_THROW(solver::gram<double>(host(), MPI_COMM_WORLD, X.cview(), Y.cview()), Error);
  auto Z = random_block<double>(4, 3, 1, 0);
  EXPECT_THROW(solver::block_update<double>(host(), 1.0, X.cview(), HostMatrix(3, 3), 0.0, Z.view()), Error);
  EXPECT_THROW(solver::select_columns<double>(host(), X.cview(), {0, 2, 1}, Z.view()), Error);
}

// solver::product on blocks inside larger matrices (leading
// dimensions wider than the blocks), all four transpose cases, alpha and
// beta; C's entries outside the block untouched, and with beta = 0 never
// read (NaN there), also for an empty sum (k = 0). The shapes reach every
// tile and tail of the register kernel (small_product.cpp: rows in fours,
// twos and ones, columns in 12s, 8s, 4s and single ones) and both sides of
// its limits, where BLAS takes over.
void expect_product_matches_definition(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::int64_t ld = std::max({m, n, k}) + 6;
  const HostMatrix A = test::random_matrix(ld, ld, 60), B = test::random_matrix(ld, ld, 61);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const double beta : {0.0, 0.5}) {
        HostMatrix C = test::random_matrix(ld, ld, 62);
        const HostMatrix before = C;
        if (beta == 0)
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) C(1 + i, 2 + j) = std::nan("");
        // op(A) from A's block at (2, 1), op(B) from B's at (3, 4), into C's at (1, 2).
        solver::product(ta, tb, m, n, k, A.data() + 2 * ld + 1, ld, B.data() + 3 * ld + 4, ld, beta, &C(1, 2), ld,
                        -2.0);
        for (std::int64_t i = 0; i < ld; ++i)
          for (std::int64_t j = 0; j < ld; ++j) {
            const bool inside = i >= 1 && i < 1 + m && j >= 2 && j < 2 + n;
            if (!inside) {
              EXPECT_EQ(C(i, j), before(i, j));
              continue;
            }
            double sum = 0, scale = 0;
            for (std::int64_t l = 0; l < k; ++l) {
              const double a = ta ? A(2 + l, 1 + (i - 1)) : A(2 + (i - 1), 1 + l);
              const double b = tb ? B(3 + (j - 2), 4 + l) : B(3 + l, 4 + (j - 2));
              sum += a * b;
              scale += std::abs(a * b);
            }
            const double expected = -2.0 * sum + beta * before(i, j);
            EXPECT_NEAR(C(i, j), expected, 4 * double(k + 1) * DBL_EPSILON * (2 * scale + std::abs(before(i, j))))
                << m << "x" << n << "x" << k << " " << ta << tb << beta << " at " << i << "," << j;
          }
      }
}

TEST(Product, BlocksInPlaceMatchTheDefinition) {
  expect_product_matches_definition(5, 7, 3);
  for (const std::int64_t m : {1, 2, 3, 4, 7, 13})
    for (const std::int64_t n : {1, 3, 4, 8, 13, 27})
      for (const std::int64_t k : {1, 20}) expect_product_matches_definition(m, n, k);
  expect_product_matches_definition(60, 60, 60);  // the largest projected problem of block 20
  expect_product_matches_definition(64, 64, 64);  // the register kernel's limit
  expect_product_matches_definition(65, 64, 64);  // BLAS
  expect_product_matches_definition(2, 65, 64);   // op(B) too large to pack: BLAS where transposed
  HostMatrix C(2, 2, std::nan(""));
  solver::product(false, false, 2, 2, 0, nullptr, 1, nullptr, 2, 0.0, C.data(), 2);
  for (double v : C.values()) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace blockeigs
