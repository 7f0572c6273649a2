// The Chebyshev preconditioner's device passes against their host twins
// (chebyshev_steps.hpp: with and without the diagonals, with and without
// writing Q back, padded leading dimensions), and the whole preconditioner
// on the device against the host on a Laplacian, both ends, with Jacobi.
// One MPI rank; skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "io/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/chebyshev_steps.hpp"
#include "spmm/memory.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/mpi_environment.hpp"

namespace blockeigs {
namespace {

using Block = spmm::DenseBlock<double>;

#define SKIP_WITHOUT_GPU()                                                            \
  if (spmm::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the device path is not tested here"

Block random_host(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t pad) {
  Block b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < b.ld(); ++j) b.data()[i * b.ld() + j] = solver::hash_uniform(seed, i, j);
  return b;
}

// The whole rows, padding included.
Block moved(const spmm::Context& ctx, const Block& b, Space to) {
  Block out(to, b.rows(), b.cols(), b.ld());
  solver::copy_block<double>(ctx, spmm::ConstDenseView<double>{b.space(), b.rows(), b.ld(), b.ld(), b.data()},
                             spmm::DenseView<double>{to, b.rows(), b.ld(), b.ld(), out.data()});
  return out;
}

void expect_same(const spmm::Context& dev, const Block& device, const Block& host) {
  const Block back = moved(dev, device, Space::host);
  for (std::int64_t i = 0; i < host.rows(); ++i)
    for (std::int64_t j = 0; j < host.ld(); ++j) {
      const double a = back.data()[i * back.ld() + j], b = host.data()[i * host.ld() + j];
      ASSERT_NEAR(a, b, 1e-14 * (1 + std::abs(b))) << "(" << i << ", " << j << ")";
    }
}

TEST(ChebyshevCuda, PassesMatchTheHost) {
  SKIP_WITHOUT_GPU();
  const spmm::Context dev = spmm::Context::cuda(0), host = spmm::Context::host();
  for (std::int64_t rows : {1, 777, 5000})
    for (std::int64_t cols : {1, 7, 16, 33})
      for (bool diagonals : {false, true})
        for (bool write_q : {false, true}) {
          const std::int64_t pad = cols % 3;
          std::vector<double> d(rows), dinv(rows);
          for (std::int64_t i = 0; i < rows; ++i) {
            d[i] = 1.5 + solver::hash_uniform(9, i, 0);
            dinv[i] = 1 / d[i];
          }
          spmm::Buffer<double> d_dev(Space::device, d), dinv_dev(Space::device, dinv);
          Block R = random_host(rows, cols, 1, pad), Q = random_host(rows, cols, 2, pad),
                E = random_host(rows, cols, 3, pad), W = random_host(rows, cols, 4, pad);
          Block Rd = moved(dev, R, Space::device), Qd = moved(dev, Q, Space::device),
                Ed = moved(dev, E, Space::device), Wd = moved(dev, W, Space::device);
          const double* dh = diagonals ? d.data() : nullptr;
          const double* ih = diagonals ? dinv.data() : nullptr;
          solver::chebyshev_start(host, 0.3, ih, R.cview(), Q.view(), E.view(), W.view());
          solver::chebyshev_start(dev, 0.3, diagonals ? dinv_dev.data() : nullptr, Rd.cview(), Qd.view(),
                                  Ed.view(), Wd.view());
          // Fresh Q for the step, so that write_q shows.
          Q = random_host(rows, cols, 5, pad);
          Qd = moved(dev, Q, Space::device);
          solver::chebyshev_step(host, 0.7, 0.4, -1.3, dh, ih, write_q, Q.view(), E.view(), W.view());
          solver::chebyshev_step(dev, 0.7, 0.4, -1.3, diagonals ? d_dev.data() : nullptr,
                                 diagonals ? dinv_dev.data() : nullptr, write_q, Qd.view(), Ed.view(), Wd.view());
          dev.synchronize();
          expect_same(dev, Qd, Q);
          expect_same(dev, Ed, E);
          expect_same(dev, Wd, W);
        }
}

TEST(ChebyshevCuda, PreconditionerMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  const io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, 30, 20, 1, 5};
  const io::CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const auto partition = solver::RowPartition::uniform(whole.global_rows, 1);
  test::CsrTestOperator<double> Ah(MPI_COMM_WORLD, spmm::Context::host(), whole, partition);
  test::CsrTestOperator<double> Ad(MPI_COMM_WORLD, spmm::Context::cuda(0), whole, partition);
  for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
    solver::ChebyshevOptions o;
    o.degree = 8;
    o.jacobi = true;
    o.end = end;
    solver::ChebyshevPreconditioner<double> Mh(Ah, o), Md(Ad, o);
    EXPECT_NEAR(Mh.interval().b, Md.interval().b, 1e-12 * Mh.interval().b);
    const Block R = random_host(whole.global_rows, 12, 6, 0);
    Block W(Space::host, R.rows(), 12);
    Mh.apply(R.cview(), W.view());
    const Block Rd = moved(Ad.context(), R, Space::device);
    Block Wd(Space::device, R.rows(), 12);
    Md.apply(Rd.cview(), Wd.view());
    Ad.context().synchronize();
    const Block back = moved(Ad.context(), Wd, Space::host);
    double scale = 0;
    for (std::int64_t i = 0; i < R.rows() * 12; ++i) scale = std::max(scale, std::abs(W.data()[i]));
    for (std::int64_t i = 0; i < R.rows() * 12; ++i) ASSERT_NEAR(back.data()[i], W.data()[i], 1e-12 * scale);
  }
}

}  // namespace
}  // namespace blockeigs
