// The narrow block updates in fp32 on the device (a block-eigs or block-cg run
// with `precision: fp32` keeps every block in float): the row-group kernel's
// float pairs up to 16 outputs and cuBLAS past them, against the host's
// float BLAS. Odd leading dimensions and odd widths next to NaN padding, in
// place and into new blocks. One MPI rank; skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "solver/blocks/block_ops.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using Block = dense::DenseBlock<float>;

// rows x cols in [-1, 1), ld even or odd, NaN past the block's columns.
Block padded(std::int64_t rows, std::int64_t cols, std::uint64_t seed, bool odd_ld) {
  const std::int64_t ld = (cols % 2 == 0) == odd_ld ? cols + 1 : cols + 2;
  Block b(Space::host, rows, cols, ld);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < ld; ++j)
      b.data()[i * ld + j] =
          j < cols ? static_cast<float>(solver::hash_uniform(seed, i, j)) : std::numeric_limits<float>::quiet_NaN();
  return b;
}

// Whole rows (padding included), so that the device block has the same NaN next to it.
Block copy_to(const dense::Context& context, Space space, const Block& b) {
  Block out(space, b.rows(), b.cols(), b.ld());
  solver::copy_block<float>(context, dense::ConstDenseView<float>{b.view().space, b.rows(), b.ld(), b.ld(), b.data()},
                            dense::DenseView<float>{space, b.rows(), b.ld(), b.ld(), out.data()});
  return out;
}

void expect_close(const Block& device_result_on_host, const Block& host, double tol) {
  for (std::int64_t i = 0; i < host.rows(); ++i)
    for (std::int64_t j = 0; j < host.cols(); ++j) {
      const float a = device_result_on_host.data()[i * device_result_on_host.ld() + j];
      ASSERT_FALSE(std::isnan(a)) << "(" << i << ", " << j << ")";
      ASSERT_NEAR(a, host.data()[i * host.ld() + j], tol) << "(" << i << ", " << j << ")";
    }
}

class DeviceBlockOpsFloat : public test::GpuTest {};

TEST_F(DeviceBlockOpsFloat, NarrowUpdatesMatchTheHost) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const double u = std::numeric_limits<float>::epsilon();
  struct Case {
    std::int64_t rows, k1, k2;
    bool odd_ld;
  };
  const Case cases[] = {{1, 1, 1, false},     {5000, 7, 9, true},   {4097, 32, 16, false},
                        {2049, 31, 15, true}, {3001, 64, 16, true}, {1000, 20, 2, false},
                        {999, 47, 13, true},  {999, 33, 17, true},  {2000, 60, 20, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.k1 << " -> " << c.k2 << (c.odd_ld ? ", odd ld" : ""));
    const HostMatrix S = test::random_matrix(c.k1, c.k2, 41);
    // k1 + 2 terms of magnitude <= 1.5 (and 0.5), each side rounded in float.
    const double tol = 2 * (c.k1 + 2) * u * (1.5 * double(c.k1) + 1);
    const Block Xh = padded(c.rows, c.k1, 42, c.odd_ld);
    const Block Xd = copy_to(dev, Space::device, Xh);
    for (float beta : {0.0f, -0.5f}) {
      Block Yh = padded(c.rows, c.k2, 43, c.odd_ld);
      Block Yd = copy_to(dev, Space::device, Yh);
      solver::block_update<float>(host, 1.5f, Xh.cview(), S, beta, Yh.view());
      solver::block_update<float>(dev, 1.5f, Xd.cview(), S, beta, Yd.view());
      expect_close(copy_to(dev, Space::host, Yd), Yh, tol);
    }
    {  // Y = 1.5 X S - 0.5 Z in place on Z
      Block Zh = padded(c.rows, c.k2, 44, c.odd_ld);
      Block Zd = copy_to(dev, Space::device, Zh);
      solver::block_combine<float>(host, 1.5f, Xh.cview(), S, -0.5f, Zh.cview(), Zh.view());
      solver::block_combine<float>(dev, 1.5f, Xd.cview(), S, -0.5f, Zd.cview(), Zd.view());
      expect_close(copy_to(dev, Space::host, Zd), Zh, tol);
    }
    if (c.k2 <= c.k1) {  // W(:, :k2) = W S in place
      Block Wh = padded(c.rows, c.k1, 45, c.odd_ld);
      Block Wd = copy_to(dev, Space::device, Wh);
      Block scratch_h(Space::host, c.rows, c.k1), scratch_d(Space::device, c.rows, c.k1);
      solver::transform_in_place<float>(host, Wh.view(), S, scratch_h.view());
      solver::transform_in_place<float>(dev, Wd.view(), S, scratch_d.view());
      expect_close(copy_to(dev, Space::host, Wd), Wh, tol);
    }
  }
}

}  // namespace
}  // namespace blockeigs
