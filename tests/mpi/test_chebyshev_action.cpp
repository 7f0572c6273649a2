// The Chebyshev preconditioner as a fixed linear operator, at np 1-4 (one
// rank without rows at np >= 2), through the real distributed operator:
// its action on the 1D Laplacian's eigenvectors (sin vectors, closed form)
// against p(lambda) from the Chebyshev polynomial's closed form, for both
// ends, with and without Jacobi scaling, on an SPD and an indefinite matrix,
// in fp64 and in fp32 (to fp32 rounding); positivity of p on the spectrum;
// symmetry on a matrix without a closed form; the fp32 polynomial against
// the fp64 one; the precision `auto` picks; and input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <vector>

#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

using solver::ChebyshevOptions;
using solver::ChebyshevPreconditioner;

constexpr double eps32 = std::numeric_limits<float>::epsilon();

struct Problem {
  dense::Context context = dense::Context::host();
  CsrRows whole;
  solver::RowPartition partition;
  std::unique_ptr<solver::DistributedOperator<double>> A;

  explicit Problem(CsrRows matrix) : whole(std::move(matrix)) {
    partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
    const int rank = test::mpi_rank();
    A = std::make_unique<solver::DistributedOperator<double>>(
        MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t m() const { return A->local_rows(); }
};

// The n x n matrix G (L + shift I) G, L the 1D Dirichlet Laplacian and G
// diagonal with entries g(i): with Jacobi scaling D = diag = (2 + shift) g^2,
// so D^{-1/2} A D^{-1/2} = (L + shift I) / (2 + shift), whose eigenvectors are
// the sin vectors whatever g is.
CsrRows scaled_laplacian(std::int64_t n, double shift, double (*g)(std::int64_t)) {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_1d, n, 1, 1, 3};
  CsrRows m = io::generate_rows(spec, 0, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = m.row_offsets[i]; p < m.row_offsets[i + 1]; ++p)
      m.values[p] = (m.values[p] + (m.col_indices[p] == i ? shift : 0.0)) * g(i) * g(m.col_indices[p]);
  return m;
}
double unit(std::int64_t) { return 1.0; }
double varied(std::int64_t i) { return 1.0 + 3.0 * static_cast<double>((i * 7) % 11) / 10.0; }

double eigenvalue_1d(std::int64_t n, std::int64_t k) {
  return 2.0 - 2.0 * std::cos(std::numbers::pi * static_cast<double>(k) / static_cast<double>(n + 1));
}
double sin_vector(std::int64_t n, std::int64_t k, std::int64_t i) {
  return std::sin(std::numbers::pi * static_cast<double>(k * (i + 1)) / static_cast<double>(n + 1));
}

// T_m(x) for any real x.
double chebyshev_t(int m, double x) {
  if (std::abs(x) <= 1) return std::cos(m * std::acos(x));
  const double t = std::cosh(m * std::acosh(std::abs(x)));
  return x < 0 && m % 2 == 1 ? -t : t;
}

// p(x) with 1 - x p(x) = T_{d+1}((theta - x) / delta) / T_{d+1}(theta / delta).
double p_closed_form(int degree, double a, double b, double x) {
  const double theta = (a + b) / 2, delta = (b - a) / 2;
  const double scale = chebyshev_t(degree + 1, theta / delta);
  if (std::abs(x) < 1e-12 * b) {  // the limit: -d/dx of the ratio at 0
    const double h = 1e-6 * b;
    return (p_closed_form(degree, a, b, h) + p_closed_form(degree, a, b, -h)) / 2;
  }
  return (1 - chebyshev_t(degree + 1, (theta - x) / delta) / scale) / x;
}

struct Case {
  int degree;
  SpectrumEnd end;
  bool jacobi;
  double shift;  // of L: negative makes the matrix indefinite
  ChebyshevPrecision precision = ChebyshevPrecision::fp64;
  std::int64_t cols = 40;  // eigenvectors applied to at once (of 40)
};

// M v_k against p(mu_k) v_k, v_k the sin vectors scaled by D^{1/2} (Jacobi).
void check_action(const Case& c) {
  SCOPED_TRACE(std::string("degree ") + std::to_string(c.degree) + ", " + std::string(to_string(c.precision)) + ", " +
               std::to_string(c.cols) + " columns");
  const std::int64_t n = 40, cols = c.cols;
  Problem s(scaled_laplacian(n, c.shift, c.jacobi ? varied : unit));
  ChebyshevOptions options;
  options.degree = c.degree;
  options.end = c.end;
  options.jacobi = c.jacobi;
  options.precision = c.precision;
  ChebyshevPreconditioner<double> M(*s.A, options);
  const bool single = c.precision == ChebyshevPrecision::fp32;
  EXPECT_EQ(M.precision(), single ? Precision::fp32 : Precision::fp64);
  const solver::ChebyshevInterval& iv = M.interval();
  const double d_scale = c.jacobi ? 2.0 + c.shift : 1.0;  // D = d_scale g^2

  dense::DenseBlock<double> V(Space::host, s.m(), cols), W(Space::host, s.m(), cols);
  for (std::int64_t i = 0; i < s.m(); ++i) {
    const std::int64_t gi = s.A->first_row() + i;
    const double dhalf = c.jacobi ? std::sqrt(d_scale) * varied(gi) : 1.0;
    for (std::int64_t k = 0; k < cols; ++k) V.view()(i, k) = dhalf * sin_vector(n, k + 1, gi);
  }
  std::fill(W.data(), W.data() + s.m() * cols, std::nan(""));
  M.apply(V.cview(), W.view());

  double worst = 0, largest = 0, smallest_p = INFINITY;
  for (std::int64_t k = 0; k < cols; ++k) {
    const double mu = (eigenvalue_1d(n, k + 1) + c.shift) / d_scale;  // of S
    const double x = iv.shift + iv.sign * mu;                         // of B
    const double p = p_closed_form(M.degree(), iv.a, iv.b, x);
    smallest_p = std::min(smallest_p, p);
    largest = std::max(largest, std::abs(p));
    for (std::int64_t i = 0; i < s.m(); ++i) {
      const std::int64_t gi = s.A->first_row() + i;
      const double dhalf = c.jacobi ? std::sqrt(d_scale) * varied(gi) : 1.0;
      worst = std::max(worst, std::abs(W.view()(i, k) - p * sin_vector(n, k + 1, gi) / dhalf));
    }
  }
  double global_worst = 0;
  MPI_Allreduce(&worst, &global_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GT(smallest_p, 0) << "p must be positive on the spectrum";
  // fp32: each of the degree + 1 passes and products rounds the running
  // blocks once (relative eps32, and the shift's term s e as much again as
  // the product's for the largest end); the recurrence carries those errors
  // with factors of at most 1 on [a, b], so they add up to ~degree eps32 max |p|.
  // Measured: up to 0.4 (smallest end) and 3.2 (largest) of degree + 1.
  const double bound = single ? 4 * (c.degree + 1) * (1 + iv.shift / iv.b) * eps32 : 1e-10;
  EXPECT_LE(global_worst, bound * largest * d_scale) << "degree " << c.degree;
  EXPECT_EQ(M.work().products, c.degree);
}

TEST(ChebyshevAction, MatchesTheClosedFormSmallestEnd) {
  for (int degree : {1, 2, 7, 8, 20}) check_action({degree, SpectrumEnd::smallest, false, 0.0});
}

TEST(ChebyshevAction, MatchesTheClosedFormLargestEnd) {
  for (int degree : {1, 4, 8}) check_action({degree, SpectrumEnd::largest, false, 0.0});
}

TEST(ChebyshevAction, MatchesTheClosedFormWithJacobiScaling) {
  for (int degree : {3, 8}) {
    check_action({degree, SpectrumEnd::smallest, true, 0.0});
    check_action({degree, SpectrumEnd::largest, true, 0.0});
  }
}

// L - 1.5 I has eigenvalues in (-1.5, 2.5): M stays positive on all of them.
TEST(ChebyshevAction, IsPositiveOnAnIndefiniteMatrix) {
  for (int degree : {5, 8}) {
    check_action({degree, SpectrumEnd::smallest, false, -1.5});
    check_action({degree, SpectrumEnd::largest, false, -1.5});
    check_action({degree, SpectrumEnd::smallest, true, -0.5});
  }
}

// The fp32 polynomial: the same closed forms to fp32 rounding, at widths
// that are odd (their halo rows padded) and at the widths LOBPCG uses.
TEST(ChebyshevAction, MatchesTheClosedFormInFp32) {
  const ChebyshevPrecision fp32 = ChebyshevPrecision::fp32;
  for (int degree : {1, 8, 20}) check_action({degree, SpectrumEnd::smallest, false, 0.0, fp32});
  check_action({4, SpectrumEnd::largest, false, 0.0, fp32, 7});
  for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest}) check_action({8, end, true, 0.0, fp32, 17});
  check_action({5, SpectrumEnd::smallest, false, -1.5, fp32, 1});
  check_action({16, SpectrumEnd::smallest, true, -0.5, fp32, 3});
}

