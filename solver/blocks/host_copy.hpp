// A block's local rows copied to the host as compact row-major doubles, from
// either memory space: what result files, checkpoints and callbacks take.
#pragma once

#include <cstdint>
#include <vector>

#include "spmm/dense.hpp"
#include "spmm/memory.hpp"

namespace blockeigs::solver {

template <class T>
std::vector<double> host_doubles(spmm::ConstDenseView<T> X) {
  if (X.rows == 0 || X.cols == 0) return {};
  // One copy of the strided rows, compacted on the host.
  std::vector<T> strided(static_cast<std::size_t>((X.rows - 1) * X.ld + X.cols));
  spmm::copy_bytes(strided.data(), Space::host, X.data, X.space, sizeof(T) * strided.size());
  std::vector<double> out(static_cast<std::size_t>(X.rows * X.cols));
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j) out[i * X.cols + j] = strided[i * X.ld + j];
  return out;
}

}  // namespace blockeigs::solver
