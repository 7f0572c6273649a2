// Complex blocks on the device (one rank): the block operations against plain
// complex-double loops (tests/support/complex_block_checks.hpp), the same on
// the host's results, and cuSOLVER's Hermitian eigensolver and Cholesky
// inverse against their contracts and LAPACK's values. Skipped, visibly,
// where no GPU is visible.
#include <gtest/gtest.h>

#include <complex>

#include "solver/blocks/cuda/device_cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"
#include "tests/support/complex_block_checks.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/mpi_environment.hpp"

namespace blockeigs {
namespace {

template <class T>
class ComplexBlockOpsCuda : public test::GpuTest {};
using ComplexTypes = testing::Types<std::complex<double>, std::complex<float>>;
TYPED_TEST_SUITE(ComplexBlockOpsCuda, ComplexTypes);

TYPED_TEST(ComplexBlockOpsCuda, Reductions) {
  const dense::Context device = dense::Context::cuda(0);
  // Rows past the Gram's chunks (2048) and the sums' (1024), with a tail.
  for (const std::int64_t n : {0, 1, 37, 5001, 70001})
    test::check_complex_reductions<TypeParam>(device, solver::RowPartition::uniform(n, 1));
  // Complex double Gram matrices go through the real tall-skinny kernel on the values' parts up to 48 x 32
  // columns (a few columns of X against many of Y too, as CholQR2's locked columns against the active ones),
  // cuBLAS's batched products beyond.
  for (auto [k1, k2] : {std::pair{48, 32}, {49, 3}, {6, 33}, {3, 20}, {4, 32}, {33, 49}})
    test::check_complex_reductions<TypeParam>(device, solver::RowPartition::uniform(5001, 1), k1, k2);
}

TYPED_TEST(ComplexBlockOpsCuda, LocalUpdates) {
  const dense::Context device = dense::Context::cuda(0);
  // Doubled widths in the real row-group kernel (up to 32 x 8) and the fp64 tensor-core one (up to 32 x 24),
  // and beyond them (cuBLAS).
  for (auto [n, k1, k2] : {std::tuple{0, 3, 2},
                           {1, 1, 1},
                           {37, 5, 3},
                           {4099, 12, 8},
                           {3000, 16, 16},
                           {513, 21, 13},
                           {129, 33, 40},
                           {4099, 60, 20}})
    test::check_complex_updates<TypeParam>(device, n, k1, k2);
}

class HermitianDenseCuda : public test::GpuTest {};

TEST_F(HermitianDenseCuda, EigenAndCholeskyMatchTheirContracts) {
  const dense::Context device = dense::Context::cuda(0);
  solver::DeviceSymmetricEigen eigen(device);
  solver::DeviceCholeskyInverse cholesky(device);
  for (const std::int64_t n : {1, 9, 200, 450}) {
    SCOPED_TRACE(n);
    const solver::ComplexHostMatrix M = test::random_hermitian(n, 70 + n, -0.2);
    const solver::HermitianEigen e = eigen(M, n / 4, n - n / 4);
    test::expect_hermitian_eigenpairs(M, e, n / 4);
    const std::vector<double> lapack = solver::lapack_hermitian_eigen(M, 0, 0).values;
    for (std::int64_t j = 0; j < n; ++j) EXPECT_NEAR(e.values[j], lapack[j], 1e-12 * double(n));
    const solver::ComplexHostMatrix G = test::random_hermitian(n, 90 + n, 0.1);
    solver::ComplexHostMatrix inverse;
    ASSERT_TRUE(cholesky(G, inverse));
    test::expect_cholesky_inverse(G, inverse);
    // The real problems still take the real path after a complex one.
    const solver::HostMatrix R = [&] {
      solver::HostMatrix out(n, n);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) out(i, j) = G(i, j).real();
      return out;
    }();
    solver::HostMatrix real_inverse;
    EXPECT_TRUE(cholesky(R, real_inverse));
  }
  solver::ComplexHostMatrix inverse;
  EXPECT_FALSE(cholesky(test::random_hermitian(6, 3, -10.0), inverse));
}

}  // namespace
}  // namespace blockeigs
