// LOBPCG's fused Ritz update on the device (solver/blocks/cuda/ritz_update.cu)
// against the host's separate updates and residual pass: Y = S C, AY = AS C,
// R = AY(:, :nb) - Y(:, :nb) Lambda and the column norms, on awkward shapes
// (one row, row counts off the kernel's 16-row steps, 1 to 64 inputs and 1 to
// 48 outputs for the narrow variant, past either for the wide one up to 96
// and 64 (LOBPCG's blocks of 21-32), odd column offsets and leading dimensions
// as well as 16-byte aligned rows (odd input counts among them, with NaN right
// after S and AS), NaN in every column the call must not read or write,
// enough rows that each warp takes many steps) and shapes past the kernel (the
// fallback), with R's columns in order, reversed, or odd ones first (as
// LOBPCG places its active residuals). One MPI rank; skipped where no GPU is
// visible.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/ritz_update.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_contexts.hpp"
#include "tests/support/test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using Block = dense::DenseBlock<double>;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

struct Case {
  std::int64_t rows, ns, m, nb;
  bool aligned = false;  // every row of S and AS 16-byte aligned (the kernel's 16-byte copies)
};

// Whole rows, padding included, from one space to the other.
Block copy_to(const dense::Context& context, Space space, const Block& b) {
  Block out(space, b.rows(), b.cols(), b.ld());
  solver::copy_block<double>(context, dense::ConstDenseView<double>{b.view().space, b.rows(), b.ld(), b.ld(), b.data()},
                             dense::DenseView<double>{space, b.rows(), b.ld(), b.ld(), out.data()});
  return out;
}

// The inputs: [NaN | S | NaN | AS | NaN] per row (S at an odd column and an
// odd leading dimension; aligned: [S | NaN | AS | NaN] with S and AS at even
// columns and an even leading dimension), and the outputs' block:
// [NaN | Y | NaN | AY | R | NaN], all NaN to start.
struct Layout {
  std::int64_t s0, as0, in_ld, y0, ay0, r0, out_ld;
  explicit Layout(const Case& c)
      : s0(c.aligned ? 0 : 1),
        as0(c.aligned ? (c.ns + 2) / 2 * 2 : c.ns + 2),
        in_ld(c.aligned ? (as0 + c.ns + 2) / 2 * 2 : 2 * c.ns + 3),
        y0(1),
        ay0(c.m + 2),
        r0(2 * c.m + 2),
        out_ld(2 * c.m + c.nb + 3) {}
};

struct Outputs {
  Block block;
  solver::ResidualNorms norms;
};

Outputs run(const dense::Context& context, const Case& c, const Block& host_in, const HostMatrix& C,
            const std::vector<double>& lambda, const std::vector<std::int64_t>& position) {
  const Layout l(c);
  const Space space = context.space();
  const Block in = copy_to(context, space, host_in);
  Block out_host(Space::host, c.rows, l.out_ld, l.out_ld);
  for (std::int64_t i = 0; i < c.rows * l.out_ld; ++i) out_host.data()[i] = nan;
  Block out = copy_to(context, space, out_host);
  auto view = [&](const Block& b, std::int64_t first, std::int64_t cols, std::int64_t ld) {
    return dense::DenseView<double>{space, c.rows, cols, ld, const_cast<double*>(b.data()) + first};
  };
  Outputs result;
  result.norms = solver::ritz_update<double>(
      context, MPI_COMM_WORLD, view(in, l.s0, c.ns, l.in_ld), view(in, l.as0, c.ns, l.in_ld), C, lambda,
      view(out, l.y0, c.m, l.out_ld), view(out, l.ay0, c.m, l.out_ld), view(out, l.r0, c.nb, l.out_ld), position);
  result.block = copy_to(context, Space::host, out);
  return result;
}

class DeviceRitzUpdate : public test::GpuTest {};

