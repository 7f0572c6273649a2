// Block operations: the host implementations (OpenBLAS, OpenMP) and the
// dispatch to the device ones by the views' memory space. The reductions
// (Gram matrices, norms, residuals) are in block_reductions_host.cpp.
#include "solver/blocks/block_ops.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "solver/blocks/block_ops_host_support.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/blocks/small_product.hpp"

namespace blockeigs::solver {

using namespace host_support;

template <class S>
HostMatrixOf<S> HostMatrixOf<S>::identity(std::int64_t n) {
  HostMatrixOf I(n, n);
  for (std::int64_t i = 0; i < n; ++i) I(i, i) = 1.0;
  return I;
}

template <class S>
HostMatrixOf<S> HostMatrixOf<S>::block(std::int64_t r0, std::int64_t nr, std::int64_t c0, std::int64_t nc) const {
  BLOCKEIGS_ASSERT(r0 >= 0 && c0 >= 0 && r0 + nr <= rows_ && c0 + nc <= cols_);
  HostMatrixOf out(nr, nc);
  for (std::int64_t i = 0; i < nr; ++i)
    for (std::int64_t j = 0; j < nc; ++j) out(i, j) = (*this)(r0 + i, c0 + j);
  return out;
}

// The products of the projected problems (up to 3 nb x 3 nb times 3 nb x
// nb, several per LOBPCG iteration on rank 0 while the device waits): in
// registers where small (small_product.cpp), BLAS beyond.
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const double* A,
             std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc,
             double alpha) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C := beta C, never reading C when beta == 0
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta == 0 ? 0.0 : beta * C[i * ldc + j];
    return;
  }
  if (fits_small_product(transpose_b, m, n, k)) {
    small_product(transpose_a, transpose_b, m, n, k, A, lda, B, ldb, beta, C, ldc, alpha);
    return;
  }
  cblas_dgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

void product(bool adjoint_a, bool adjoint_b, std::int64_t m, std::int64_t n, std::int64_t k,
             const std::complex<double>* A, std::int64_t lda, const std::complex<double>* B, std::int64_t ldb,
             std::complex<double> beta, std::complex<double>* C, std::int64_t ldc, std::complex<double> alpha) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta == 0.0 ? 0.0 : beta * C[i * ldc + j];
    return;
  }
  cblas_zgemm(CblasRowMajor, adjoint_a ? CblasConjTrans : CblasNoTrans, adjoint_b ? CblasConjTrans : CblasNoTrans,
              int(m), int(n), int(k), &alpha, A, int(lda), B, int(ldb), &beta, C, int(ldc));
}

template <class S>
HostMatrixOf<S> multiply(const HostMatrixOf<S>& A, const HostMatrixOf<S>& B) {
  BLOCKEIGS_ASSERT(A.cols() == B.rows());
  HostMatrixOf<S> C(A.rows(), B.cols());
  product(false, false, C.rows(), C.cols(), A.cols(), A.data(), A.cols(), B.data(), B.cols(), S(0), C.data(), C.cols());
  return C;
}

template <class S>
HostMatrixOf<S> transpose_times(const HostMatrixOf<S>& A, const HostMatrixOf<S>& B) {  // A^T B, A^H B
  BLOCKEIGS_ASSERT(A.rows() == B.rows());
  HostMatrixOf<S> C(A.cols(), B.cols());
  product(true, false, C.rows(), C.cols(), A.rows(), A.data(), A.cols(), B.data(), B.cols(), S(0), C.data(), C.cols());
  return C;
}

template class HostMatrixOf<double>;
template class HostMatrixOf<std::complex<double>>;
template HostMatrix multiply(const HostMatrix&, const HostMatrix&);
template ComplexHostMatrix multiply(const ComplexHostMatrix&, const ComplexHostMatrix&);
template HostMatrix transpose_times(const HostMatrix&, const HostMatrix&);
template ComplexHostMatrix transpose_times(const ComplexHostMatrix&, const ComplexHostMatrix&);