CsrRows random_spd(std::int64_t n) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::random_spd;
  spec.n = n;
  spec.nnz_per_row = 6;
  spec.seed = 3;
  return io::generate_rows(spec, 0, io::generated_rows(spec));
}

// x^T M y = y^T M x and x^T M x > 0 on a random SPD matrix, with Jacobi:
// exactly (to fp64 rounding) for the fp64 polynomial, to fp32 rounding for
// the fp32 one.
TEST(ChebyshevAction, IsSymmetricPositiveDefiniteOnARandomSpdMatrix) {
  Problem s(random_spd(150));
  for (ChebyshevPrecision precision : {ChebyshevPrecision::fp64, ChebyshevPrecision::fp32})
    for (bool jacobi : {false, true}) {
      ChebyshevOptions options;
      options.degree = 6;
      options.jacobi = jacobi;
      options.precision = precision;
      ChebyshevPreconditioner<double> M(*s.A, options);
      dense::DenseBlock<double> X(Space::host, s.m(), 4), MX(Space::host, s.m(), 4);
      solver::fill_random(s.context, X.view(), 11, s.A->first_row());
      M.apply(X.cview(), MX.view());
      const solver::HostMatrix G = solver::gram(s.context, MPI_COMM_WORLD, X.cview(), MX.cview());
      const double tolerance = precision == ChebyshevPrecision::fp64 ? 1e-12 : (options.degree + 1) * eps32;
      for (int i = 0; i < 4; ++i) {
        EXPECT_GT(G(i, i), 0);
        for (int j = 0; j < i; ++j)
          EXPECT_NEAR(G(i, j), G(j, i), tolerance * std::sqrt(G(i, i) * G(j, j))) << to_string(precision);
      }
    }
}

