// A block's local rows copied to the host as compact row-major doubles, from
// either memory space: what result files, checkpoints and callbacks take.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

// X's rows into `out` [host] (X.rows * X.cols doubles, row-major): one pass
// over the rows where X is compact fp64 or on the host (compacted and widened
// on the way); a device block in fp32 or with gaps between its rows is
// copied to the host first (one copy), then compacted.
template <class T>
void copy_to_host_doubles(dense::ConstDenseView<T> X, double* out) {
  if (X.rows == 0 || X.cols == 0) return;
  const auto count = static_cast<std::size_t>(X.rows * X.cols);
  if constexpr (std::is_same_v<T, double>) {
    if (X.ld == X.cols) {
      dense::copy_bytes(out, Space::host, X.data, X.space, sizeof(double) * count);
      return;
    }
  }
  const T* from = X.data;
  std::unique_ptr<T[]> staged;
  if (X.space != Space::host) {
    const auto span = static_cast<std::size_t>((X.rows - 1) * X.ld + X.cols);
    staged = std::make_unique_for_overwrite<T[]>(span);
    dense::copy_bytes(staged.get(), Space::host, X.data, X.space, sizeof(T) * span);
    from = staged.get();
  }
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j) out[i * X.cols + j] = static_cast<double>(from[i * X.ld + j]);
}

// The same as a vector; complex values as their (real, imaginary) pairs, 2 X.cols doubles a row (the layout
// of complex checkpoints and callbacks).
template <class T>
std::vector<double> host_doubles(dense::ConstDenseView<T> X) {
  if constexpr (is_complex_v<T>) {
    return host_doubles(dense::parts_of(X));
  } else {
    std::vector<double> out(static_cast<std::size_t>(X.rows * X.cols));
    copy_to_host_doubles(X, out.data());
    return out;
  }
}

}  // namespace blockeigs::solver