template <class T>
void block_update(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const HostMatrixFor<T>& S, T beta,
                  dense::DenseView<T> Y) {
  require_same_space("block_update", X, Y);
  require_same_rows("block_update", X, Y);
  if (S.rows() != X.cols || S.cols() != Y.cols)
    throw Error(detail::concat("block_update: X has ", X.cols, " columns and Y ", Y.cols, ", but S is ", S.rows(),
                               " x ", S.cols()));
  if (Y.rows == 0 || Y.cols == 0) return;
  if (on_device(Y.space)) {
    device_ops::block_update(context, alpha, X, S.data(), beta, Y);
    return;
  }
  if (X.cols == 0) {  // an empty product: Y = beta * Y, never reading Y when beta == 0
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < Y.rows; ++i)
      for (std::int64_t j = 0; j < Y.cols; ++j)
        Y.data[i * Y.ld + j] = beta == T(0) ? T(0) : beta * Y.data[i * Y.ld + j];
    return;
  }
  const std::vector<T> s(S.values().begin(), S.values().end());
  gemm_row_major<T>(CblasNoTrans, CblasNoTrans, Y.rows, Y.cols, X.cols, alpha, X.data, X.ld, s.data(), S.cols(), beta,
                    Y.data, Y.ld);
}

template <class T>
void split_update(const dense::Context& context, const std::type_identity_t<SplitColumns<T>>& V, std::int64_t first,
                  const HostMatrixFor<T>& E, T beta, dense::DenseView<T> Y) {
  BLOCKEIGS_ASSERT(E.rows() == V.cols() - first);
  const std::int64_t in_head = std::max<std::int64_t>(V.head.cols - first, 0);
  if (in_head > 0) {
    block_update(context, T(1), column_range(V.head, first, in_head), E.block(0, in_head, 0, E.cols()), beta, Y);
    beta = T(1);
  }
  const std::int64_t in_tail = E.rows() - in_head;
  if (in_tail > 0)
    block_update(context, T(1), column_range(V.tail, first + in_head - V.head.cols, in_tail),
                 E.block(in_head, in_tail, 0, E.cols()), beta, Y);
}

template <class T>
void block_combine(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const HostMatrixFor<T>& S,
                   T beta, dense::ConstDenseView<T> Z, dense::DenseView<T> Y) {
  require_same_space("block_combine", X, Y);
  require_same_space("block_combine", Z, Y);
  require_same_rows("block_combine", X, Y);
  require_same_rows("block_combine", Z, Y);
  if (S.rows() != X.cols || S.cols() != Y.cols || Z.cols != Y.cols)
    throw Error(detail::concat("block_combine: X has ", X.cols, " columns, Z ", Z.cols, " and Y ", Y.cols,
                               ", but S is ", S.rows(), " x ", S.cols()));
  if (Y.rows == 0 || Y.cols == 0) return;
  if (on_device(Y.space) && X.cols > 0 && device_ops::block_combine(context, alpha, X, S.data(), beta, Z, Y)) return;
  // Elsewhere in two passes: Y = beta Z, then Y += alpha X S.
  if (Z.data != Y.data && beta != T(0)) {
    axpby(context, beta, Z, T(0), Y);
    block_update(context, alpha, X, S, T(1), Y);
  } else {
    block_update(context, alpha, X, S, beta, Y);
  }
}

