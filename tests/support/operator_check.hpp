// The check shared by the host and device tests of the distributed operator:
// apply it to a rank-count independent block and compare every local row
// with the single-rank reference product, within a bound from the row.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "distributed_fixtures.hpp"
#include "solver/operator/distributed_operator.hpp"

namespace blockeigs::test {

// Applies an existing operator (of `whole`, distributed over MPI_COMM_WORLD
// by `partition`) to a block of `width` columns and checks the result; an
// operator may be checked at several widths in turn (its buffers grow and
// are reused).
template <class T>
void check_operator_apply(solver::LinearOperator<T>& op, const solver::RowPartition& partition,
                          const dense::Context& context, const CsrRows& whole, std::int64_t width,
                          const std::string& label) {
  SCOPED_TRACE(label + ", width " + std::to_string(width));
  MPI_Comm comm = MPI_COMM_WORLD;
  const int rank = mpi_rank(comm);
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank), m = end - begin;
  ASSERT_EQ(op.local_rows(), m);

  const std::vector<double> x_all = hashed_block(0, whole.global_rows, width, 7);
  std::vector<T> x_local(static_cast<std::size_t>(m * width)), y_local(x_local.size());
  for (std::int64_t e = 0; e < m * width; ++e) x_local[e] = static_cast<T>(x_all[begin * width + e]);
  std::vector<double> x_rounded(x_all.begin(), x_all.end());
  for (double& v : x_rounded) v = static_cast<T>(v);  // the reference sees what the operator sees

  const Space space = context.space();
  dense::DenseBlock<T> X(space, m, width), Y(space, m, width);
  dense::copy_bytes(X.data(), space, x_local.data(), Space::host, sizeof(T) * x_local.size());

  std::vector<double> y_ref, scale;
  const double eps = std::numeric_limits<T>::epsilon();
  reference_rows(whole, x_rounded, width, begin, end, y_ref, scale, eps);

  // beta = 0 on a NaN-filled Y: Y must not be read.
  dense::fill_bytes(Y.data(), space, 0xff, sizeof(T) * m * width);
  op.apply(T(1), X.view(), T(0), Y.view());
  context.synchronize();
  dense::copy_bytes(y_local.data(), Space::host, Y.data(), space, sizeof(T) * y_local.size());
  int bad = 0;
  for (std::int64_t i = 0; i < m && bad < 5; ++i)
    for (std::int64_t j = 0; j < width; ++j) {
      const double got = y_local[i * width + j], want = y_ref[i * width + j];
      if (!(std::abs(got - want) <= scale[i])) {
        ADD_FAILURE() << "rank " << rank << " row " << begin + i << " col " << j << ": " << got << " vs " << want;
        ++bad;
        break;
      }
    }

  // alpha = 2, beta = -0.5 on the result just computed: Y = 2 A X - 0.5 A X = 1.5 A X.
  op.apply(T(2), X.view(), T(-0.5), Y.view());
  context.synchronize();
  dense::copy_bytes(y_local.data(), Space::host, Y.data(), space, sizeof(T) * y_local.size());
  for (std::int64_t i = 0; i < m && bad < 5; ++i)
    for (std::int64_t j = 0; j < width; ++j) {
      const double got = y_local[i * width + j], want = 1.5 * y_ref[i * width + j];
      if (!(std::abs(got - want) <= 4 * scale[i])) {
        ADD_FAILURE() << "rank " << rank << " row " << begin + i << " col " << j << " (beta != 0): " << got << " vs "
                      << want;
        ++bad;
        break;
      }
    }
}

template <class T>
void check_operator_apply(solver::DistributedOperator<T>& op, const dense::Context& context, const CsrRows& whole,
                          std::int64_t width, const std::string& label) {
  check_operator_apply<T>(op, op.partition(), context, whole, width, label);
}

// The operator's fp32 copy (rounded_to_single) against the single-rank
// reference of the matrix with its values rounded to fp32, at each width in
// turn (odd widths ride in the halo's fp64 words with a padding value).
inline void check_rounded_apply(solver::DistributedOperator<double>& op, const dense::Context& context,
                                const CsrRows& whole, std::initializer_list<std::int64_t> widths,
                                const std::string& label) {
  CsrRows rounded = whole;
  for (double& v : rounded.values) v = static_cast<float>(v);
  const std::unique_ptr<solver::LinearOperator<float>> single = op.rounded_to_single();
  ASSERT_TRUE(single);
  EXPECT_EQ(single->local_rows(), op.local_rows());
  for (std::int64_t w : widths)
    check_operator_apply<float>(*single, op.partition(), context, rounded, w, label + ", rounded to fp32");
}

