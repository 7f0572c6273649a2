// Dense blocks for the device tests: copies between the host and the device
// (with or without the padding columns), random and NaN-filled host blocks,
// and an entrywise comparison. fp64, through solver::copy_block.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "dense/context.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::test {

inline dense::DenseBlock<double> to_device(const dense::Context& dev, const dense::DenseBlock<double>& h) {
  dense::DenseBlock<double> d(Space::device, h.rows(), h.cols(), h.ld());
  solver::copy_block<double>(dev, h.cview(), d.view());
  return d;
}

// The same, padding columns (up to ld) included.
inline dense::DenseBlock<double> to_device_padded(const dense::Context& dev, const dense::DenseBlock<double>& h) {
  dense::DenseBlock<double> d(Space::device, h.rows(), h.cols(), h.ld());
  solver::copy_block<double>(dev, dense::ConstDenseView<double>{Space::host, h.rows(), h.ld(), h.ld(), h.data()},
                             dense::DenseView<double>{Space::device, d.rows(), d.ld(), d.ld(), d.data()});
  return d;
}

inline dense::DenseBlock<double> to_host(const dense::Context& dev, const dense::DenseBlock<double>& d) {
  dense::DenseBlock<double> h(Space::host, d.rows(), d.cols(), d.ld());
  solver::copy_block<double>(dev, d.cview(), h.view());
  return h;
}

inline dense::DenseBlock<double> random_host(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                             std::int64_t pad) {
  dense::DenseBlock<double> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < b.ld(); ++j) b.data()[i * b.ld() + j] = solver::hash_uniform(seed, i, j);
  return b;
}

inline dense::DenseBlock<double> nan_host(std::int64_t rows, std::int64_t cols, std::int64_t pad) {
  dense::DenseBlock<double> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows * b.ld(); ++i) b.data()[i] = std::numeric_limits<double>::quiet_NaN();
  return b;
}

// |a - b| <= abs_tol + rel_tol * |b| entry by entry, and no NaN.
inline void expect_close(const dense::DenseBlock<double>& a, const dense::DenseBlock<double>& b, double abs_tol,
                         double rel_tol = 0) {
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t j = 0; j < a.cols(); ++j) {
      ASSERT_FALSE(std::isnan(a.view()(i, j))) << "(" << i << ", " << j << ")";
      EXPECT_NEAR(a.view()(i, j), b.view()(i, j), abs_tol + rel_tol * std::abs(b.view()(i, j)))
          << "(" << i << ", " << j << ")";
    }
}

}  // namespace blockeigs::test