// The fp32 polynomial against the fp64 one, column by column, on blocks of
// several widths (1 and odd ones included), with Jacobi scaling, both ends.
TEST(ChebyshevAction, Fp32AgreesWithFp64ToFp32Rounding) {
  Problem s(random_spd(203));
  for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
    ChebyshevOptions options;
    options.degree = 12;
    options.end = end;
    options.precision = ChebyshevPrecision::fp64;
    ChebyshevPreconditioner<double> M64(*s.A, options);
    options.precision = ChebyshevPrecision::fp32;
    ChebyshevPreconditioner<double> M32(*s.A, options);
    EXPECT_EQ(M32.interval().b, M64.interval().b);  // the interval comes from the same fp64 estimate
    for (std::int64_t cols : {1, 3, 16, 5}) {
      dense::DenseBlock<double> R(Space::host, s.m(), cols), W64(Space::host, s.m(), cols),
          W32(Space::host, s.m(), cols);
      solver::fill_random(s.context, R.view(), 17, s.A->first_row());
      std::fill(W32.data(), W32.data() + s.m() * cols, std::nan(""));
      M64.apply(R.cview(), W64.view());
      M32.apply(R.cview(), W32.view());
      const std::vector<double> reference = solver::column_norms(s.context, MPI_COMM_WORLD, W64.cview());
      solver::axpby(s.context, -1.0, W64.cview(), 1.0, W32.view());
      const std::vector<double> difference = solver::column_norms(s.context, MPI_COMM_WORLD, W32.cview());
      for (std::int64_t j = 0; j < cols; ++j) {  // measured: up to 0.34 (degree + 1) eps32
        EXPECT_LE(difference[j], 2 * (options.degree + 1) * eps32 * reference[j]) << "column " << j << " of " << cols;
        EXPECT_GT(difference[j], 0) << "the fp32 polynomial must differ from the fp64 one somewhere";
      }
    }
  }
}

