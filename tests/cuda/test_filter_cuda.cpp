// Chebyshev-filtered subspace iteration on the device: the distributed
// operator's diagonal shift there against the host's (the filter's products),
// and the 100 smallest pairs of a 3D Laplacian with every block in device
// memory against the closed form and the host run. Skipped, visibly, where no
// GPU is visible. One MPI rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "io/generators/generators.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/mpi_environment.hpp"

namespace blockeigs {
namespace {

class FilterCuda : public test::GpuTest {};

io::GeneratorSpec laplacian_3d(std::int64_t n) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::laplacian_3d;
  spec.nx = spec.ny = spec.nz = n;
  spec.stencil = 7;
  return spec;
}

solver::DistributedOperator<double> operator_on(const dense::Context& context, const CsrRows& rows) {
  return {MPI_COMM_WORLD, context, rows, solver::RowPartition::balanced(rows.row_offsets, 1)};
}

TEST_F(FilterCuda, DiagonalShiftMatchesTheHost) {
  const io::GeneratorSpec spec = laplacian_3d(11);
  const CsrRows rows = io::generate_rows(spec, 0, io::generated_rows(spec));
  const dense::Context device = dense::Context::cuda(0), host = dense::Context::host();
  auto on_device = operator_on(device, rows);
  auto on_host = operator_on(host, rows);
  const std::int64_t m = rows.local_rows(), w = 5;
  std::vector<double> x(static_cast<std::size_t>(m * w));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.1 * double(i));
  dense::DenseBlock<double> xd(Space::device, m, w), yd(Space::device, m, w), xh(Space::host, m, w),
      yh(Space::host, m, w);
  dense::copy_bytes(xd.data(), Space::device, x.data(), Space::host, x.size() * sizeof(double));
  dense::copy_bytes(xh.data(), Space::host, x.data(), Space::host, x.size() * sizeof(double));
  for (const double shift : {-3.25, 0.0}) {
    ASSERT_TRUE(on_device.set_diagonal_shift(shift));
    ASSERT_TRUE(on_host.set_diagonal_shift(shift));
    on_device.apply(1.0, xd.cview(), 0.0, yd.view());
    on_host.apply(1.0, xh.cview(), 0.0, yh.view());
    const std::vector<double> got = solver::host_doubles<double>(yd.cview());
    for (std::int64_t i = 0; i < m * w; ++i)
      ASSERT_NEAR(got[i], yh.data()[i], 1e-12) << "shift " << shift << ", entry " << i;
  }
}

TEST_F(FilterCuda, HundredSmallestOnTheDevice) {
  const io::GeneratorSpec spec = laplacian_3d(16);
  const CsrRows rows = io::generate_rows(spec, 0, io::generated_rows(spec));
  const std::vector<double> exact = io::laplacian_eigenvalues(spec);
  const dense::Context device = dense::Context::cuda(0);
  auto op = operator_on(device, rows);
  solver::LobpcgOptions options;
  options.k = 100;
  options.tolerance = 1e-9;
  const solver::LobpcgResult<double> r = solver::chebyshev_filter_eigs<double>(op, options);
  EXPECT_TRUE(r.all_converged()) << r.iterations << " iterations";
  ASSERT_EQ(r.eigenvalues.size(), 100u);
  for (int j = 0; j < 100; ++j) EXPECT_LE(std::abs(r.eigenvalues[j] - exact[j]), 1e-9 * exact[j]) << "pair " << j;
  EXPECT_EQ(r.eigenvectors.space(), Space::device);
  EXPECT_GT(r.stats.filter_products, 0);
}

}  // namespace
}  // namespace blockeigs
