// LOBPCG's residual block in fp32 beside fp64 blocks (search_block_ops.hpp):
// the mixed Gram pair and Ritz update against the fp64 operations on the
// same values widened, on the host (the conversion fallback, in CI) and on
// the device (the one-pass kernels staging fp32 rows and widening them in
// shared memory, and the fallback past them). Widening is exact and the
// kernels sum in the same order either way, so the products, Y, A Y and the
// rounded R must have the same bits; only the residual norms may differ in
// rounding (their partial sums are grouped by a grid that the fp32 rows'
// shared memory changes). Awkward shapes: one row, none, row counts off the
// 16-row steps, odd widths (the 4-byte copies) and even ones (8-byte),
// padded and compact tails, Y1 the tail's own columns or a block apart, and
// shapes past the narrow kernels.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_contexts.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
template <class T>
using Block = dense::DenseBlock<T>;

// rows x cols of hashed values in [-1, 1) at leading dimension cols + pad,
// NaN in the padding, in `space` (fp32 blocks get the values rounded).
template <class T>
Block<T> hashed(const dense::Context& context, std::int64_t rows, std::int64_t cols, std::int64_t pad,
                std::uint64_t seed) {
  Block<T> host(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols + pad; ++j)
      host.data()[i * (cols + pad) + j] =
          j < cols ? T(solver::hash_uniform(seed, i, j)) : std::numeric_limits<T>::quiet_NaN();
  if (context.space() == Space::host) return host;
  Block<T> out(context.space(), rows, cols, cols + pad);
  dense::copy_bytes(out.data(), context.space(), host.data(), Space::host,
                    sizeof(T) * static_cast<std::size_t>(rows * (cols + pad)));
  return out;
}

template <class T>
dense::ConstDenseView<T> cview(const Block<T>& b, std::int64_t cols = -1) {
  return {b.space(), b.rows(), cols < 0 ? b.cols() : cols, b.ld(), b.data()};
}

// An fp32 block's values in fp64, same shape and padding.
Block<double> widened(const dense::Context& context, const Block<float>& b) {
  Block<double> out(b.space(), b.rows(), b.cols(), b.ld());
  solver::convert_block(context, cview(b), out.view());
  return out;
}

template <class T>
std::vector<T> to_host(const Block<T>& b) {
  std::vector<T> out(static_cast<std::size_t>(b.rows() * b.ld()));
  dense::copy_bytes(out.data(), Space::host, b.data(), b.space(), sizeof(T) * out.size());
  return out;
}