// auto: fp32 for LOBPCG on an fp64 distributed operator, the operator's own
// precision for an fp32 one and for block CG, and fp64 where the operator has
// no fp32 copy.
TEST(ChebyshevAction, AutoPrecision) {
  Problem s(scaled_laplacian(30, 0.0, unit));
  ChebyshevOptions options;
  options.degree = 4;
  EXPECT_EQ(ChebyshevPreconditioner<double>(*s.A, options).precision(), Precision::fp32);
  test::CsrTestOperator<double> plain(MPI_COMM_WORLD, dense::Context::host(), s.whole, s.partition);
  EXPECT_EQ(ChebyshevPreconditioner<double>(plain, options).precision(), Precision::fp64);
  const int rank = test::mpi_rank();
  solver::DistributedOperator<float> A32(
      MPI_COMM_WORLD, s.context, slice_rows(s.whole, s.partition.begin(rank), s.partition.end(rank)), s.partition);
  EXPECT_EQ(ChebyshevPreconditioner<float>(A32, options).precision(), Precision::fp32);
  options.eigensolver = false;  // block CG's
  EXPECT_EQ(ChebyshevPreconditioner<double>(*s.A, options).precision(), Precision::fp64);
  for (Space space : {Space::host, Space::device}) {
    EXPECT_EQ(solver::chebyshev_precision(ChebyshevPrecision::automatic, Precision::fp64, true, space),
              Precision::fp32);
    EXPECT_EQ(solver::chebyshev_precision(ChebyshevPrecision::automatic, Precision::fp64, false, space),
              Precision::fp64);
    EXPECT_EQ(solver::chebyshev_precision(ChebyshevPrecision::automatic, Precision::fp32, false, space),
              Precision::fp32);
    EXPECT_EQ(solver::chebyshev_precision(ChebyshevPrecision::fp32, Precision::fp64, false, space), Precision::fp32);
    EXPECT_EQ(solver::chebyshev_precision(ChebyshevPrecision::fp64, Precision::fp64, true, space), Precision::fp64);
  }
}

// Input errors, on every rank.
template <class Fn>
std::string input_error(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const auto* agreed = dynamic_cast<const solver::AgreedError*>(&e);
    EXPECT_TRUE(dynamic_cast<const InputError*>(&e) || (agreed && agreed->is_input_error())) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an input error";
  return {};
}

TEST(ChebyshevAction, RejectsBadOptionsAndMatrices) {
  Problem s(scaled_laplacian(20, 0.0, unit));
  auto build = [&](ChebyshevOptions o) { ChebyshevPreconditioner<double> M(*s.A, o); };
  ChebyshevOptions o;
  build(o);  // the defaults are fine
  o.degree = -1;
  EXPECT_NE(input_error([&] { build(o); }).find("degree -1"), std::string::npos);
  o.degree = max_chebyshev_degree + 1;
  EXPECT_NE(input_error([&] { build(o); }).find("out of range"), std::string::npos);
  o = {};
  for (double lower : {1.0, 2.0, -0.5}) {
    o.lower = lower;
    EXPECT_NE(input_error([&] { build(o); }).find("lower"), std::string::npos);
  }
  // A zero matrix has no interval; a zero diagonal entry no Jacobi scaling.
  Problem zero(test::diagonal_matrix(std::vector<double>(12, 0.0)));
  ChebyshevOptions unscaled;
  unscaled.jacobi = false;
  EXPECT_NE(input_error([&] { ChebyshevPreconditioner<double> M(*zero.A, unscaled); }).find("a zero or non-finite"),
            std::string::npos);
  std::vector<double> d(12, 1.0);
  d[5] = 0;
  Problem hole(test::diagonal_matrix(d));
  ChebyshevOptions scaled;
  scaled.jacobi = true;
  EXPECT_NE(input_error([&] { ChebyshevPreconditioner<double> M(*hole.A, scaled); }).find("row 5"), std::string::npos);
  // A precision the operator cannot give.
  ChebyshevOptions single;
  single.precision = ChebyshevPrecision::fp32;
  test::CsrTestOperator<double> plain(MPI_COMM_WORLD, dense::Context::host(), s.whole, s.partition);
  EXPECT_NE(input_error([&] { ChebyshevPreconditioner<double> M(plain, single); }).find("precision fp32 needs"),
            std::string::npos);
  ChebyshevOptions wide;
  wide.precision = ChebyshevPrecision::fp64;
  const int rank = test::mpi_rank();
  solver::DistributedOperator<float> A32(
      MPI_COMM_WORLD, s.context, slice_rows(s.whole, s.partition.begin(rank), s.partition.end(rank)), s.partition);
  EXPECT_NE(input_error([&] { ChebyshevPreconditioner<float> M(A32, wide); }).find("precision fp64 needs an fp64"),
            std::string::npos);
}

}  // namespace
}  // namespace blockeigs
