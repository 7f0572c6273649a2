// The Chebyshev preconditioner as a fixed linear operator, at np 1-4 (one
// rank without rows at np >= 2), through the real distributed operator:
// its action on the 1D Laplacian's eigenvectors (sin vectors, closed form)
// against p(lambda) from the Chebyshev polynomial's closed form, for both
// ends, with and without Jacobi scaling, on an SPD and an indefinite matrix;
// positivity of p on the spectrum; symmetry on a matrix without a closed
// form; and input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "distributed_fixtures.hpp"
#include "io/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

using solver::ChebyshevOptions;
using solver::ChebyshevPreconditioner;

struct Problem {
  spmm::Context context = spmm::Context::host();
  io::CsrRows whole;
  solver::RowPartition partition;
  std::unique_ptr<solver::DistributedOperator<double>> A;

  explicit Problem(io::CsrRows matrix) : whole(std::move(matrix)) {
    partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
    const int rank = test::mpi_rank();
    A = std::make_unique<solver::DistributedOperator<double>>(
        MPI_COMM_WORLD, context, io::slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t m() const { return A->local_rows(); }
};

// The n x n matrix G (L + shift I) G, L the 1D Dirichlet Laplacian and G
// diagonal with entries g(i): with Jacobi scaling D = diag = (2 + shift) g^2,
// so D^{-1/2} A D^{-1/2} = (L + shift I) / (2 + shift), whose eigenvectors are
// the sin vectors whatever g is.
io::CsrRows scaled_laplacian(std::int64_t n, double shift, double (*g)(std::int64_t)) {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_1d, n, 1, 1, 3};
  io::CsrRows m = io::generate_rows(spec, 0, n);
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
};

// M v_k against p(mu_k) v_k, v_k the sin vectors scaled by D^{1/2} (Jacobi).
void check_action(const Case& c) {
  const std::int64_t n = 40;
  Problem s(scaled_laplacian(n, c.shift, c.jacobi ? varied : unit));
  ChebyshevOptions options;
  options.degree = c.degree;
  options.end = c.end;
  options.jacobi = c.jacobi;
  ChebyshevPreconditioner<double> M(*s.A, options);
  const solver::ChebyshevInterval& iv = M.interval();
  const double d_scale = c.jacobi ? 2.0 + c.shift : 1.0;  // D = d_scale g^2

  spmm::DenseBlock<double> V(Space::host, s.m(), n), W(Space::host, s.m(), n);
  for (std::int64_t i = 0; i < s.m(); ++i) {
    const std::int64_t gi = s.A->first_row() + i;
    const double dhalf = c.jacobi ? std::sqrt(d_scale) * varied(gi) : 1.0;
    for (std::int64_t k = 0; k < n; ++k) V.view()(i, k) = dhalf * sin_vector(n, k + 1, gi);
  }
  std::fill(W.data(), W.data() + s.m() * n, std::nan(""));
  M.apply(V.cview(), W.view());

  double worst = 0, largest = 0, smallest_p = INFINITY;
  for (std::int64_t k = 0; k < n; ++k) {
    const double mu = (eigenvalue_1d(n, k + 1) + c.shift) / d_scale;  // of S
    const double x = iv.shift + iv.sign * mu;                        // of B
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
  EXPECT_LE(global_worst, 1e-11 * largest * d_scale * 10) << "degree " << c.degree;
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

// x^T M y = y^T M x and x^T M x > 0 on a random SPD matrix, with Jacobi.
TEST(ChebyshevAction, IsSymmetricPositiveDefiniteOnARandomSpdMatrix) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::random_spd;
  spec.n = 150;
  spec.nnz_per_row = 6;
  spec.seed = 3;
  Problem s(io::generate_rows(spec, 0, io::generated_rows(spec)));
  for (bool jacobi : {false, true}) {
    ChebyshevOptions options;
    options.degree = 6;
    options.jacobi = jacobi;
    ChebyshevPreconditioner<double> M(*s.A, options);
    spmm::DenseBlock<double> X(Space::host, s.m(), 4), MX(Space::host, s.m(), 4);
    solver::fill_random(s.context, X.view(), 11, s.A->first_row());
    M.apply(X.cview(), MX.view());
    const solver::HostMatrix G = solver::gram(s.context, MPI_COMM_WORLD, X.cview(), MX.cview());
    for (int i = 0; i < 4; ++i) {
      EXPECT_GT(G(i, i), 0);
      for (int j = 0; j < i; ++j) EXPECT_NEAR(G(i, j), G(j, i), 1e-12 * std::abs(G(i, i)));
    }
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
  EXPECT_NE(input_error([&] { ChebyshevPreconditioner<double> M(*hole.A, scaled); }).find("row 5"),
            std::string::npos);
}

}  // namespace
}  // namespace blockeigs