TEST(SearchGramPair, Fp32TailMatchesTheWidenedFp64Product) {
  struct GramCase {
    std::int64_t rows, head, tail, ky1, ky2, tail_pad;
    bool y1_in_tail;  // Y1 is the tail's first ky1 columns (LOBPCG's Z), else a block apart
  };
  const GramCase cases[] = {{4099, 40, 20, 20, 20, 0, true},  // [X P | Z]^T [Z A Z] at block 20
                            {70001, 40, 20, 20, 20, 0, true},
                            {4099, 40, 13, 13, 13, 3, true},
                            {1000, 11, 4, 4, 4, 1, true},
                            {1000, 12, 4, 4, 4, 0, false},
                            {2050, 9, 6, 6, 0, 3, true},
                            {1, 3, 1, 1, 1, 0, true},
                            {17, 44, 20, 20, 20, 0, true},
                            {0, 8, 4, 4, 4, 0, true},
                            {1000, 40, 20, 0, 20, 0, true},  // no Y1: S^T A Z alone
                            // past the narrow kernel: the conversion fallback
                            {300, 48, 24, 24, 24, 1, true},
                            {300, 20, 10, 33, 10, 0, false}};
  const test::TestContexts test_contexts;
  for (const dense::Context* on : test_contexts.all()) {
    const dense::Context& context = *on;
    SCOPED_TRACE(context.space() == Space::host ? "host" : "device");
    for (const GramCase& c : cases) {
      SCOPED_TRACE(testing::Message() << c.rows << " rows, X " << c.head << " + " << c.tail << " (fp32), Y " << c.ky1
                                      << " (fp32) + " << c.ky2);
      const Block<double> head = hashed<double>(context, c.rows, c.head, 0, 1);
      const Block<float> tail = hashed<float>(context, c.rows, c.tail, c.tail_pad, 2);
      const Block<float> apart = hashed<float>(context, c.rows, c.ky1, 1, 3);
      const Block<double> y2 = hashed<double>(context, c.rows, c.ky2, 0, 4);
      const dense::ConstDenseView<float> y1 = c.y1_in_tail ? cview(tail, c.ky1) : cview(apart);
      const HostMatrix mixed =
          solver::start_gram_pair(context, MPI_COMM_WORLD,
                                  solver::SplitColumns<double, float>(cview(head), cview(tail)), y1, cview(y2))
              .finish();
      const Block<double> tail64 = widened(context, tail), apart64 = widened(context, apart);
      const HostMatrix fp64 = solver::start_gram_pair<double>(
                                  context, MPI_COMM_WORLD, solver::SplitColumns<double>(cview(head), cview(tail64)),
                                  c.y1_in_tail ? cview(tail64, c.ky1) : cview(apart64), cview(y2))
                                  .finish();
      ASSERT_EQ(mixed.rows(), c.head + c.tail);
      ASSERT_EQ(mixed.cols(), c.ky1 + c.ky2);
      EXPECT_EQ(0, std::memcmp(mixed.data(), fp64.data(), sizeof(double) * mixed.values().size()));
    }
  }
}

