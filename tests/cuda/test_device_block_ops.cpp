// The device path's block operations (cuBLAS and our kernels) on device
// blocks against the host ones: every operation on small and odd shapes, the
// narrow kernels' row-group and tensor-core shapes, combine_pair on
// overlapping and adjacent inputs, and the Gram products in flight. Skipped,
// visibly, where no GPU is visible. One MPI rank.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dense/memory.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "tests/support/device_blocks.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using test::expect_close;
using test::nan_host;
using test::random_host;
using test::to_device;
using test::to_device_padded;
using test::to_host;

struct Shape {
  std::int64_t rows, k1, k2, pad;
};
// Small and odd shapes, and the narrow-block kernels' cases: many row chunks
// with a tail, widths that are not multiples of their 4-column tiles, the
// widest they take (32) and wider (cuBLAS and a scratch block).
const Shape shapes[] = {{0, 3, 2, 0},      {1, 1, 1, 0},       {17, 5, 3, 2},      {129, 33, 8, 1},
                        {5000, 7, 65, 3},  {10000, 16, 16, 0}, {70001, 20, 20, 1}, {4099, 60, 20, 2},
                        {3000, 33, 64, 0}, {2050, 2, 31, 1},   {4000, 32, 32, 0}};

class DeviceBlockOps : public test::GpuTest {};

