// spmm::Plan on the device with the cuSPARSE algorithm (and `automatic`)
// against the host reference: the GPU path that works before our kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/generators/generators.hpp"
#include "spmm/plan.hpp"
#include "test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

template <class T>
void compare_with_reference(const spmm::HostCsr<T>& host, std::int64_t n, std::int64_t ld, T alpha, T beta,
                            Algorithm algorithm) {
  SCOPED_TRACE("n " + std::to_string(n) + ", ld " + std::to_string(ld) + ", beta " + std::to_string(beta));
  auto device = dense::Context::cuda(0);
  auto cpu = dense::Context::host();
  spmm::CsrMatrix<T> A(Space::device, host);
  auto B = test::random_block<T>(host.cols, n, 1, ld);
  auto C0 = test::random_block<T>(host.rows, n, 2, ld);
  if (beta == T(0)) std::fill(C0.data(), C0.data() + C0.rows() * C0.ld(), std::numeric_limits<T>::quiet_NaN());

  dense::DenseBlock<T> Bd(Space::device, B.rows(), n, ld), Cd(Space::device, C0.rows(), n, ld);
  dense::copy_bytes(Bd.data(), Space::device, B.data(), Space::host, sizeof(T) * B.rows() * ld);
  dense::copy_bytes(Cd.data(), Space::device, C0.data(), Space::host, sizeof(T) * C0.rows() * ld);
  spmm::Plan<T> plan(device, A.view(), algorithm);
  plan.multiply(alpha, Bd.view(), beta, Cd.view());
  device.synchronize();
  std::vector<T> got = Cd.buffer().to_host();

  spmm::Plan<T> reference(cpu, host.view(), Algorithm::reference);
  reference.multiply(alpha, B.view(), beta, C0.view());
  const double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t i = 0; i < host.rows; ++i) {
    const double L = host.row_offsets[i + 1] - host.row_offsets[i] + 2.0;
    double abs_sum = 0;  // |alpha| sum |a_ik| max|b| + |beta| |c|, bounded by 1 per |b|, |c|
    for (std::int32_t k = host.row_offsets[i]; k < host.row_offsets[i + 1]; ++k) abs_sum += std::abs(host.values[k]);
    const double bound = 2 * (L * eps / (1 - L * eps)) * (std::abs(alpha) * abs_sum + std::abs(beta)) + eps;
    for (std::int64_t j = 0; j < n; ++j) {
      const double g = got[i * ld + j], r = C0.data()[i * ld + j];
      ASSERT_TRUE(std::abs(g - r) <= bound) << "row " << i << " col " << j << ": " << g << " vs " << r;
    }
  }
}

spmm::HostCsr<double> laplacian() {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, 9, 7, 5, 7};
  return test::to_host_csr<double>(io::generate_rows(spec, 0, io::generated_rows(spec)));
}

class PlanCusparse : public test::GpuTest {};

TEST_F(PlanCusparse, MatchesReferenceDouble) {
  const auto A = laplacian();
  for (std::int64_t n : {1, 3, 16, 33, 64})
    for (double beta : {0.0, 0.5}) compare_with_reference<double>(A, n, n, 1.5, beta, Algorithm::cusparse);
  compare_with_reference<double>(A, 5, 8, 1.0, 0.0, Algorithm::cusparse);  // ld > n
}

TEST_F(PlanCusparse, MatchesReferenceFloat) {
  const auto Ad = laplacian();
  spmm::HostCsr<float> A{Ad.rows, Ad.cols, Ad.row_offsets, Ad.col_indices, {Ad.values.begin(), Ad.values.end()}};
  for (std::int64_t n : {1, 4, 17, 128}) compare_with_reference<float>(A, n, n, 1.0f, 0.0f, Algorithm::cusparse);
}

TEST_F(PlanCusparse, AutomaticAndEmptyMatrix) {
  compare_with_reference<double>(laplacian(), 8, 8, 1.0, 0.0, Algorithm::automatic);
  spmm::HostCsr<double> empty;  // 4 x 6 with no entries: C = beta C
  empty.rows = 4;
  empty.cols = 6;
  empty.row_offsets.assign(5, 0);
  compare_with_reference<double>(empty, 3, 3, 1.0, 0.0, Algorithm::cusparse);
  compare_with_reference<double>(empty, 3, 3, 1.0, 2.0, Algorithm::cusparse);
}

}  // namespace
}  // namespace blockeigs
