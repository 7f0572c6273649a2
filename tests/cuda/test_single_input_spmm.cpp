// spmm::multiply_single_input (fp64 A and C, fp32 B) on the device against
// its host twin, on awkward shapes: widths 1 to 256 (the 4-float loads where
// B's rows allow them, single floats otherwise, several chunks a lane past
// 128), B with padded rows, C on odd offsets, empty rows, a row longer than
// a block's run and rows off the 64-row runs, NaN-filled C that must not be
// read, and C += A B. The bound for each entry is the row's: gamma_L
// sum |a| |b| with L its length (both sum in fp64 in the row's order, so the
// results differ only where one contracts to fma and the other does not).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "dense/memory.hpp"
#include "spmm/single_input_spmm.hpp"
#include "test_matrices.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

struct Shape {
  std::int64_t n, b_pad, c_offset;  // B's rows padded by b_pad; C's columns start at c_offset
};

class SingleInputSpmm : public test::GpuTest {};

TEST_F(SingleInputSpmm, DeviceMatchesTheHostLoops) {
  const dense::Context device = dense::Context::cuda(0);
  const dense::Context& host = test::host_context();
  // A power-law matrix (empty rows, one row of 3000 nonzeros) and a 3D Laplacian.
  const CsrRows power = test::power_law_matrix(4099, 3000, 5);
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 17, 13, 9, 7};
  const CsrRows laplace = io::generate_rows(cube, 0, io::generated_rows(cube));
  const Shape shapes[] = {{1, 0, 0},  {3, 1, 1},  {4, 0, 0},  {17, 3, 1},  {20, 0, 0},  {20, 1, 0},
                          {33, 0, 1}, {64, 0, 0}, {65, 2, 0}, {129, 0, 1}, {256, 0, 0}, {132, 0, 0}};
  for (const CsrRows* whole : {&power, &laplace}) {
    const spmm::HostCsr<double> csr = test::to_host_csr<double>(*whole);
    const spmm::CsrMatrix<double> on_device(Space::device, csr);
    const spmm::CsrMatrix<double> on_host(Space::host, csr);
    const std::int64_t rows = csr.rows, cols = csr.cols;
    for (const Shape& s : shapes)
      for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(testing::Message() << rows << " rows, width " << s.n << ", B padded by " << s.b_pad
                                        << ", C at column " << s.c_offset << (accumulate ? ", C += A B" : ""));
        const std::int64_t ldb = s.n + s.b_pad, ldc = s.n + s.c_offset + 1;
        std::vector<float> b(static_cast<std::size_t>(cols * ldb));
        for (std::int64_t i = 0; i < cols; ++i)
          for (std::int64_t j = 0; j < ldb; ++j)
            b[i * ldb + j] = j < s.n ? float(solver::hash_uniform(3, i, j)) : std::numeric_limits<float>::quiet_NaN();
        // C: NaN where it must not be read (beta 0), else values to add to.
        std::vector<double> c(static_cast<std::size_t>(rows * ldc));
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < ldc; ++j)
            c[i * ldc + j] = accumulate ? solver::hash_uniform(4, i, j) : std::numeric_limits<double>::quiet_NaN();
        std::vector<double> expected = c, got(c.size());
        spmm::multiply_single_input(host, on_host.view(), {Space::host, cols, s.n, ldb, b.data()},
                                    {Space::host, rows, s.n, ldc, expected.data() + s.c_offset}, accumulate);
        dense::Buffer<float> b_device(Space::device, b);
        dense::Buffer<double> c_device(Space::device, c);
        spmm::multiply_single_input(device, on_device.view(), {Space::device, cols, s.n, ldb, b_device.data()},
                                    {Space::device, rows, s.n, ldc, c_device.data() + s.c_offset}, accumulate);
        device.synchronize();
        dense::copy_bytes(got.data(), Space::host, c_device.data(), Space::device, sizeof(double) * got.size());
        const double eps = std::numeric_limits<double>::epsilon();
        for (std::int64_t i = 0; i < rows; ++i) {
          const std::int64_t length = csr.row_offsets[i + 1] - csr.row_offsets[i];
          double row_abs = 0;
          for (std::int64_t k = csr.row_offsets[i]; k < csr.row_offsets[i + 1]; ++k) row_abs += std::abs(csr.values[k]);
          const double bound = (length + 2) * eps * (row_abs + (accumulate ? 1 : 0)) * 1.01;
          for (std::int64_t j = 0; j < ldc; ++j) {
            const double g = got[i * ldc + j], e = expected[i * ldc + j];
            if (j < s.c_offset || j >= s.c_offset + s.n) {  // outside C: untouched
              ASSERT_TRUE(accumulate ? g == c[i * ldc + j] : std::isnan(g)) << "wrote (" << i << ", " << j << ")";
              continue;
            }
            ASSERT_FALSE(std::isnan(g)) << "(" << i << ", " << j << ")";
            ASSERT_LE(std::abs(g - e), bound) << "(" << i << ", " << j << "): " << g << " vs " << e;
          }
        }
      }
  }
}

}  // namespace
}  // namespace blockeigs