TEST_F(DeviceBlockOps, MatchTheHostOnes) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const double u = std::numeric_limits<double>::epsilon();
  for (const Shape& s : shapes) {
    SCOPED_TRACE(testing::Message() << s.rows << " x " << s.k1 << " / " << s.k2);
    const auto Xh = random_host(s.rows, s.k1, 1, s.pad), Yh = random_host(s.rows, s.k2, 2, s.pad + 1);
    const auto Xd = to_device(dev, Xh), Yd = to_device(dev, Yh);
    // Sums of `rows` products of entries in [-1, 1): each side within (rows + 1) u rows.
    const double dot_tol = 2 * (s.rows + 1) * u * double(std::max<std::int64_t>(s.rows, 1));

    const HostMatrix Gh = solver::gram<double>(host, MPI_COMM_WORLD, Xh.cview(), Yh.cview());
    const HostMatrix Gd = solver::gram<double>(dev, MPI_COMM_WORLD, Xd.cview(), Yd.cview());
    for (std::size_t i = 0; i < Gh.values().size(); ++i) EXPECT_NEAR(Gd.values()[i], Gh.values()[i], dot_tol);
    const HostMatrix Sh = solver::gram<double>(host, MPI_COMM_WORLD, Xh.cview());
    const HostMatrix Sd = solver::gram<double>(dev, MPI_COMM_WORLD, Xd.cview());
    for (std::int64_t a = 0; a < s.k1; ++a)
      for (std::int64_t b = 0; b < s.k1; ++b) {
        EXPECT_EQ(Sd(a, b), Sd(b, a));
        EXPECT_NEAR(Sd(a, b), Sh(a, b), dot_tol);
      }
    const auto nh = solver::column_norms<double>(host, MPI_COMM_WORLD, Yh.cview());
    const auto nd = solver::column_norms<double>(dev, MPI_COMM_WORLD, Yd.cview());
    for (std::int64_t j = 0; j < s.k2; ++j) EXPECT_NEAR(nd[j], nh[j], dot_tol);
    EXPECT_EQ(nd, solver::column_norms<double>(dev, MPI_COMM_WORLD, Yd.cview()));  // deterministic

    const HostMatrix S = test::random_matrix(s.k1, s.k2, 3);
    for (double beta : {0.0, -0.5}) {
      auto Uh = beta == 0 ? nan_host(s.rows, s.k2, 1) : random_host(s.rows, s.k2, 4, 1);
      auto Ud = to_device(dev, Uh);
      solver::block_update<double>(host, 1.5, Xh.cview(), S, beta, Uh.view());
      solver::block_update<double>(dev, 1.5, Xd.cview(), S, beta, Ud.view());
      // k1 + 1 terms of magnitude <= 1.5 (and 0.5): each side within (k1 + 2) u (1.5 k1 + 1).
      expect_close(to_host(dev, Ud), Uh, 2 * (s.k1 + 2) * u * (1.5 * double(s.k1) + 1));
    }

    // Y = 1.5 X S - 0.5 Z into a NaN-filled block, then in place on Z.
    const double combine_tol = 2 * (s.k1 + 2) * u * (1.5 * double(s.k1) + 1);
    {
      auto Zh = random_host(s.rows, s.k2, 5, 2);
      auto Zd = to_device(dev, Zh);
      auto Ch = nan_host(s.rows, s.k2, 1);
      auto Cd = to_device(dev, Ch);
      solver::block_combine<double>(host, 1.5, Xh.cview(), S, -0.5, Zh.cview(), Ch.view());
      solver::block_combine<double>(dev, 1.5, Xd.cview(), S, -0.5, Zd.cview(), Cd.view());
      expect_close(to_host(dev, Cd), Ch, combine_tol);
      solver::block_combine<double>(host, 1.5, Xh.cview(), S, -0.5, Zh.cview(), Zh.view());
      solver::block_combine<double>(dev, 1.5, Xd.cview(), S, -0.5, Zd.cview(), Zd.view());
      expect_close(to_host(dev, Zd), Zh, combine_tol);
    }
    // W(:, :kept) = W T in place, kept <= W's columns; the rest of W untouched.
    {
      const std::int64_t kept = std::min(s.k1, s.k2);
      const HostMatrix Tm = test::random_matrix(s.k1, kept, 6);
      auto Wh = random_host(s.rows, s.k1, 7, s.pad);
      auto Wd = to_device(dev, Wh);
      auto scratch_h = nan_host(s.rows, s.k1, 0);
      auto scratch_d = to_device(dev, scratch_h);
      solver::transform_in_place<double>(host, Wh.view(), Tm, scratch_h.view());
      solver::transform_in_place<double>(dev, Wd.view(), Tm, scratch_d.view());
      expect_close(to_host(dev, Wd), Wh, 2 * (s.k1 + 1) * u * double(s.k1));
    }

    std::vector<double> alpha(static_cast<std::size_t>(s.k2)), scale(alpha.size());
    for (std::int64_t j = 0; j < s.k2; ++j) alpha[j] = 0.5 - 0.1 * double(j), scale[j] = 1.0 + double(j);
    auto Ah = nan_host(s.rows, s.k2, 2);
    auto Ad = to_device(dev, Ah);
    solver::axpby<double>(host, 2.0, Yh.cview(), 0.0, Ah.view());
    solver::axpby<double>(dev, 2.0, Yd.cview(), 0.0, Ad.view());
    solver::column_axpby<double>(host, alpha, Yh.cview(), -1.0, Ah.view());
    solver::column_axpby<double>(dev, alpha, Yd.cview(), -1.0, Ad.view());
    solver::scale_columns<double>(host, scale, Ah.view());
    solver::scale_columns<double>(dev, scale, Ad.view());
    // Element-wise: a few roundings each (the device may fuse a multiply-add).
    expect_close(to_host(dev, Ad), Ah, 0.0, 8 * u);

    // LOBPCG's residuals: R = Y - X diag(alpha) for the first k1 columns, and norms.
    {
      const std::int64_t k = std::min(s.k1, s.k2);
      const dense::ConstDenseView<double> xh = solver::column_range(Xh.cview(), 0, k),
                                          yh = solver::column_range(Yh.cview(), 0, k);
      const dense::ConstDenseView<double> xd = solver::column_range(Xd.cview(), 0, k),
                                          yd = solver::column_range(Yd.cview(), 0, k);
      const std::vector<double> lambda(alpha.begin(), alpha.begin() + k);
      auto Eh = nan_host(s.rows, k, 3);
      auto Ed = to_device(dev, Eh);
      const auto res_h = solver::eigen_residuals<double>(host, MPI_COMM_WORLD, xh, yh, lambda, Eh.view());
      const auto res_d = solver::eigen_residuals<double>(dev, MPI_COMM_WORLD, xd, yd, lambda, Ed.view());
      expect_close(to_host(dev, Ed), Eh, 4 * u * (1 + 0.1 * double(k)));  // |lambda| <= 0.5 + 0.1 k
      for (std::int64_t j = 0; j < k; ++j) {
        EXPECT_NEAR(res_d.residual[j], res_h.residual[j], dot_tol);
        EXPECT_NEAR(res_d.x[j], res_h.x[j], dot_tol);
      }
    }

    // Every third column, and all but the first (over 32 columns: chunks).
    for (const std::int64_t stride : {3, 1}) {
      std::vector<std::int64_t> keep;
      for (std::int64_t j = 1; j < s.k2; j += stride) keep.push_back(j);
      auto Kh = random_host(s.rows, s.k2, 5, 1);
      auto Kd = to_device(dev, Kh);
      solver::keep_columns<double>(host, Kh.view(), keep);
      solver::keep_columns<double>(dev, Kd.view(), keep);
      expect_close(to_host(dev, Kd), Kh, 0.0);
    }

    // Reversed in place (over 32 columns: through a copy).
    {
      std::vector<std::int64_t> reversed;
      for (std::int64_t j = s.k2 - 1; j >= 0; --j) reversed.push_back(j);
      auto Kh = random_host(s.rows, s.k2, 6, 1);
      auto Kd = to_device(dev, Kh);
      solver::permute_columns<double>(host, Kh.view(), reversed);
      solver::permute_columns<double>(dev, Kd.view(), reversed);
      expect_close(to_host(dev, Kd), Kh, 0.0);
    }

    std::vector<std::int64_t> pick;
    for (std::int64_t j = s.k2 - 1; j >= 0; j -= 2) pick.push_back(j);
    auto Ph = nan_host(s.rows, std::int64_t(pick.size()), 0);
    auto Pd = to_device(dev, Ph);
    solver::select_columns<double>(host, Yh.cview(), pick, Ph.view());
    solver::select_columns<double>(dev, Yd.cview(), pick, Pd.view());
    expect_close(to_host(dev, Pd), Ph, 0.0);

    std::vector<double> diag(static_cast<std::size_t>(s.rows));
    for (std::int64_t i = 0; i < s.rows; ++i) diag[i] = 0.5 + double(i % 5);
    dense::Buffer<double> diag_d(Space::device, diag);
    auto Dh = nan_host(s.rows, s.k2, 0);
    auto Dd = to_device(dev, Dh);
    solver::apply_diagonal<double>(host, diag.data(), Yh.cview(), Dh.view());
    solver::apply_diagonal<double>(dev, diag_d.data(), Yd.cview(), Dd.view());
    expect_close(to_host(dev, Dd), Dh, 0.0);

    auto Rh = nan_host(s.rows, s.k2, 1);
    auto Rd = to_device(dev, Rh);
    solver::fill_random<double>(host, Rh.view(), 9, 100, 7);
    solver::fill_random<double>(dev, Rd.view(), 9, 100, 7);
    const auto back = to_host(dev, Rd);
    for (std::int64_t i = 0; i < s.rows; ++i)
      for (std::int64_t j = 0; j < s.k2; ++j) ASSERT_EQ(back.view()(i, j), Rh.view()(i, j));  // same hash, same bits
    // Rows drawn by their global index (scattered, reversed here).
    std::vector<std::int64_t> rows(static_cast<std::size_t>(s.rows));
    for (std::int64_t i = 0; i < s.rows; ++i) rows[i] = 3 * (s.rows - i) + 11;
    const dense::Buffer<std::int64_t> rows_d(Space::device, rows);
    solver::fill_random_rows<double>(host, Rh.view(), 9, rows.data(), 7);
    solver::fill_random_rows<double>(dev, Rd.view(), 9, rows_d.data(), 7);
    const auto scattered = to_host(dev, Rd);
    for (std::int64_t i = 0; i < s.rows; ++i)
      for (std::int64_t j = 0; j < s.k2; ++j) ASSERT_EQ(scattered.view()(i, j), Rh.view()(i, j));

    // Copies across spaces.
    auto Ch = nan_host(s.rows, s.k2, 3);
    solver::copy_block<double>(dev, Yd.cview(), Ch.view());
    expect_close(Ch, Yh, 0.0);
  }
}