TEST_F(DeviceRitzUpdate, MatchesTheSeparateOperationsOnTheHost) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const Case cases[] = {{1, 1, 1, 1},
                        {17, 5, 3, 2},
                        {1000, 13, 9, 9},
                        {2050, 33, 17, 7},
                        {4099, 60, 40, 20},
                        {4099, 59, 39, 20},
                        {70001, 64, 48, 24},
                        {300, 64, 8, 8},
                        {129, 2, 48, 1},
                        {0, 20, 20, 20},
                        {1, 1, 1, 1, true},
                        {33, 7, 5, 3, true},
                        {4099, 59, 39, 20, true},
                        {4099, 64, 48, 24, true},
                        {300001, 60, 40, 20, true},
                        {70001, 37, 29, 20, true},
                        // the wide variant
                        {500, 20, 49, 20},
                        {4099, 66, 44, 22},
                        {70001, 84, 56, 28, true},
                        {3001, 96, 64, 32},
                        {517, 65, 8, 8},
                        {129, 96, 1, 1},
                        {17, 90, 60, 30, true},
                        {300001, 78, 52, 26, true},
                        // past the kernel
                        {500, 20, 65, 20},
                        {500, 97, 40, 20}};
  int index = 0;
  for (const Case& c : cases) {
    // R's placement: in order, reversed, or odd residuals first.
    const int order = index++ % 3;
    const std::vector<std::int64_t> position = test::residual_placement(c.nb, order);
    SCOPED_TRACE(testing::Message() << c.rows << " rows, " << c.ns << " -> " << c.m << ", nb " << c.nb << ", R's order "
                                    << order << (c.aligned ? ", aligned rows" : ""));
    const Layout l(c);
    Block in(Space::host, c.rows, l.in_ld, l.in_ld);
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < l.in_ld; ++j) {
        const bool s = j >= l.s0 && j < l.s0 + c.ns, as = j >= l.as0 && j < l.as0 + c.ns;
        in.data()[i * l.in_ld + j] = s || as ? solver::hash_uniform(11, i, j) : nan;
      }
    HostMatrix C(c.ns, c.m);
    for (std::int64_t i = 0; i < c.ns; ++i)
      for (std::int64_t j = 0; j < c.m; ++j) C(i, j) = solver::hash_uniform(12, i, j);
    std::vector<double> lambda;
    for (std::int64_t j = 0; j < c.nb; ++j) lambda.push_back(solver::hash_uniform(13, j, 0) * 4);

    const Outputs expected = run(host, c, in, C, lambda, position);
    const Outputs got = run(dev, c, in, C, lambda, position);
    // |entries| < ns (inputs and coefficients in [-1, 1)); R adds |lambda| < 4 times Y.
    const double eps = std::numeric_limits<double>::epsilon(), tol = 8 * c.ns * eps * 5;
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < l.out_ld; ++j) {
        const double a = got.block.data()[i * l.out_ld + j], b = expected.block.data()[i * l.out_ld + j];
        const bool written = (j >= l.y0 && j < l.y0 + c.m) || (j >= l.ay0 && j < l.ay0 + c.m + c.nb);
        if (!written) {
          ASSERT_TRUE(std::isnan(a)) << "wrote outside its columns at (" << i << ", " << j << ")";
          continue;
        }
        ASSERT_FALSE(std::isnan(a)) << "(" << i << ", " << j << ")";
        ASSERT_NEAR(a, b, tol) << "(" << i << ", " << j << ")";
      }
    ASSERT_EQ(got.norms.residual.size(), std::size_t(c.nb));
    for (std::int64_t j = 0; j < c.nb; ++j) {
      EXPECT_NEAR(got.norms.residual[j], expected.norms.residual[j], 1e-12 * (1 + expected.norms.residual[j]));
      EXPECT_NEAR(got.norms.x[j], expected.norms.x[j], 1e-12 * (1 + expected.norms.x[j]));
    }
    // The same bits again: the partial sums' order depends on the rows alone.
    const Outputs again = run(dev, c, in, C, lambda, position);
    EXPECT_EQ(0, std::memcmp(again.norms.residual.data(), got.norms.residual.data(), c.nb * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(again.norms.x.data(), got.norms.x.data(), c.nb * sizeof(double)));
  }
}

