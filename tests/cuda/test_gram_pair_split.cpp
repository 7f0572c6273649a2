// start_gram_pair with its left side in two views (SplitColumns: LOBPCG's
// [X P] and a residual block Z apart) against the same left side in one
// view: the same bits where the one-pass kernel takes the shape (it only
// reads the columns from elsewhere), the same results to rounding on the
// other paths (a product for each view), on the host (in CI) and on the
// device. Heads of even and odd width (the kernel's 16- and 8-byte copies),
// tails compact or with a wider stride, the wide variant, shapes past the
// kernel, and no rows.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_contexts.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using Block = dense::DenseBlock<double>;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Whole rows, padding included, in `space`.
Block copy_to(const dense::Context& context, Space space, const Block& b) {
  Block out(space, b.rows(), b.cols(), b.ld());
  solver::copy_block<double>(context, dense::ConstDenseView<double>{b.view().space, b.rows(), b.ld(), b.ld(), b.data()},
                             dense::DenseView<double>{space, b.rows(), b.ld(), b.ld(), out.data()});
  return out;
}

// rows x cols of hashed values at leading dimension cols + pad, NaN in the padding.
Block hashed(std::int64_t rows, std::int64_t cols, std::int64_t pad, std::uint64_t seed) {
  Block b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols + pad; ++j)
      b.data()[i * (cols + pad) + j] = j < cols ? solver::hash_uniform(seed, i, j) : nan;
  return b;
}

TEST(GramPairSplitX, MatchesOneView) {
  struct SplitCase {
    std::int64_t rows, head, tail, ky1, ky2, tail_pad;
  };
  const SplitCase cases[] = {{4099, 40, 20, 20, 20, 0},  // LOBPCG's [X P | Z]^T [Z A Z] at block 20
                             {4099, 40, 13, 13, 13, 2},
                             {1000, 11, 4, 4, 4, 1},
                             {1000, 12, 4, 4, 4, 0},
                             {70001, 40, 20, 20, 20, 0},
                             {2050, 9, 6, 6, 0, 3},
                             {1, 3, 1, 1, 1, 0},
                             {517, 44, 22, 22, 22, 0},
                             {500, 48, 24, 24, 24, 1},
                             {0, 8, 4, 4, 4, 0},
                             // past the kernel: 100 columns of X, 66 of [Y1 Y2]
                             {300, 80, 20, 10, 10, 0},
                             {300, 20, 10, 33, 33, 1}};
  const test::TestContexts test_contexts;
  const std::vector<const dense::Context*> contexts = test_contexts.all();
  for (const SplitCase& c : cases) {
    const std::int64_t kx = c.head + c.tail;
    SCOPED_TRACE(testing::Message() << c.rows << " rows, X " << c.head << " + " << c.tail << " columns, Y " << c.ky1
                                    << " + " << c.ky2);
    const Block whole = hashed(c.rows, kx, 0, 41), y1 = hashed(c.rows, c.ky1, 1, 42), y2 = hashed(c.rows, c.ky2, 0, 43);
    Block head = hashed(c.rows, c.head, 0, 0), tail = hashed(c.rows, c.tail, c.tail_pad, 0);
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < kx; ++j) {
        const double v = whole.data()[i * kx + j];
        if (j < c.head)
          head.data()[i * head.ld() + j] = v;
        else
          tail.data()[i * tail.ld() + j - c.head] = v;
      }
    for (const dense::Context* on : contexts) {
      const dense::Context& context = *on;
      const Space space = context.space();
      SCOPED_TRACE(space == Space::host ? "host" : "device");
      const Block whole_in = copy_to(context, space, whole), head_in = copy_to(context, space, head),
                  tail_in = copy_to(context, space, tail), y1_in = copy_to(context, space, y1),
                  y2_in = copy_to(context, space, y2);
      auto view = [&](const Block& b) {
        return dense::ConstDenseView<double>{space, c.rows, b.cols(), b.ld(), b.data()};
      };
      const HostMatrix one =
          solver::start_gram_pair<double>(context, MPI_COMM_WORLD, view(whole_in), view(y1_in), view(y2_in)).finish();
      const HostMatrix two = solver::start_gram_pair<double>(context, MPI_COMM_WORLD,
                                                             solver::SplitColumns<double>(view(head_in), view(tail_in)),
                                                             view(y1_in), view(y2_in))
                                 .finish();
      ASSERT_EQ(two.rows(), kx);
      ASSERT_EQ(two.cols(), c.ky1 + c.ky2);
      if (space == Space::device && kx <= 96 && c.ky1 + c.ky2 <= 64) {
        EXPECT_EQ(0, std::memcmp(one.data(), two.data(), sizeof(double) * kx * (c.ky1 + c.ky2)));
        continue;
      }
      const double tol = 4 * double(c.rows + 1) * std::numeric_limits<double>::epsilon();
      for (std::int64_t i = 0; i < kx; ++i)
        for (std::int64_t j = 0; j < c.ky1 + c.ky2; ++j) ASSERT_NEAR(two(i, j), one(i, j), tol) << i << ", " << j;
    }
  }
}

}  // namespace
}  // namespace blockeigs