template <class T>
void block_combine_pair(const dense::Context& context, dense::ConstDenseView<T> X1, const HostMatrixFor<T>& S1,
                        dense::ConstDenseView<T> X2, const HostMatrixFor<T>& S2, dense::DenseView<T> Y,
                        dense::DenseView<T> scratch) {
  require_same_space("block_combine_pair", X1, Y);
  require_same_space("block_combine_pair", X2, Y);
  require_same_rows("block_combine_pair", X1, Y);
  require_same_rows("block_combine_pair", X2, Y);
  if (S1.rows() != X1.cols || S2.rows() != X2.cols || S1.cols() != Y.cols || S2.cols() != Y.cols)
    throw Error(detail::concat("block_combine_pair: X1 has ", X1.cols, " columns, X2 ", X2.cols, " and Y ", Y.cols,
                               ", but S1 is ", S1.rows(), " x ", S1.cols(), " and S2 ", S2.rows(), " x ", S2.cols()));
  if (Y.rows == 0 || Y.cols == 0) return;
  // S = [S1; S2], the coefficients of [X1 X2].
  HostMatrixFor<T> S(S1.rows() + S2.rows(), Y.cols);
  std::copy(S1.values().begin(), S1.values().end(), S.values().begin());
  std::copy(S2.values().begin(), S2.values().end(), S.values().begin() + S1.values().size());
  if (on_device(Y.space) && device_ops::block_combine_pair(context, X1, X2, S.data(), Y)) return;
  // Elsewhere through scratch, which the inputs do not overlap.
  if (scratch.rows != Y.rows || scratch.cols < Y.cols)
    throw Error(detail::concat("block_combine_pair: scratch is ", scratch.rows, " x ", scratch.cols, ", needs ", Y.rows,
                               " x ", Y.cols));
  const dense::DenseView<T> out = column_range(scratch, 0, Y.cols);
  if (X1.ld == X2.ld && X1.data + X1.cols == X2.data) {
    // Adjacent inputs (LOBPCG's [X P | W]): one product over [X1 X2].
    block_update(context, T(1), dense::ConstDenseView<T>{X1.space, X1.rows, X1.cols + X2.cols, X1.ld, X1.data}, S, T(0),
                 out);
  } else {
    block_update(context, T(1), X1, S1, T(0), out);
    block_update(context, T(1), X2, S2, T(1), out);
  }
  copy_block(context, dense::ConstDenseView<T>(out), Y);
}

template <class T>
void transform_in_place(const dense::Context& context, dense::DenseView<T> W, const HostMatrixFor<T>& S,
                        dense::DenseView<T> scratch) {
  if (S.rows() != W.cols || S.cols() > W.cols)
    throw Error(detail::concat("transform_in_place: W has ", W.cols, " columns, but S is ", S.rows(), " x ", S.cols()));
  const std::int64_t kept = S.cols();
  if (W.rows == 0 || kept == 0) return;
  if (on_device(W.space) && device_ops::transform_in_place(context, W, S.data(), kept)) return;
  const dense::DenseView<T> out = column_range(scratch, 0, kept);
  block_update(context, T(1), dense::ConstDenseView<T>(W), S, T(0), out);
  copy_block(context, dense::ConstDenseView<T>(out), column_range(W, 0, kept));
}

template <class T>
void axpby(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
  require_same_space("axpby", X, Y);
  require_same_rows("axpby", X, Y);
  BLOCKEIGS_ASSERT(X.cols == Y.cols);
  if (on_device(Y.space)) {
    device_ops::axpby(context, alpha, X, beta, Y);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Y.rows; ++i) {
    const T* x = X.data + i * X.ld;
    T* y = Y.data + i * Y.ld;
    if (beta == T(0))
      for (std::int64_t j = 0; j < Y.cols; ++j) y[j] = alpha * x[j];
    else
      for (std::int64_t j = 0; j < Y.cols; ++j) y[j] = alpha * x[j] + beta * y[j];
  }
}

template <class T>
void column_axpby(const dense::Context& context, const std::vector<double>& alpha, dense::ConstDenseView<T> X, T beta,
                  dense::DenseView<T> Y) {
  require_same_space("column_axpby", X, Y);
  require_same_rows("column_axpby", X, Y);
  BLOCKEIGS_ASSERT(X.cols == Y.cols && std::int64_t(alpha.size()) == Y.cols);
  if (on_device(Y.space)) {
    device_ops::column_axpby(context, alpha.data(), X, beta, Y);
    return;
  }
  const std::vector<T> a(alpha.begin(), alpha.end());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Y.rows; ++i) {
    const T* x = X.data + i * X.ld;
    T* y = Y.data + i * Y.ld;
    if (beta == T(0))
      for (std::int64_t j = 0; j < Y.cols; ++j) y[j] = a[j] * x[j];
    else
      for (std::int64_t j = 0; j < Y.cols; ++j) y[j] = a[j] * x[j] + beta * y[j];
  }
}

template <class T>
void scale_columns(const dense::Context& context, const std::vector<double>& scale, dense::DenseView<T> X) {
  BLOCKEIGS_ASSERT(std::int64_t(scale.size()) == X.cols);
  if (on_device(X.space)) {
    device_ops::scale_columns(context, scale.data(), X);
    return;
  }
  const std::vector<T> s(scale.begin(), scale.end());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j) X.data[i * X.ld + j] *= s[j];
}