// A X implied (ImpliedAX): A X = X Theta + R, the residuals being columns of
// S after the basis in any order, and the next A X not stored. Checked
// against the stored form with A X formed on the host from that definition:
// Y, the next A P, R and the norms, on the host (the separate updates, so
// CI checks the coefficients) and on the device (the staged kernel up to 64
// inputs and 48 outputs, the separate updates past it), with AY's first nb
// columns left alone by the device kernels. The stored form with store_ax false is checked the same way.
struct ImpliedCase {
  std::int64_t rows, nb, np, nz;  // [X P Z] of nb + np + nz columns; the residual slot holds nb
  bool aligned = false;           // S and A S rows 16-byte aligned
};

TEST(RitzUpdateImpliedAX, MatchesTheStoredForm) {
  const ImpliedCase cases[] = {{1, 1, 0, 1},
                               {17, 3, 2, 3},
                               {1000, 7, 5, 4},
                               {4099, 20, 20, 20, true},
                               {4099, 20, 20, 13, true},
                               {4099, 20, 0, 20, true},
                               {70001, 20, 24, 20},
                               {2050, 9, 11, 6},
                               {33, 16, 16, 16, true},
                               {300001, 20, 20, 20, true},
                               // past the staged kernel: the separate updates on the device too
                               {500, 24, 24, 24},
                               {500, 21, 23, 21, true},
                               {70001, 26, 26, 26, true},
                               {33, 30, 30, 30},
                               {4099, 32, 32, 32, true},
                               {2050, 28, 26, 19}};
  const test::TestContexts test_contexts;
  const std::vector<const dense::Context*> contexts = test_contexts.all();
  int index = 0;
  for (const ImpliedCase& c : cases) {
    const std::int64_t nb = c.nb, ns = c.nb + c.np + c.nz, first = c.nb + c.np, s_cols = first + nb;
    const std::int64_t m = std::min<std::int64_t>(2 * nb, ns), pad = c.aligned ? 0 : 1;
    const std::int64_t ld = c.aligned ? (s_cols + 1) / 2 * 2 : s_cols + 3;
    SCOPED_TRACE(testing::Message() << c.rows << " rows, nb " << nb << ", np " << c.np << ", nz " << c.nz
                                    << (c.aligned ? ", aligned rows" : ""));
    // S = [X P R-slot] (Z is the slot's first nz columns), A S = [NaN | A P A Z].
    Block S(Space::host, c.rows, ld, ld), AS(Space::host, c.rows, ld, ld), AS_stored(Space::host, c.rows, ns, ns);
    for (std::int64_t i = 0; i < c.rows * ld; ++i) S.data()[i] = AS.data()[i] = nan;
    for (std::int64_t i = 0; i < c.rows; ++i) {
      for (std::int64_t j = 0; j < s_cols; ++j) S.data()[i * ld + pad + j] = solver::hash_uniform(21, i, j);
      for (std::int64_t j = nb; j < ns; ++j) AS.data()[i * ld + pad + j] = solver::hash_uniform(22, i, j);
    }
    solver::ImpliedAX implied;
    implied.first = first;
    const int order = index++ % 3;  // residuals in order, reversed, or odd ones first
    implied.position = test::residual_placement(nb, order);
    for (std::int64_t j = 0; j < nb; ++j) implied.theta.push_back(solver::hash_uniform(23, j, 0) * 4);
    // The stored form's A S: A X from the definition, then A P and A Z.
    for (std::int64_t i = 0; i < c.rows; ++i) {
      const double* s_row = S.data() + i * ld + pad;
      for (std::int64_t j = 0; j < nb; ++j)
        AS_stored.data()[i * ns + j] = implied.theta[j] * s_row[j] + s_row[first + implied.position[j]];
      for (std::int64_t j = nb; j < ns; ++j) AS_stored.data()[i * ns + j] = AS.data()[i * ld + pad + j];
    }
    HostMatrix C(ns, m);
    for (std::int64_t i = 0; i < ns; ++i)
      for (std::int64_t j = 0; j < m; ++j) C(i, j) = solver::hash_uniform(24, i, j);
    std::vector<double> lambda;
    for (std::int64_t j = 0; j < nb; ++j) lambda.push_back(solver::hash_uniform(25, j, 0) * 4);
    std::vector<std::int64_t> out_position(static_cast<std::size_t>(nb));
    for (std::int64_t j = 0; j < nb; ++j) out_position[j] = (j + 1) % nb;

    // Outputs [Y | AY | R] in one block, NaN to start.
    const std::int64_t out_ld = 2 * m + nb;
    auto outputs = [&](const dense::Context& context, const Block& s, const Block& as, std::int64_t s_ld,
                       std::int64_t s_first, std::int64_t s_width, const solver::ImpliedAX* ax, bool store_ax) {
      const Space space = context.space();
      Block out_host(Space::host, c.rows, out_ld, out_ld);
      for (std::int64_t i = 0; i < c.rows * out_ld; ++i) out_host.data()[i] = nan;
      const Block s_in = copy_to(context, space, s), as_in = copy_to(context, space, as);
      const Block out = copy_to(context, space, out_host);
      auto view = [&](const Block& b, std::int64_t at, std::int64_t cols, std::int64_t ldb) {
        return dense::DenseView<double>{space, c.rows, cols, ldb, const_cast<double*>(b.data()) + at};
      };
      Outputs result;
      result.norms = solver::ritz_update<double>(context, MPI_COMM_WORLD, view(s_in, s_first, s_width, s_ld),
                                                 view(as_in, s_first, ns, s_ld), C, lambda, view(out, 0, m, out_ld),
                                                 view(out, m, m, out_ld), view(out, 2 * m, nb, out_ld), out_position,
                                                 {}, ax, store_ax);
      result.block = copy_to(context, Space::host, out);
      return result;
    };
    // The reference: the stored form on the host, S cut to the basis.
    Block S_basis(Space::host, c.rows, ns, ns);
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < ns; ++j) S_basis.data()[i * ns + j] = S.data()[i * ld + pad + j];
    const Outputs expected = outputs(test_contexts.host(), S_basis, AS_stored, ns, 0, ns, nullptr, true);

    for (const dense::Context* on : contexts) {
      const dense::Context& context = *on;
      for (const bool implied_form : {true, false}) {
        SCOPED_TRACE(testing::Message() << (context.space() == Space::host ? "host" : "device")
                                        << (implied_form ? ", A X implied" : ", A X stored, not stored after"));
        const Outputs got = implied_form ? outputs(context, S, AS, ld, pad, s_cols, &implied, false)
                                         : outputs(context, S_basis, AS_stored, ns, 0, ns, nullptr, false);
        const double eps = std::numeric_limits<double>::epsilon(), tol = 8 * (s_cols + 4) * eps * 10;
        const bool kernel = context.space() == Space::device &&
                            (implied_form ? solver::ritz_update_prefers_implied_ax<double>(context, s_cols, ns, m, nb)
                                          : ns <= 96 && m <= 64);
        for (std::int64_t i = 0; i < c.rows; ++i)
          for (std::int64_t j = 0; j < out_ld; ++j) {
            const double a = got.block.data()[i * out_ld + j], b = expected.block.data()[i * out_ld + j];
            if (j >= m && j < m + nb && (kernel || std::isnan(a))) {  // the next A X: the kernels leave it
              if (kernel) {
                ASSERT_TRUE(std::isnan(a)) << "wrote A X at (" << i << ", " << j << ")";
              }
              continue;
            }
            ASSERT_FALSE(std::isnan(a)) << "(" << i << ", " << j << ")";
            ASSERT_NEAR(a, b, tol) << "(" << i << ", " << j << ")";
          }
        for (std::int64_t j = 0; j < nb; ++j) {
          EXPECT_NEAR(got.norms.residual[j], expected.norms.residual[j], 1e-12 * (1 + expected.norms.residual[j]));
          EXPECT_NEAR(got.norms.x[j], expected.norms.x[j], 1e-12 * (1 + expected.norms.x[j]));
        }
      }
    }
  }
}

