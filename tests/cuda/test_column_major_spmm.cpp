// spmm::multiply_column_major (PETSc's column-major blocks) on the device
// against its host twin, on awkward shapes: widths 1 to 40 (one pass of 8
// columns, several, a partial last one), leading dimensions past the rows,
// NaN-filled C that must not be read (beta 0) and C = alpha A B + beta C,
// matrices whose mean row length picks each group size (1 to 32 lanes a row),
// empty rows and a row of 3000 nonzeros. The bound for each entry is the
// row's: gamma_L sum |a| |b| (the sums differ in order for groups of lanes).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dense/memory.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "spmm/column_major_spmm.hpp"
#include "test_matrices.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

struct Case {
  std::int64_t n, pad;
  double alpha, beta;
};

std::vector<CsrRows> matrices() {
  std::vector<CsrRows> out;
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 17, 13, 9, 7};
  out.push_back(io::generate_rows(cube, 0, io::generated_rows(cube)));
  out.push_back(test::power_law_matrix(4099, 3000, 5));
  for (int per_row : {12, 24, 50, 100, 200}) {  // groups of 2, 4, 8, 16 and 32 lanes
    io::GeneratorSpec spd;
    spd.kind = io::GeneratorKind::random_spd;
    spd.n = 700;
    spd.nnz_per_row = per_row;
    spd.seed = static_cast<std::uint64_t>(per_row);
    out.push_back(io::generate_rows(spd, 0, io::generated_rows(spd)));
  }
  return out;
}

class ColumnMajorSpmm : public test::GpuTest {};

TEST_F(ColumnMajorSpmm, DeviceMatchesTheHostLoops) {
  const dense::Context device = dense::Context::cuda(0);
  const dense::Context& host = test::host_context();
  const Case cases[] = {{1, 0, 1, 0},  {3, 1, 1, 0},   {16, 0, 1, 0},  {17, 3, 2, -0.5},
                        {32, 0, 1, 1}, {33, 2, -1, 0}, {40, 1, 0.5, 2}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const CsrRows& whole : matrices()) {
    const spmm::HostCsr<double> csr = test::to_host_csr<double>(whole);
    const spmm::CsrMatrix<double> on_device(Space::device, csr), on_host(Space::host, csr);
    const std::int64_t rows = csr.rows, cols = csr.cols;
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << rows << " rows, mean row " << csr.view().mean_row_length() << ", width " << c.n
                                      << ", padding " << c.pad << ", alpha " << c.alpha << ", beta " << c.beta);
      const std::int64_t ldb = cols + c.pad, ldc = rows + c.pad;
      std::vector<double> b(static_cast<std::size_t>(ldb * c.n), nan), y(static_cast<std::size_t>(ldc * c.n), nan);
      for (std::int64_t j = 0; j < c.n; ++j) {
        for (std::int64_t i = 0; i < cols; ++i) b[i + j * ldb] = solver::hash_uniform(3, i, j);
        if (c.beta != 0)
          for (std::int64_t i = 0; i < rows; ++i) y[i + j * ldc] = solver::hash_uniform(4, i, j);
      }
      std::vector<double> expected = y, got(y.size());
      spmm::multiply_column_major(host, on_host.view(), c.alpha, {Space::host, cols, c.n, ldb, b.data()}, c.beta,
                                  {Space::host, rows, c.n, ldc, expected.data()});
      dense::Buffer<double> b_device(Space::device, b), y_device(Space::device, y);
      spmm::multiply_column_major(device, on_device.view(), c.alpha, {Space::device, cols, c.n, ldb, b_device.data()},
                                  c.beta, {Space::device, rows, c.n, ldc, y_device.data()});
      device.synchronize();
      dense::copy_bytes(got.data(), Space::host, y_device.data(), Space::device, sizeof(double) * got.size());
      const double eps = std::numeric_limits<double>::epsilon();
      for (std::int64_t i = 0; i < ldc; ++i) {
        const std::int64_t length = i < rows ? csr.row_offsets[i + 1] - csr.row_offsets[i] : 0;
        double row_abs = 0;
        for (std::int64_t e = i < rows ? csr.row_offsets[i] : 0; e < (i < rows ? csr.row_offsets[i + 1] : 0); ++e)
          row_abs += std::abs(csr.values[e]);
        const double bound = (length + 3) * eps * (std::abs(c.alpha) * row_abs + std::abs(c.beta)) * 1.01;
        for (std::int64_t j = 0; j < c.n; ++j) {
          const double g = got[i + j * ldc], e = expected[i + j * ldc];
          if (i >= rows) {  // padding: untouched
            ASSERT_TRUE(std::isnan(g)) << "wrote padding (" << i << ", " << j << ")";
            continue;
          }
          ASSERT_FALSE(std::isnan(g)) << "(" << i << ", " << j << ")";
          ASSERT_LE(std::abs(g - e), bound) << "(" << i << ", " << j << "): " << g << " vs " << e;
        }
      }
    }
  }
}

// The host twin against a plain column-by-column product, and its refusals.
TEST(ColumnMajorSpmmHost, HostLoopsAreTheProductAndRefuseBadShapes) {
  const dense::Context& host = test::host_context();
  const CsrRows whole = test::power_law_matrix(300, 200, 7);
  const spmm::HostCsr<double> csr = test::to_host_csr<double>(whole);
  const std::int64_t n = 5, ld = csr.rows + 2;
  std::vector<double> b(static_cast<std::size_t>(ld * n)), c(b.size(), 0.0);
  for (std::size_t e = 0; e < b.size(); ++e) b[e] = solver::hash_uniform(1, static_cast<std::int64_t>(e), 0);
  spmm::multiply_column_major(host, csr.view(), 1.0, {Space::host, csr.cols, n, ld, b.data()}, 0.0,
                              {Space::host, csr.rows, n, ld, c.data()});
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < csr.rows; ++i) {
      double want = 0;
      for (std::int64_t e = csr.row_offsets[i]; e < csr.row_offsets[i + 1]; ++e)
        want += csr.values[e] * b[csr.col_indices[e] + j * ld];
      EXPECT_DOUBLE_EQ(c[i + j * ld], want) << i << ", " << j;
    }
  EXPECT_THROW(spmm::multiply_column_major(host, csr.view(), 1.0, {Space::host, csr.cols, n, csr.cols - 1, b.data()},
                                           0.0, {Space::host, csr.rows, n, ld, c.data()}),
               Error);
  EXPECT_THROW(spmm::multiply_column_major(host, csr.view(), 1.0, {Space::host, csr.cols, n, ld, b.data()}, 0.0,
                                           {Space::host, csr.rows, n + 1, ld, c.data()}),
               Error);
}

}  // namespace
}  // namespace blockeigs