template <class T>
void copy_block(const dense::Context& context, dense::ConstDenseView<T> src, dense::DenseView<T> dst) {
  require_same_rows("copy_block", src, dst);
  if (src.cols != dst.cols) throw Error(detail::concat("copy_block: ", src.cols, " columns into ", dst.cols));
  if (on_device(src.space) || on_device(dst.space)) {
    device_ops::copy_block(context, src, dst);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dst.rows; ++i) std::copy_n(src.data + i * src.ld, dst.cols, dst.data + i * dst.ld);
}

template <class From, class To>
void convert_block(const dense::Context& context, dense::ConstDenseView<From> src, dense::DenseView<To> dst) {
  require_same_space("convert_block", src, dst);
  require_same_rows("convert_block", src, dst);
  BLOCKEIGS_ASSERT(src.cols == dst.cols);
  if (dst.rows == 0 || dst.cols == 0) return;
  if (on_device(dst.space)) return device_ops::convert_block(context, src, dst);
  (void)context;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dst.rows; ++i)
    for (std::int64_t j = 0; j < dst.cols; ++j) dst.data[i * dst.ld + j] = static_cast<To>(src.data[i * src.ld + j]);
}

template void convert_block(const dense::Context&, dense::ConstDenseView<float>, dense::DenseView<double>);
template void convert_block(const dense::Context&, dense::ConstDenseView<double>, dense::DenseView<float>);
template void convert_block(const dense::Context&, dense::ConstDenseView<float>, dense::DenseView<float>);
template void convert_block(const dense::Context&, dense::ConstDenseView<double>, dense::DenseView<double>);

template <class T>
void select_columns(const dense::Context& context, dense::ConstDenseView<T> src,
                    const std::vector<std::int64_t>& columns, dense::DenseView<T> dst) {
  require_same_space("select_columns", src, dst);
  require_same_rows("select_columns", src, dst);
  BLOCKEIGS_ASSERT(std::int64_t(columns.size()) == dst.cols);
  for (std::int64_t c : columns)
    if (c < 0 || c >= src.cols)
      throw Error(detail::concat("select_columns: column ", c, " of a block with ", src.cols));
  if (on_device(dst.space)) {
    device_ops::select_columns(context, src, columns.data(), dst);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dst.rows; ++i)
    for (std::int64_t j = 0; j < dst.cols; ++j) dst.data[i * dst.ld + j] = src.data[i * src.ld + columns[j]];
}

template <class T>
void keep_columns(const dense::Context& context, dense::DenseView<T> X, const std::vector<std::int64_t>& columns) {
  for (std::size_t j = 0; j < columns.size(); ++j)
    if (columns[j] < std::int64_t(j) || columns[j] >= X.cols || (j > 0 && columns[j] <= columns[j - 1]))
      throw Error(detail::concat("keep_columns: the columns must increase strictly and lie in a block of ", X.cols));
  const auto kept = static_cast<std::int64_t>(columns.size());
  if (on_device(X.space)) {
    device_ops::keep_columns(context, X, columns.data(), kept);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < kept; ++j) X.data[i * X.ld + j] = X.data[i * X.ld + columns[j]];
}

template <class T>
void permute_columns(const dense::Context& context, dense::DenseView<T> X, const std::vector<std::int64_t>& order) {
  std::vector<bool> seen(static_cast<std::size_t>(X.cols), false);
  for (std::int64_t c : order) {
    if (std::int64_t(order.size()) != X.cols || c < 0 || c >= X.cols || seen[c])
      throw Error(detail::concat("permute_columns: not a permutation of a block's ", X.cols, " columns"));
    seen[c] = true;
  }
  if (on_device(X.space)) {
    // The compaction kernel reads 32 columns of a row before it writes them:
    // a permutation within them is safe in place.
    if (X.cols <= 32) {
      device_ops::keep_columns(context, X, order.data(), X.cols);
    } else {
      dense::DenseBlock<T> moved(X.space, X.rows, X.cols);
      device_ops::select_columns(context, dense::ConstDenseView<T>(X), order.data(), moved.view());
      copy_block(context, dense::ConstDenseView<T>(moved.view()), X);
    }
    return;
  }
#pragma omp parallel
  {
    std::vector<T> row(static_cast<std::size_t>(X.cols));
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < X.rows; ++i) {
      T* const x = X.data + i * X.ld;
      for (std::int64_t j = 0; j < X.cols; ++j) row[j] = x[order[j]];
      std::copy(row.begin(), row.end(), x);
    }
  }
}

