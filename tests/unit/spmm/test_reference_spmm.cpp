// The host SpMM in complex values (the CPU twin of the complex kernels),
// through spmm::Plan as the solvers call it, against four real products:
// (Ar + i Ai)(Br + i Bi) = (Ar Br - Ai Bi) + i (Ar Bi + Ai Br), with complex
// alpha and beta, empty rows and a one-column block.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include "spmm/local_spmm.hpp"
#include "spmm/plan.hpp"

namespace blockeigs::test {
namespace {

using Complex = std::complex<double>;

struct Parts {
  spmm::HostCsr<double> re, im;
  spmm::HostCsr<Complex> whole;
};

// m x k with 0-9 distinct columns a row (one row in five empty).
Parts random_parts(std::int64_t m, std::int64_t k, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Parts p;
  for (auto* a : {&p.re, &p.im}) a->rows = m, a->cols = k;
  p.whole.rows = m, p.whole.cols = k;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t length = engine() % 5 == 0 ? 0 : std::int64_t(engine() % 10);
    for (std::int64_t c = 0; c < k && c < length * 4; c += 1 + std::int64_t(engine() % 4)) {
      const double re = uniform(engine), im = uniform(engine);
      p.re.col_indices.push_back(std::int32_t(c)), p.re.values.push_back(re);
      p.im.col_indices.push_back(std::int32_t(c)), p.im.values.push_back(im);
      p.whole.col_indices.push_back(std::int32_t(c)), p.whole.values.push_back({re, im});
    }
    for (auto* offsets : {&p.re.row_offsets, &p.im.row_offsets, &p.whole.row_offsets})
      offsets->push_back(std::int32_t(p.whole.col_indices.size()));
  }
  return p;
}

std::vector<double> product(const spmm::HostCsr<double>& A, const std::vector<double>& B, std::int64_t n) {
  std::vector<double> C(static_cast<std::size_t>(A.rows * n));
  spmm::make_reference_spmm(A.view())->multiply(1.0, {Space::host, A.cols, n, n, B.data()}, 0.0,
                                                {Space::host, A.rows, n, n, C.data()});
  return C;
}

void check_width(std::int64_t n) {
  SCOPED_TRACE("n = " + std::to_string(n));
  const Parts A = random_parts(57, 43, 7 + std::uint64_t(n));
  std::mt19937_64 engine(99);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> br(std::size_t(43 * n)), bi(br.size()), cr(std::size_t(57 * n)), ci(cr.size());
  for (auto* v : {&br, &bi, &cr, &ci})
    for (double& x : *v) x = uniform(engine);
  std::vector<Complex> B(br.size()), C(cr.size());
  for (std::size_t e = 0; e < B.size(); ++e) B[e] = {br[e], bi[e]};
  for (std::size_t e = 0; e < C.size(); ++e) C[e] = {cr[e], ci[e]};
  const Complex alpha(0.5, -1.5), beta(2.0, 0.25);
  const std::vector<Complex> C0 = C;

  const dense::Context context = dense::Context::host();
  spmm::Plan<Complex> plan(context, A.whole.view());
  EXPECT_EQ(plan.algorithm_for(n), Algorithm::reference);
  plan.multiply(alpha, {Space::host, 43, n, n, B.data()}, beta, {Space::host, 57, n, n, C.data()});

  const auto rr = product(A.re, br, n), ii = product(A.im, bi, n), ri = product(A.re, bi, n), ir = product(A.im, br, n);
  for (std::size_t e = 0; e < C.size(); ++e) {
    const Complex ab(rr[e] - ii[e], ri[e] + ir[e]);
    const Complex want = alpha * ab + beta * C0[e];
    EXPECT_NEAR(C[e].real(), want.real(), 1e-13) << e;
    EXPECT_NEAR(C[e].imag(), want.imag(), 1e-13) << e;
  }

  // Single precision agrees with double to its rounding.
  spmm::HostCsr<std::complex<float>> Af;
  Af.rows = 57, Af.cols = 43, Af.row_offsets = A.whole.row_offsets, Af.col_indices = A.whole.col_indices;
  for (const Complex& v : A.whole.values) Af.values.push_back(std::complex<float>(v));
  std::vector<std::complex<float>> Bf(B.begin(), B.end()), Cf(C0.begin(), C0.end());
  spmm::make_reference_spmm(Af.view())->multiply(std::complex<float>(alpha), {Space::host, 43, n, n, Bf.data()},
                                                 std::complex<float>(beta), {Space::host, 57, n, n, Cf.data()});
  for (std::size_t e = 0; e < C.size(); ++e) EXPECT_LT(std::abs(Complex(Cf[e]) - C[e]), 1e-5) << e;
}

TEST(ReferenceSpmm, ComplexAgainstRealProducts) {
  for (std::int64_t n : {1, 3, 16}) check_width(n);
}

// beta = 0 never reads C: NaN there stays out of the result.
TEST(ReferenceSpmm, ComplexBetaZeroIgnoresC) {
  const Parts A = random_parts(20, 20, 3);
  std::vector<Complex> B(20 * 2, Complex(1.0, -1.0)), C(20 * 2, Complex(std::nan(""), std::nan("")));
  spmm::make_reference_spmm(A.whole.view())
      ->multiply(Complex(0.0, 1.0), {Space::host, 20, 2, 2, B.data()}, Complex(0.0), {Space::host, 20, 2, 2, C.data()});
  for (const Complex& c : C) EXPECT_TRUE(std::isfinite(c.real()) && std::isfinite(c.imag()));
}

}  // namespace
}  // namespace blockeigs::test
