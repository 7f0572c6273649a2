// Row-major dense blocks (rows x cols, leading dimension ld >= cols): views
// that do not own, and DenseBlock that owns a Buffer.
#pragma once

#include <cstdint>

#include "core/scalar.hpp"
#include "dense/memory.hpp"

namespace blockeigs::dense {

template <class T>
struct DenseView {
  Space space = Space::host;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  T* data = nullptr;

  // Host views only.
  T& operator()(std::int64_t i, std::int64_t j) const { return data[i * ld + j]; }
};

// A column-major block (PETSc's dense Mats): element (i, j) at
// data[i + j * ld], ld >= rows. T may be const.
template <class T>
struct ColumnMajorView {
  Space space = Space::host;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  T* data = nullptr;

  // Host views only.
  T& operator()(std::int64_t i, std::int64_t j) const { return data[i + j * ld]; }
};

template <class T>
struct ConstDenseView {
  Space space = Space::host;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  const T* data = nullptr;

  ConstDenseView() = default;
  ConstDenseView(Space s, std::int64_t r, std::int64_t c, std::int64_t l, const T* d)
      : space(s), rows(r), cols(c), ld(l), data(d) {}
  ConstDenseView(const DenseView<T>& v)  // NOLINT: a mutable view is a const view
      : space(v.space), rows(v.rows), cols(v.cols), ld(v.ld), data(v.data) {}

  const T& operator()(std::int64_t i, std::int64_t j) const { return data[i * ld + j]; }
};

// A complex block's values as a real block of twice the columns, each value's real and imaginary parts side by
// side (std::complex's layout): where a complex operation is a real one on the parts.
template <class T>
DenseView<real_t<T>> parts_of(DenseView<T> X) {
  static_assert(is_complex_v<T>);
  return {X.space, X.rows, 2 * X.cols, 2 * X.ld, reinterpret_cast<real_t<T>*>(X.data)};
}
template <class T>
ConstDenseView<real_t<T>> parts_of(ConstDenseView<T> X) {
  static_assert(is_complex_v<T>);
  return {X.space, X.rows, 2 * X.cols, 2 * X.ld, reinterpret_cast<const real_t<T>*>(X.data)};
}

template <class T>
class DenseBlock {
 public:
  DenseBlock() = default;
  // ld == 0 means ld = cols.
  DenseBlock(Space space, std::int64_t rows, std::int64_t cols, std::int64_t ld = 0)
      : rows_(rows),
        cols_(cols),
        ld_(ld > 0 ? ld : cols),
        buffer_(space, static_cast<std::size_t>(rows * (ld > 0 ? ld : cols))) {
    BLOCKEIGS_ASSERT(ld_ >= cols_);
  }

  Space space() const { return buffer_.space(); }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t ld() const { return ld_; }
  T* data() { return buffer_.data(); }
  const T* data() const { return buffer_.data(); }
  Buffer<T>& buffer() { return buffer_; }
  const Buffer<T>& buffer() const { return buffer_; }

  DenseView<T> view() { return {space(), rows_, cols_, ld_, buffer_.data()}; }
  ConstDenseView<T> view() const { return {space(), rows_, cols_, ld_, buffer_.data()}; }
  ConstDenseView<T> cview() const { return view(); }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t ld_ = 0;
  Buffer<T> buffer_;
};

}  // namespace blockeigs::dense