// apply_single (X in fp32, Y in fp64) of an fp64 operator against the
// single-rank reference of the rounded X, on a NaN-filled Y (not read).
inline void check_operator_apply_single(solver::DistributedOperator<double>& op, const dense::Context& context,
                                        const CsrRows& whole, std::int64_t width, const std::string& label) {
  SCOPED_TRACE(label + ", fp32 X, width " + std::to_string(width));
  const int rank = mpi_rank(MPI_COMM_WORLD);
  const solver::RowPartition& partition = op.partition();
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank), m = end - begin;
  std::vector<double> x_all = hashed_block(0, whole.global_rows, width, 9);
  for (double& v : x_all) v = static_cast<float>(v);
  std::vector<float> x_local(static_cast<std::size_t>(m * width));
  std::vector<double> y_local(x_local.size());
  for (std::int64_t e = 0; e < m * width; ++e) x_local[e] = static_cast<float>(x_all[begin * width + e]);
  const Space space = context.space();
  dense::DenseBlock<float> X(space, m, width);
  dense::DenseBlock<double> Y(space, m, width);
  dense::copy_bytes(X.data(), space, x_local.data(), Space::host, sizeof(float) * x_local.size());
  std::vector<double> y_ref, scale;
  reference_rows(whole, x_all, width, begin, end, y_ref, scale, std::numeric_limits<double>::epsilon());
  dense::fill_bytes(Y.data(), space, 0xff, sizeof(double) * m * width);
  op.apply_single(X.cview(), Y.view());
  context.synchronize();
  dense::copy_bytes(y_local.data(), Space::host, Y.data(), space, sizeof(double) * y_local.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < width; ++j) {
      const double got = y_local[i * width + j], want = y_ref[i * width + j];
      if (!(std::abs(got - want) <= scale[i])) {
        ADD_FAILURE() << "rank " << rank << " row " << begin + i << " col " << j << ": " << got << " vs " << want;
        return;
      }
    }
}

// apply_column_major of an fp64 operator against the single-rank reference:
// X and Y column-major with `pad` rows of padding (NaN, never read; Y's must
// stay untouched), beta = 0 on a NaN-filled Y, then alpha = 2, beta = -0.5.
inline void check_operator_apply_column_major(solver::DistributedOperator<double>& op, const dense::Context& context,
                                              const CsrRows& whole, std::int64_t width, std::int64_t pad,
                                              const std::string& label) {
  SCOPED_TRACE(label + ", column-major, width " + std::to_string(width) + ", padding " + std::to_string(pad));
  const int rank = mpi_rank(MPI_COMM_WORLD);
  const solver::RowPartition& partition = op.partition();
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank), m = end - begin, ld = m + pad;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x_all = hashed_block(0, whole.global_rows, width, 5);
  std::vector<double> x_local(static_cast<std::size_t>(ld * width), nan), y_local(x_local.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < width; ++j) x_local[i + j * ld] = x_all[(begin + i) * width + j];
  const Space space = context.space();
  dense::Buffer<double> X(space, x_local), Y(space, x_local.size());
  std::vector<double> y_ref, scale;
  reference_rows(whole, x_all, width, begin, end, y_ref, scale, std::numeric_limits<double>::epsilon());
  dense::fill_bytes(Y.data(), space, 0xff, sizeof(double) * Y.size());
  for (const auto& [alpha, beta, factor] : {std::tuple{1.0, 0.0, 1.0}, {2.0, -0.5, 1.5}}) {
    op.apply_column_major(alpha, {space, m, width, ld, X.data()}, beta, {space, m, width, ld, Y.data()});
    context.synchronize();
    dense::copy_bytes(y_local.data(), Space::host, Y.data(), space, sizeof(double) * y_local.size());
    for (std::int64_t i = 0; i < ld; ++i)
      for (std::int64_t j = 0; j < width; ++j) {
        const double got = y_local[i + j * ld];
        if (i >= m) {
          ASSERT_TRUE(std::isnan(got)) << "rank " << rank << " wrote padding row " << i << " of column " << j;
          continue;
        }
        const double want = factor * y_ref[i * width + j];
        ASSERT_LE(std::abs(got - want), 4 * scale[i]) << "rank " << rank << " row " << begin + i << " col " << j
                                                      << " (beta " << beta << "): " << got << " vs " << want;
      }
  }
}