// LOBPCG's Ritz update with A X implied: S = [X P | Z], Z (the last
// residuals, in the tail's columns `position` after [X P]) in fp32, A S =
// [A [X P] | A Z] in fp64, R written in fp32.
TEST(SearchRitzUpdate, Fp32TailMatchesTheWidenedFp64Update) {
  struct UpdateCase {
    std::int64_t rows, q, z, za, m, nb, tail_pad;
  };
  const UpdateCase cases[] = {{4099, 40, 20, 20, 40, 20, 0},  // LOBPCG's step at block 20 (k = 16)
                              {70001, 40, 20, 13, 40, 20, 0},
                              {300001, 40, 20, 20, 40, 20, 0},
                              {1000, 24, 12, 12, 24, 12, 0},
                              {2050, 21, 11, 7, 20, 11, 1},
                              {17, 8, 4, 4, 8, 4, 3},
                              {1, 4, 2, 2, 4, 2, 0},
                              {0, 40, 20, 20, 40, 20, 0},
                              {4099, 20, 20, 20, 20, 20, 0},
                              // past the staged kernel (more than 48 outputs): the fallback
                              {500, 52, 12, 12, 52, 12, 0}};
  const test::TestContexts test_contexts;
  for (const dense::Context* on : test_contexts.all()) {
    const dense::Context& context = *on;
    const Space space = context.space();
    SCOPED_TRACE(space == Space::host ? "host" : "device");
    int index = 0;
    for (const UpdateCase& c : cases) {
      SCOPED_TRACE(testing::Message() << c.rows << " rows, [X P] " << c.q << " + Z " << c.z << " (fp32), A Z " << c.za
                                      << ", " << c.m << " outputs, nb " << c.nb);
      const std::int64_t ns = c.q + c.z, nv = c.q + c.za;
      const Block<double> xp = hashed<double>(context, c.rows, c.q, 0, 5),
                          axp = hashed<double>(context, c.rows, c.q, 0, 6),
                          az = hashed<double>(context, c.rows, c.za, 0, 7);
      const Block<float> z = hashed<float>(context, c.rows, c.z, c.tail_pad, 8);
      HostMatrix C(nv, c.m);
      for (std::int64_t i = 0; i < nv; ++i)
        for (std::int64_t j = 0; j < c.m; ++j) C(i, j) = solver::hash_uniform(9, i, j);
      std::vector<double> lambda, theta;
      for (std::int64_t j = 0; j < c.nb; ++j) {
        lambda.push_back(4 * solver::hash_uniform(10, j, 0));
        theta.push_back(4 * solver::hash_uniform(11, j, 0));
      }
      // Residual j at Z's column position[j]: in order, reversed, or odd ones first.
      const std::vector<std::int64_t> position = test::residual_placement(c.nb, index++ % 3);
      std::vector<std::int64_t> r_position(position.size());
      for (std::int64_t j = 0; j < c.nb; ++j) r_position[j] = (j + 1) % c.nb;
      const solver::ImpliedAX implied{theta, c.q, position};

      // Outputs: Y, A Y (its first nb columns not written) and R, NaN to start.
      auto outputs = [&] {
        struct {
          Block<double> y, ay;
        } out{hashed<double>(context, c.rows, c.m, 0, 12), hashed<double>(context, c.rows, c.m, 0, 12)};
        return out;
      };
      auto mixed_out = outputs(), fp64_out = outputs();
      Block<float> r32 = hashed<float>(context, c.rows, c.nb, 1, 13);
      Block<double> r64 = hashed<double>(context, c.rows, c.nb, 1, 13);
      const solver::SplitColumns<double> as(cview(axp), cview(az));
      const solver::ResidualNorms mixed = solver::ritz_update(
          context, MPI_COMM_WORLD, solver::SplitColumns<double, float>(cview(xp), cview(z)), as, C, lambda,
          mixed_out.y.view(), mixed_out.ay.view(), r32.view(), r_position, {}, &implied, false);
      const Block<double> z64 = widened(context, z);
      const solver::ResidualNorms fp64 = solver::ritz_update<double>(
          context, MPI_COMM_WORLD, solver::SplitColumns<double>(cview(xp), cview(z64)), as, C, lambda,
          fp64_out.y.view(), fp64_out.ay.view(), r64.view(), r_position, {}, &implied, false);
      (void)ns;

      const std::vector<double> y_a = to_host(mixed_out.y), y_b = to_host(fp64_out.y);
      EXPECT_EQ(0, std::memcmp(y_a.data(), y_b.data(), sizeof(double) * y_a.size()));
      // A Y: its columns from nb on (the first nb are A X, described by R).
      const std::vector<double> ay_a = to_host(mixed_out.ay), ay_b = to_host(fp64_out.ay);
      for (std::int64_t i = 0; i < c.rows; ++i)
        for (std::int64_t j = c.nb; j < c.m; ++j)
          ASSERT_EQ(ay_a[i * c.m + j], ay_b[i * c.m + j]) << "A Y(" << i << ", " << j << ")";
      // R: the fp64 residuals rounded once; the padding column untouched.
      const std::vector<float> r_a = to_host(r32);
      const std::vector<double> r_b = to_host(r64);
      for (std::int64_t i = 0; i < c.rows; ++i) {
        for (std::int64_t j = 0; j < c.nb; ++j)
          ASSERT_EQ(r_a[i * (c.nb + 1) + j], float(r_b[i * (c.nb + 1) + j])) << "R(" << i << ", " << j << ")";
        ASSERT_TRUE(std::isnan(r_a[i * (c.nb + 1) + c.nb])) << "wrote past R at row " << i;
      }
      ASSERT_EQ(mixed.residual.size(), std::size_t(c.nb));
      for (std::int64_t j = 0; j < c.nb; ++j) {
        EXPECT_NEAR(mixed.residual[j], fp64.residual[j], 1e-13 * (1 + fp64.residual[j])) << j;
        EXPECT_NEAR(mixed.x[j], fp64.x[j], 1e-13 * (1 + fp64.x[j])) << j;
      }
    }
  }
}

}  // namespace
}  // namespace blockeigs