// A S in two views (SplitColumns: LOBPCG's A [X P] and its compact A W),
// and then S too ([X P] and the residuals Z after them), against the same
// blocks in one view: the same bits where the one-pass kernel takes the
// shape (it only reads the columns from elsewhere), the same results to
// rounding on the other paths (a product for each view), on the host (in
// CI) and the device. Heads of even and odd width (the kernel's 16- and
// 8-byte copies), tails compact or with a wider stride, A X implied (its
// residuals in S's tail) and stored, the wide kernel, and a shape past the
// kernels.
TEST(RitzUpdateSplitViews, MatchesOneView) {
  struct SplitCase {
    std::int64_t rows, nb, np, nz, head, tail_pad;
    bool implied;
  };
  const SplitCase cases[] = {{4099, 20, 20, 20, 40, 0, true},   {4099, 20, 20, 13, 40, 2, true},
                             {1000, 7, 5, 4, 12, 0, true},      {1000, 7, 5, 4, 11, 1, false},
                             {70001, 20, 20, 20, 40, 0, false}, {2050, 9, 11, 6, 9, 0, false},
                             {1, 3, 2, 1, 4, 0, true},          {517, 22, 22, 22, 44, 0, false},
                             {500, 24, 24, 24, 48, 0, true},    {4099, 26, 26, 26, 52, 2, true}};
  const test::TestContexts test_contexts;
  const std::vector<const dense::Context*> contexts = test_contexts.all();
  for (const SplitCase& c : cases) {
    const std::int64_t nb = c.nb, ns = nb + c.np + c.nz, first = nb + c.np, s_cols = c.implied ? first + nb : ns;
    const std::int64_t m = std::min<std::int64_t>(2 * nb, ns), tail = ns - c.head, tail_ld = tail + c.tail_pad;
    SCOPED_TRACE(testing::Message() << c.rows << " rows, nb " << nb << ", A S " << c.head << " + " << tail << " columns"
                                    << (c.implied ? ", A X implied" : ""));
    // S split where LOBPCG splits it: [X P] and the residuals after them.
    const std::int64_t s_tail = s_cols - first, s_tail_ld = s_tail + c.tail_pad;
    Block S(Space::host, c.rows, s_cols, s_cols), whole(Space::host, c.rows, ns, ns);
    Block s_head_block(Space::host, c.rows, first, first), s_rest(Space::host, c.rows, s_tail_ld, s_tail_ld);
    Block head(Space::host, c.rows, c.head, c.head), rest(Space::host, c.rows, tail_ld, tail_ld);
    for (std::int64_t i = 0; i < c.rows; ++i) {
      for (std::int64_t j = 0; j < s_cols; ++j) {
        const double v = solver::hash_uniform(31, i, j);
        S.data()[i * s_cols + j] = v;
        if (j < first)
          s_head_block.data()[i * first + j] = v;
        else
          s_rest.data()[i * s_tail_ld + j - first] = v;
      }
      for (std::int64_t j = s_tail; j < s_tail_ld; ++j) s_rest.data()[i * s_tail_ld + j] = nan;
      for (std::int64_t j = 0; j < ns; ++j) {
        const double v = c.implied && j < nb ? nan : solver::hash_uniform(32, i, j);  // A X implied: not read
        whole.data()[i * ns + j] = v;
        if (j < c.head)
          head.data()[i * c.head + j] = v;
        else
          rest.data()[i * tail_ld + j - c.head] = v;
      }
      for (std::int64_t j = tail; j < tail_ld; ++j) rest.data()[i * tail_ld + j] = nan;
    }
    solver::ImpliedAX implied;
    implied.first = first;
    for (std::int64_t j = 0; j < nb; ++j) {
      implied.position.push_back(nb - 1 - j);
      implied.theta.push_back(solver::hash_uniform(33, j, 0) * 4);
    }
    HostMatrix C(ns, m);
    for (std::int64_t i = 0; i < ns; ++i)
      for (std::int64_t j = 0; j < m; ++j) C(i, j) = solver::hash_uniform(34, i, j);
    std::vector<double> lambda;
    std::vector<std::int64_t> position;
    for (std::int64_t j = 0; j < nb; ++j) {
      lambda.push_back(solver::hash_uniform(35, j, 0) * 4);
      position.push_back((j + 2) % nb);
    }
    const std::int64_t out_ld = 2 * m + nb;
    for (const dense::Context* on : contexts) {
      const dense::Context& context = *on;
      const Space space = context.space();
      SCOPED_TRACE(space == Space::host ? "host" : "device");
      const Block s_in = copy_to(context, space, S), whole_in = copy_to(context, space, whole);
      const Block head_in = copy_to(context, space, head), rest_in = copy_to(context, space, rest);
      const Block s_head_in = copy_to(context, space, s_head_block), s_rest_in = copy_to(context, space, s_rest);
      auto view = [&](const Block& b, std::int64_t at, std::int64_t cols) {
        return dense::ConstDenseView<double>{space, c.rows, cols, b.ld(), b.data() + at};
      };
      auto update = [&](const solver::SplitColumns<double>& Sv, const solver::SplitColumns<double>& AS) {
        Block out_host(Space::host, c.rows, out_ld, out_ld);
        for (std::int64_t i = 0; i < c.rows * out_ld; ++i) out_host.data()[i] = nan;
        Block out = copy_to(context, space, out_host);
        auto out_view = [&](std::int64_t at, std::int64_t cols) {
          return dense::DenseView<double>{space, c.rows, cols, out_ld, out.data() + at};
        };
        Outputs result;
        result.norms =
            solver::ritz_update<double>(context, MPI_COMM_WORLD, Sv, AS, C, lambda, out_view(0, m), out_view(m, m),
                                        out_view(2 * m, nb), position, {}, c.implied ? &implied : nullptr, !c.implied);
        result.block = copy_to(context, Space::host, out);
        return result;
      };
      const solver::SplitColumns<double> as_split(view(head_in, 0, c.head), view(rest_in, 0, tail));
      const Outputs one = update(view(s_in, 0, s_cols), view(whole_in, 0, ns));
      for (const bool split_s : {false, true}) {
        SCOPED_TRACE(split_s ? "S and A S split" : "A S split");
        const solver::SplitColumns<double> s_views =
            split_s ? solver::SplitColumns<double>(view(s_head_in, 0, first), view(s_rest_in, 0, s_tail))
                    : solver::SplitColumns<double>(view(s_in, 0, s_cols));
        const Outputs two = update(s_views, as_split);
        const bool kernel = space == Space::device &&
                            (c.implied ? solver::ritz_update_prefers_implied_ax<double>(context, s_cols, ns, m, nb)
                                       : ns <= 96 && m <= 64);
        const double tol = 8 * (ns + 4) * std::numeric_limits<double>::epsilon() * 10;
        if (kernel) {
          // NaN never compares equal: compare the bits, NaN where one view left it included.
          EXPECT_EQ(0, std::memcmp(one.block.data(), two.block.data(), sizeof(double) * c.rows * out_ld));
          EXPECT_EQ(0, std::memcmp(one.norms.residual.data(), two.norms.residual.data(), nb * sizeof(double)));
          EXPECT_EQ(0, std::memcmp(one.norms.x.data(), two.norms.x.data(), nb * sizeof(double)));
          continue;
        }
        for (std::int64_t e = 0; e < c.rows * out_ld; ++e) {
          const double a = two.block.data()[e], b = one.block.data()[e];
          ASSERT_EQ(std::isnan(a), std::isnan(b)) << "entry " << e;
          if (!std::isnan(a)) {
            ASSERT_NEAR(a, b, tol) << "entry " << e;
          }
        }
        for (std::int64_t j = 0; j < nb; ++j) {
          EXPECT_NEAR(two.norms.residual[j], one.norms.residual[j], 1e-12 * (1 + one.norms.residual[j]));
          EXPECT_NEAR(two.norms.x[j], one.norms.x[j], 1e-12 * (1 + one.norms.x[j]));
        }
      }
    }
  }
}

}  // namespace
}  // namespace blockeigs
