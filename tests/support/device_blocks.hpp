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

inline spmm::DenseBlock<double> to_device(const spmm::Context& dev, const spmm::DenseBlock<double>& h) {
  spmm::DenseBlock<double> d(Space::device, h.rows(), h.cols(), h.ld());
  solver::copy_block<double>(dev, h.cview(), d.view());
  return d;
}

// The same, padding columns (up to ld) included.
inline spmm::DenseBlock<double> to_device_padded(const spmm::Context& dev, const spmm::DenseBlock<double>& h) {
  spmm::DenseBlock<double> d(Space::device, h.rows(), h.cols(), h.ld());
  solver::copy_block<double>(dev, spmm::ConstDenseView<double>{Space::host, h.rows(), h.ld(), h.ld(), h.data()},
                             spmm::DenseView<double>{Space::device, d.rows(), d.ld(), d.ld(), d.data()});
  return d;
}

inline spmm::DenseBlock<double> to_host(const spmm::Context& dev, const spmm::DenseBlock<double>& d) {
  spmm::DenseBlock<double> h(Space::host, d.rows(), d.cols(), d.ld());
  solver::copy_block<double>(dev, d.cview(), h.view());
  return h;
}

inline spmm::DenseBlock<double> random_host(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                            std::int64_t pad) {
  spmm::DenseBlock<double> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < b.ld(); ++j) b.data()[i * b.ld() + j] = solver::hash_uniform(seed, i, j);
  return b;
}

inline spmm::DenseBlock<double> nan_host(std::int64_t rows, std::int64_t cols, std::int64_t pad) {
  spmm::DenseBlock<double> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows * b.ld(); ++i) b.data()[i] = std::numeric_limits<double>::quiet_NaN();
  return b;
}

// |a - b| <= abs_tol + rel_tol * |b| entry by entry, and no NaN.
inline void expect_close(const spmm::DenseBlock<double>& a, const spmm::DenseBlock<double>& b, double abs_tol,
                         double rel_tol = 0) {
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t j = 0; j < a.cols(); ++j) {
      ASSERT_FALSE(std::isnan(a.view()(i, j))) << "(" << i << ", " << j << ")";
      EXPECT_NEAR(a.view()(i, j), b.view()(i, j), abs_tol + rel_tol * std::abs(b.view()(i, j)))
          << "(" << i << ", " << j << ")";
    }
}

}  // namespace blockeigs::test