// X(i, j) = the hash value of global entry (row(i), first_col + j)
// (random_entry: complex entries take two).
template <class T, class RowOf>
void fill_random_host(dense::DenseView<T> X, std::uint64_t seed, RowOf row, std::int64_t first_col) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j) X.data[i * X.ld + j] = random_entry<T>(seed, row(i), first_col + j);
}

template <class T>
void fill_random(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed, std::int64_t first_row,
                 std::int64_t first_col) {
  if (on_device(X.space)) {
    device_ops::fill_random(context, X, seed, first_row, first_col);
    return;
  }
  fill_random_host(
      X, seed, [first_row](std::int64_t i) { return first_row + i; }, first_col);
}

template <class T>
void fill_random_rows(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed,
                      const std::int64_t* rows, std::int64_t first_col) {
  if (on_device(X.space)) {
    device_ops::fill_random_rows(context, X, seed, rows, first_col);
    return;
  }
  fill_random_host(
      X, seed, [rows](std::int64_t i) { return rows[i]; }, first_col);
}

template <class T>
void apply_diagonal(const dense::Context& context, const T* d, dense::ConstDenseView<T> X, dense::DenseView<T> Y) {
  require_same_space("apply_diagonal", X, Y);
  require_same_rows("apply_diagonal", X, Y);
  BLOCKEIGS_ASSERT(X.cols == Y.cols);
  if (on_device(Y.space)) {
    device_ops::apply_diagonal(context, d, X, Y);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < Y.rows; ++i)
    for (std::int64_t j = 0; j < Y.cols; ++j) Y.data[i * Y.ld + j] = d[i] * X.data[i * X.ld + j];
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                    \
  template void block_update(const dense::Context&, T, dense::ConstDenseView<T>, const HostMatrixFor<T>&, T,        \
                             dense::DenseView<T>);                                                                  \
  template void split_update(const dense::Context&, const std::type_identity_t<SplitColumns<T>>&, std::int64_t,     \
                             const HostMatrixFor<T>&, T, dense::DenseView<T>);                                      \
  template void axpby(const dense::Context&, T, dense::ConstDenseView<T>, T, dense::DenseView<T>);                  \
  template void column_axpby(const dense::Context&, const std::vector<double>&, dense::ConstDenseView<T>, T,        \
                             dense::DenseView<T>);                                                                  \
  template void scale_columns(const dense::Context&, const std::vector<double>&, dense::DenseView<T>);              \
  template void copy_block(const dense::Context&, dense::ConstDenseView<T>, dense::DenseView<T>);                   \
  template void block_combine(const dense::Context&, T, dense::ConstDenseView<T>, const HostMatrixFor<T>&, T,       \
                              dense::ConstDenseView<T>, dense::DenseView<T>);                                       \
  template void block_combine_pair(const dense::Context&, dense::ConstDenseView<T>, const HostMatrixFor<T>&,        \
                                   dense::ConstDenseView<T>, const HostMatrixFor<T>&, dense::DenseView<T>,          \
                                   dense::DenseView<T>);                                                            \
  template void transform_in_place(const dense::Context&, dense::DenseView<T>, const HostMatrixFor<T>&,             \
                                   dense::DenseView<T>);                                                            \
  template void select_columns(const dense::Context&, dense::ConstDenseView<T>, const std::vector<std::int64_t>&,   \
                               dense::DenseView<T>);                                                                \
  template void keep_columns(const dense::Context&, dense::DenseView<T>, const std::vector<std::int64_t>&);         \
  template void permute_columns(const dense::Context&, dense::DenseView<T>, const std::vector<std::int64_t>&);      \
  template void fill_random(const dense::Context&, dense::DenseView<T>, std::uint64_t, std::int64_t, std::int64_t); \
  template void fill_random_rows(const dense::Context&, dense::DenseView<T>, std::uint64_t, const std::int64_t*,    \
                                 std::int64_t);                                                                     \
  template void apply_diagonal(const dense::Context&, const T*, dense::ConstDenseView<T>, dense::DenseView<T>);

BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