// Shapes for the narrow kernels: row-group (k1 <= 64, k2 <= 16, every input
// count it rounds to), fp64 tensor cores (17 <= k2 <= 48, every tile count,
// row counts that leave partial 8- and 16-row tiles) and past them (cuBLAS,
// through scratch where in place): odd widths next to NaN padding, which a
// pair load must not pick up, and odd leading dimensions, whose rows
// alternate between aligned and unaligned pairs. block_update, block_combine
// (into a new block and in place on Z) and transform_in_place, device against
// host.
TEST_F(DeviceBlockOps, RowGroupShapesMatchTheHost) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const double u = std::numeric_limits<double>::epsilon();
  struct Case {
    std::int64_t rows, k1, k2;
    bool odd_ld = false;
  };
  const Case cases[] = {{1, 1, 1},           {63, 3, 5},           {5000, 7, 9},         {70001, 16, 16},
                        {3000, 15, 16},      {4097, 32, 16},       {2049, 31, 15},       {1000, 20, 2},
                        {20001, 60, 20},     {3001, 64, 32},       {999, 33, 17},        {5000, 47, 21},
                        {100, 64, 1},        {777, 40, 19},        {4096, 60, 20, true}, {1001, 33, 31, true},
                        {513, 8, 3, true},   {2000, 64, 32, true}, {20001, 60, 40},      {3001, 64, 48},
                        {999, 45, 41, true}, {130, 2, 47},         {3000, 65, 16},       {3000, 20, 49},
                        {20001, 60, 16},     {3001, 64, 16, true}, {999, 47, 13, true},  {4096, 33, 16, true}};
  // Even ld (odd_ld: odd), NaN in the columns past the block.
  auto padded = [&](std::int64_t rows, std::int64_t cols, std::uint64_t seed, bool odd_ld) {
    const std::int64_t ld = odd_ld ? (cols % 2 == 0 ? cols + 1 : cols + 2) : (cols % 2 == 0 ? cols + 2 : cols + 1);
    dense::DenseBlock<double> b(Space::host, rows, cols, ld);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < ld; ++j)
        b.data()[i * ld + j] = j < cols ? solver::hash_uniform(seed, i, j) : std::numeric_limits<double>::quiet_NaN();
    return b;
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.k1 << " -> " << c.k2 << (c.odd_ld ? ", odd ld" : ""));
    const HostMatrix S = test::random_matrix(c.k1, c.k2, 31);
    const auto Xh = padded(c.rows, c.k1, 32, c.odd_ld);
    const auto Xd = to_device_padded(dev, Xh);
    const double tol = 2 * (c.k1 + 2) * u * (1.5 * double(c.k1) + 1);
    for (double beta : {0.0, -0.5}) {
      auto Yh = padded(c.rows, c.k2, 33, c.odd_ld);
      auto Yd = to_device_padded(dev, Yh);
      solver::block_update<double>(host, 1.5, Xh.cview(), S, beta, Yh.view());
      solver::block_update<double>(dev, 1.5, Xd.cview(), S, beta, Yd.view());
      expect_close(to_host(dev, Yd), Yh, tol);
    }
    {
      auto Zh = padded(c.rows, c.k2, 34, c.odd_ld);
      auto Zd = to_device_padded(dev, Zh);
      auto Ch = padded(c.rows, c.k2, 35, c.odd_ld);
      auto Cd = to_device_padded(dev, Ch);
      solver::block_combine<double>(host, 1.5, Xh.cview(), S, -0.5, Zh.cview(), Ch.view());
      solver::block_combine<double>(dev, 1.5, Xd.cview(), S, -0.5, Zd.cview(), Cd.view());
      expect_close(to_host(dev, Cd), Ch, tol);
      solver::block_combine<double>(host, 1.5, Xh.cview(), S, -0.5, Zh.cview(), Zh.view());
      solver::block_combine<double>(dev, 1.5, Xd.cview(), S, -0.5, Zd.cview(), Zd.view());
      expect_close(to_host(dev, Zd), Zh, tol);
    }
    if (c.k2 <= c.k1) {
      auto Wh = padded(c.rows, c.k1, 36, c.odd_ld);
      auto Wd = to_device_padded(dev, Wh);
      auto scratch_h = nan_host(c.rows, c.k1, 0);
      auto scratch_d = to_device_padded(dev, scratch_h);
      solver::transform_in_place<double>(host, Wh.view(), S, scratch_h.view());
      solver::transform_in_place<double>(dev, Wd.view(), S, scratch_d.view());
      expect_close(to_host(dev, Wd), Wh, tol);
    }
  }
}