template <class T>
void check_distributed_apply(const dense::Context& context, const CsrRows& whole, const solver::RowPartition& partition,
                             std::int64_t width, const std::string& label, Algorithm algorithm = Algorithm::automatic) {
  const int rank = mpi_rank(MPI_COMM_WORLD);
  const CsrRows rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<T> op(MPI_COMM_WORLD, context, rows, partition, algorithm);
  check_operator_apply(op, context, whole, width, label);
}

// A complex operator of T (complex<float> or complex<double>) built from
// `whole`'s rows over `partition`, against the single-rank product in complex
// double: beta = 0 on a NaN-filled Y, then complex alpha and beta on the
// result. Each entry within a bound from its row's |a||x|.
template <class T>
void check_complex_apply(const dense::Context& context, const ComplexCsrRows& whole,
                         const solver::RowPartition& partition, std::int64_t width, const std::string& label) {
  using C = std::complex<double>;
  SCOPED_TRACE(label + ", complex, width " + std::to_string(width));
  const int rank = mpi_rank(MPI_COMM_WORLD);
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank), m = end - begin;
  solver::DistributedOperator<T> op(MPI_COMM_WORLD, context, slice_rows(whole, begin, end), partition);
  ASSERT_EQ(op.local_rows(), m);
  EXPECT_FALSE(op.applies_single());
  const std::vector<double> re = hashed_block(0, whole.global_rows, width, 7);
  const std::vector<double> im = hashed_block(0, whole.global_rows, width, 8);
  std::vector<C> x_all(re.size());
  for (std::size_t e = 0; e < re.size(); ++e) x_all[e] = C(static_cast<T>(C(re[e], im[e])));  // what the operator sees
  std::vector<T> x_local(static_cast<std::size_t>(m * width)), y_local(x_local.size());
  for (std::int64_t e = 0; e < m * width; ++e) x_local[e] = static_cast<T>(x_all[begin * width + e]);

  std::vector<C> y_ref(static_cast<std::size_t>(m * width));
  std::vector<double> scale(static_cast<std::size_t>(m));
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t r = begin + i;
    double size = 0;
    for (std::int64_t p = whole.row_offsets[r]; p < whole.row_offsets[r + 1]; ++p) {
      const C a = C(static_cast<T>(whole.values[p]));
      for (std::int64_t j = 0; j < width; ++j) y_ref[i * width + j] += a * x_all[whole.col_indices[p] * width + j];
      size += std::abs(a) * 1.5;  // |x| <= sqrt(2)
    }
    scale[i] = 8 * eps * (whole.row_offsets[r + 1] - whole.row_offsets[r] + 2) * (size + 1e-300);
  }

  const Space space = context.space();
  dense::DenseBlock<T> X(space, m, width), Y(space, m, width);
  dense::copy_bytes(X.data(), space, x_local.data(), Space::host, sizeof(T) * x_local.size());
  dense::fill_bytes(Y.data(), space, 0xff, sizeof(T) * m * width);
  const C alpha(2, 1), beta(-0.5, 0.25);
  for (const auto& [a, b, factor] : {std::tuple{C(1), C(0), C(1)}, {alpha, beta, alpha + beta}}) {
    op.apply(static_cast<T>(a), X.view(), static_cast<T>(b), Y.view());
    context.synchronize();
    dense::copy_bytes(y_local.data(), Space::host, Y.data(), space, sizeof(T) * y_local.size());
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < width; ++j) {
        const C got(y_local[i * width + j]), want = factor * y_ref[i * width + j];
        ASSERT_LE(std::abs(got - want), 4 * scale[i]) << "rank " << rank << " row " << begin + i << " col " << j
                                                      << " (beta " << b << "): " << got << " vs " << want;
      }
  }
}

}  // namespace blockeigs::test
