// Context::warm_up, which solver contexts run at start-up so that a solve
// does not pay cuBLAS's set-up and the stream-ordered pool's first
// allocation: a no-op on the host, repeatable, and the context's stream and
// cuBLAS handle give the same Gram matrices after it as the host does. One
// MPI rank; the device case is skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>

#include "solver/blocks/block_ops.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

using Block = dense::DenseBlock<double>;

TEST(ContextWarmUpHost, IsANoOpOnTheHost) {
  const dense::Context host = dense::Context::host();
  host.warm_up();
  host.warm_up();
  EXPECT_EQ(host.space(), Space::host);
}

class ContextWarmUp : public test::GpuTest {};

TEST_F(ContextWarmUp, LeavesTheDeviceContextReadyForTheSolvers) {
  const dense::Context dev = dense::Context::cuda(0);
  dev.warm_up();
  dev.warm_up();  // the second call returns at once
  // Shapes of both Gram paths: the chunked cuBLAS products (wide) and the
  // tensor-core pass, with chunk tails (rows not a multiple of a chunk).
  struct Case {
    std::int64_t rows, k1, k2;
  };
  for (const Case c : {Case{70001, 60, 120}, Case{4099, 20, 20}, Case{3, 1, 1}}) {
    SCOPED_TRACE(testing::Message() << c.rows << " rows, " << c.k1 << " x " << c.k2);
    const Block Xh = test::random_block<double>(c.rows, c.k1, 7), Yh = test::random_block<double>(c.rows, c.k2, 8);
    Block Xd(Space::device, c.rows, c.k1), Yd(Space::device, c.rows, c.k2);
    solver::copy_block<double>(dev, Xh.cview(), Xd.view());
    solver::copy_block<double>(dev, Yh.cview(), Yd.view());
    const solver::HostMatrix expected =
        solver::gram<double>(test::host_context(), MPI_COMM_SELF, Xh.cview(), Yh.cview());
    const solver::HostMatrix got = solver::gram<double>(dev, MPI_COMM_SELF, Xd.cview(), Yd.cview());
    const double tol = 64 * 2.2e-16 * double(c.rows);  // sums of rows products of magnitude <= 1
    for (std::int64_t i = 0; i < c.k1; ++i)
      for (std::int64_t j = 0; j < c.k2; ++j)
        ASSERT_NEAR(got(i, j), expected(i, j), tol) << "(" << i << ", " << j << ")";
  }
}

}  // namespace
}  // namespace blockeigs