// Block CG's new search block: [P | Q | R] in one buffer, P S1 + R S2 written
// over P's columns (shifted when the width changes; up to 33 input columns).
// Device against host.
TEST_F(DeviceBlockOps, CombinePairOverlappingViewsMatchesTheHost) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const double u = std::numeric_limits<double>::epsilon();
  struct Case {
    std::int64_t rows, s, r, a, r_next;
  };
  const Case cases[] = {{1, 1, 1, 1, 1},         {300, 6, 6, 5, 6},      {300, 6, 6, 5, 3},     {1000, 8, 3, 8, 7},
                        {70000, 16, 16, 16, 16}, {5000, 16, 16, 16, 11}, {5000, 20, 18, 15, 20}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " rows, s " << c.s << ", r " << c.r << ", a " << c.a << " -> "
                                    << c.r_next);
    const std::int64_t ld = 3 * c.s;
    auto bh = random_host(c.rows, ld, 21, 0);
    auto bd = to_device(dev, bh);
    auto view = [&](dense::DenseBlock<double>& b, std::int64_t first, std::int64_t cols) {
      return dense::DenseView<double>{b.view().space, c.rows, cols, ld, b.data() + first};
    };
    const std::int64_t p0 = 2 * c.s - 2 * c.r, r0 = 2 * c.s, y0 = 2 * c.s - 2 * c.r_next;
    const HostMatrix S1 = test::random_matrix(c.r, c.r_next, 22), S2 = test::random_matrix(c.a, c.r_next, 23);
    auto sh = nan_host(c.rows, c.r_next, 0);
    auto sd = to_device(dev, sh);
    solver::block_combine_pair<double>(host, dense::ConstDenseView<double>(view(bh, p0, c.r)), S1,
                                       dense::ConstDenseView<double>(view(bh, r0, c.a)), S2, view(bh, y0, c.r_next),
                                       sh.view());
    solver::block_combine_pair<double>(dev, dense::ConstDenseView<double>(view(bd, p0, c.r)), S1,
                                       dense::ConstDenseView<double>(view(bd, r0, c.a)), S2, view(bd, y0, c.r_next),
                                       sd.view());
    const double terms = double(c.r + c.a);
    expect_close(to_host(dev, bd), bh, 2 * (terms + 1) * u * terms);
  }
}

// LOBPCG's fused projection and SVQB transform: W = Q S1 + W S2 in place,
// with Q and W adjacent columns of one block and 60 inputs: W pair-aligned
// (q = 40), and at an odd column (q = 39, the pair that straddles Q and W
// loaded as two values). Device against host.
TEST_F(DeviceBlockOps, CombinePairAdjacentWideInputsMatchesTheHost) {
  const dense::Context dev = dense::Context::cuda(0);
  const dense::Context host = dense::Context::host();
  const double u = std::numeric_limits<double>::epsilon();
  for (const std::int64_t q : {40, 39}) {
    SCOPED_TRACE(testing::Message() << "q = " << q);
    const std::int64_t rows = 20001, w = 20, ld = 60;
    auto bh = random_host(rows, ld, 51, 0);
    auto bd = to_device(dev, bh);
    const HostMatrix S1 = test::random_matrix(q, w, 52), S2 = test::random_matrix(w, w, 53);
    auto run = [&](const dense::Context& c, dense::DenseBlock<double>& b) {
      auto scratch = c.space() == Space::host ? nan_host(rows, w, 0) : to_device(dev, nan_host(rows, w, 0));
      const dense::DenseView<double> all = b.view();
      solver::block_combine_pair<double>(c, dense::ConstDenseView<double>(solver::column_range(all, 0, q)), S1,
                                         dense::ConstDenseView<double>(solver::column_range(all, q, w)), S2,
                                         solver::column_range(all, q, w), scratch.view());
    };
    run(host, bh);
    run(dev, bd);
    expect_close(to_host(dev, bd), bh, 2 * (q + w + 1) * u * double(q + w));
  }
}

// A Gram matrix in flight is the product of the blocks as they were when it
// was queued: work queued after start_gram (here, overwriting X) does not
// reach it, and finish() does not wait for that work. Two in flight at once,
// finished in reverse order, give gram()'s bits.
TEST_F(DeviceBlockOps, GramInFlightIsTheProductWhenQueued) {
  const dense::Context dev = dense::Context::cuda(0);
  const auto Xh = random_host(300000, 16, 31, 1), Yh = random_host(300000, 32, 32, 0);
  auto Xd = to_device(dev, Xh);
  const auto Yd = to_device(dev, Yh);
  const HostMatrix expected = solver::gram<double>(dev, MPI_COMM_WORLD, Xd.cview(), Yd.cview());
  const HostMatrix expected_yx = solver::gram<double>(dev, MPI_COMM_WORLD, Yd.cview(), Xd.cview());
  solver::GramInFlight xy = solver::start_gram<double>(dev, MPI_COMM_WORLD, Xd.cview(), Yd.cview());
  solver::GramInFlight yx = solver::start_gram<double>(dev, MPI_COMM_WORLD, Yd.cview(), Xd.cview());
  for (int pass = 0; pass < 20; ++pass) solver::axpby<double>(dev, 0.0, Yd.cview(), -1.0, Xd.view());
  solver::scale_columns<double>(dev, std::vector<double>(16, 2.0), Xd.view());
  EXPECT_EQ(yx.finish().values(), expected_yx.values());
  EXPECT_EQ(xy.finish().values(), expected.values());
  // The queued work did run, after the products.
  const HostMatrix doubled = solver::gram<double>(dev, MPI_COMM_WORLD, Xd.cview(), Yd.cview());
  for (std::size_t e = 0; e < doubled.values().size(); ++e)
    EXPECT_NEAR(doubled.values()[e], 2 * expected.values()[e], 1e-9 * (1 + std::abs(expected.values()[e])));
}

// X^T [Y1 Y2] in one pass (solver/blocks/cuda/tall_skinny_gram.cu where it fits,
// two products otherwise) against the host's two Gram matrices: row counts
// around the kernel's 8-row MMA steps and 16-row stages; widths around its
// 16-column X tiles and 8-column Y tiles, up to the narrow variant's limits
// (64 and 40), through the wide one's (96 and 64: LOBPCG's blocks of 21-32)
// and past them; an empty Y2; padding columns full of NaN (never read); Y1 inside
// X's block, as LOBPCG's Z is in [X P Z]; Y2 with another leading dimension;
// both the 16-byte copies (even widths, no padding) and the 8-byte ones.
// Each entry within the bound of two orders of summation,
// 2 rows u (|X|^T |Y|)_ij; the same bits when run again.
TEST_F(DeviceBlockOps, GramPairMatchesTheHostProducts) {
  struct PairShape {
    std::int64_t rows, kx, ky1, ky2, pad;
  };
  const PairShape pair_shapes[] = {{1, 1, 1, 0, 0},
                                   {3, 5, 3, 2, 1},
                                   {7, 64, 20, 20, 1},
                                   {8, 60, 20, 20, 0},
                                   {9, 9, 17, 0, 3},
                                   {2047, 33, 7, 9, 1},
                                   {2049, 64, 40, 0, 2},
                                   {4097, 60, 20, 20, 1},
                                   {70001, 17, 1, 39, 3},
                                   {100003, 60, 20, 20, 0},
                                   {5000, 65, 8, 8, 0},
                                   {3000, 20, 30, 30, 1},
                                   {0, 4, 2, 2, 0},
                                   {12, 8, 0, 8, 1},
                                   {2049, 48, 16, 16, 0},
                                   {33, 2, 2, 2, 0},
                                   {4111, 64, 40, 0, 0},
                                   {517, 22, 6, 4, 0},
                                   // the wide variant: X past 64 or [Y1 Y2] past 40 columns
                                   {4097, 66, 22, 22, 0},
                                   {3001, 84, 28, 28, 1},
                                   {2049, 96, 32, 32, 0},
                                   {70001, 96, 64, 0, 1},
                                   {517, 20, 41, 0, 2},
                                   {9, 65, 1, 0, 0},
                                   {100003, 78, 26, 26, 0},
                                   {33, 81, 7, 2, 3},
                                   {2047, 97, 8, 8, 0},
                                   {4097, 90, 33, 32, 0}};
  const dense::Context dev = dense::Context::cuda(0), host = dense::Context::host();
  const double u = std::numeric_limits<double>::epsilon();
  auto nan_padded = [](std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t pad) {
    auto b = random_host(rows, cols, seed, pad);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = cols; j < b.ld(); ++j) b.data()[i * b.ld() + j] = std::numeric_limits<double>::quiet_NaN();
    return b;
  };
  auto absolute = [](dense::ConstDenseView<double> v) {
    dense::DenseBlock<double> b(Space::host, v.rows, v.cols);
    for (std::int64_t i = 0; i < v.rows; ++i)
      for (std::int64_t j = 0; j < v.cols; ++j) b.data()[i * v.cols + j] = std::abs(v(i, j));
    return b;
  };
  for (const PairShape& s : pair_shapes) {
    for (const bool y1_in_x : {false, true}) {
      if (y1_in_x && s.ky1 > s.kx) continue;
      SCOPED_TRACE(testing::Message() << s.rows << " rows, " << s.kx << " x (" << s.ky1 << " + " << s.ky2 << ")"
                                      << (y1_in_x ? ", Y1 inside X's block" : ""));
      const auto Xh = nan_padded(s.rows, s.kx, 61, s.pad);
      const auto Y1h = nan_padded(s.rows, s.ky1, 62, s.pad + 1);
      const auto Y2h = nan_padded(s.rows, s.ky2, 63, s.pad + 2);
      const auto Xd = to_device_padded(dev, Xh), Y1d = to_device_padded(dev, Y1h), Y2d = to_device_padded(dev, Y2h);
      // Y1: its own block, or X's last ky1 columns.
      const auto y1_host = y1_in_x ? solver::column_range(Xh.cview(), s.kx - s.ky1, s.ky1) : Y1h.cview();
      const auto y1_dev = y1_in_x ? solver::column_range(Xd.cview(), s.kx - s.ky1, s.ky1) : Y1d.cview();
      const HostMatrix first = solver::gram<double>(host, MPI_COMM_WORLD, Xh.cview(), y1_host);
      const HostMatrix second = solver::gram<double>(host, MPI_COMM_WORLD, Xh.cview(), Y2h.cview());
      const auto Xa = absolute(Xh.cview()), Y1a = absolute(y1_host), Y2a = absolute(Y2h.cview());
      const HostMatrix bound1 = solver::gram<double>(host, MPI_COMM_WORLD, Xa.cview(), Y1a.cview());
      const HostMatrix bound2 = solver::gram<double>(host, MPI_COMM_WORLD, Xa.cview(), Y2a.cview());
      const HostMatrix both =
          solver::start_gram_pair<double>(dev, MPI_COMM_WORLD, Xd.cview(), y1_dev, Y2d.cview()).finish();
      ASSERT_EQ(both.rows(), s.kx);
      ASSERT_EQ(both.cols(), s.ky1 + s.ky2);
      const double scale = 2 * double(std::max<std::int64_t>(s.rows, 1)) * u;
      for (std::int64_t i = 0; i < s.kx; ++i) {
        for (std::int64_t j = 0; j < s.ky1; ++j)
          ASSERT_NEAR(both(i, j), first(i, j), scale * bound1(i, j) + 1e-300) << i << ", " << j;
        for (std::int64_t j = 0; j < s.ky2; ++j)
          ASSERT_NEAR(both(i, s.ky1 + j), second(i, j), scale * bound2(i, j) + 1e-300) << i << ", " << s.ky1 + j;
      }
      const HostMatrix again =
          solver::start_gram_pair<double>(dev, MPI_COMM_WORLD, Xd.cview(), y1_dev, Y2d.cview()).finish();
      EXPECT_EQ(again.values(), both.values());
    }
  }
}

}  // namespace
}  // namespace blockeigs
