// Checks shared by the host and device tests of the halo transports: the
// exchange alone must deliver, bit for bit, the rows of X at this rank's halo
// columns, and the operator built on each transport must match the reference
// and give the same bits whichever transport moved its halo.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "distributed_fixtures.hpp"
#include "operator_check.hpp"
#include "solver/operator/halo/halo_plan.hpp"
#include "solver/operator/halo/halo_transport.hpp"

namespace blockeigs::test {

inline const char* transport_label(solver::HaloTransport t) {
  switch (t) {
    case solver::HaloTransport::automatic: return "automatic";
    case solver::HaloTransport::mpi: return "mpi";
    case solver::HaloTransport::staged_mpi: return "staged_mpi";
    case solver::HaloTransport::peer: return "peer";
    case solver::HaloTransport::nccl: return "nccl";
  }
  return "?";
}

// The global columns this rank's rows of `whole` need from other ranks,
// sorted: the halo block's rows in order.
inline std::vector<std::int64_t> halo_columns(const CsrRows& whole, std::int64_t begin, std::int64_t end) {
  std::set<std::int64_t> columns;
  for (std::int64_t p = whole.row_offsets[begin]; p < whole.row_offsets[end]; ++p)
    if (whole.col_indices[p] < begin || whole.col_indices[p] >= end) columns.insert(whole.col_indices[p]);
  return {columns.begin(), columns.end()};
}

// One exchange of a block of U (T, or fp32 for an fp64 exchange) of `width`
// columns stored with a padded leading dimension; compares the halo block.
template <class T, class U>
void check_one_exchange(solver::HaloExchange<T>& halo, const dense::Context& context,
                        const std::vector<std::int64_t>& columns, std::int64_t begin, std::int64_t m,
                        std::int64_t global_rows, std::int64_t width) {
  SCOPED_TRACE(std::string(std::is_same_v<U, T> ? "T block" : "fp32 block") + ", width " + std::to_string(width));
  const std::vector<double> x_all = hashed_block(0, global_rows, width, 13);
  const std::int64_t ld = width + 2;
  std::vector<U> x_local(static_cast<std::size_t>(m * ld), U(-7));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < width; ++j) x_local[i * ld + j] = static_cast<U>(x_all[(begin + i) * width + j]);
  const Space space = context.space();
  dense::DenseBlock<U> X(space, m, width, ld);
  dense::copy_bytes(X.data(), space, x_local.data(), Space::host, sizeof(U) * x_local.size());

  ASSERT_TRUE(halo.reserve(width));
  halo.begin(X.cview());
  const dense::ConstDenseView<T> H = halo.end();
  context.synchronize();
  // An odd number of fp32 values rides in whole words of T: rows `stride` U apart.
  const std::int64_t words = solver::HaloExchange<T>::template words<U>(width);
  const std::int64_t stride = words * std::int64_t(sizeof(T)) / std::int64_t(sizeof(U));
  EXPECT_EQ(H.rows, static_cast<std::int64_t>(columns.size()));
  EXPECT_EQ(H.cols, words);
  EXPECT_EQ(H.space, space);
  std::vector<U> got(static_cast<std::size_t>(H.rows * stride));
  dense::copy_bytes(got.data(), Space::host, H.data, space, sizeof(U) * got.size());
  halo.release();
  int bad = 0;
  for (std::size_t r = 0; r < columns.size() && bad < 5; ++r)
    for (std::int64_t j = 0; j < width; ++j) {
      const U want = static_cast<U>(x_all[columns[r] * width + j]);
      if (std::memcmp(&got[r * stride + j], &want, sizeof(U)) != 0) {
        ADD_FAILURE() << "rank " << mpi_rank() << " halo row " << r << " (global " << columns[r] << ") col " << j
                      << ": " << got[r * stride + j] << " vs " << want;
        ++bad;
        break;
      }
    }
}

// The exchange alone through `transport`, reused across widths that grow and
// shrink; fp32 blocks too where T is double.
template <class T>
void check_halo_exchange(const dense::Context& context, const CsrRows& whole, const solver::RowPartition& partition,
                         solver::HaloTransport transport, const std::vector<std::int64_t>& widths,
                         const std::string& label) {
  SCOPED_TRACE(label + ", transport " + transport_label(transport));
  const int rank = mpi_rank();
  const std::int64_t begin = partition.begin(rank), end = partition.end(rank);
  const std::vector<std::int64_t> columns = halo_columns(whole, begin, end);
  const solver::HaloPlan plan = solver::build_halo_plan(MPI_COMM_WORLD, partition, columns);
  ASSERT_EQ(plan.halo_rows(), static_cast<std::int64_t>(columns.size()));
  auto halo = solver::make_halo_exchange<T>(MPI_COMM_WORLD, context, plan, {.transport = transport});
  if (transport != solver::HaloTransport::automatic) {
    EXPECT_EQ(halo->transport(), transport) << halo->fallback_note();
  }
  EXPECT_FALSE(halo->name().empty());
  for (std::int64_t w : widths) {
    check_one_exchange<T, T>(*halo, context, columns, begin, end - begin, whole.global_rows, w);
    if constexpr (std::is_same_v<T, double>)
      check_one_exchange<T, float>(*halo, context, columns, begin, end - begin, whole.global_rows, w);
  }
}

// The operator on `transport` against the reference (T blocks and, for an
// fp64 operator, fp32 ones); returns its A X for `width` on the host, for
// comparing transports bit for bit.
template <class T>
std::vector<T> check_operator_on_transport(const dense::Context& context, const CsrRows& whole,
                                           const solver::RowPartition& partition, solver::HaloTransport transport,
                                           std::int64_t width, const std::string& label) {
  SCOPED_TRACE(label + ", transport " + transport_label(transport));
  const int rank = mpi_rank();
  const CsrRows rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<T> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                    {.transport = transport});
  if (transport != solver::HaloTransport::automatic) {
    EXPECT_EQ(op.transport(), transport) << op.halo_transport();
  }
  for (std::int64_t w : {std::int64_t{1}, width, std::int64_t{3}}) check_operator_apply(op, context, whole, w, label);
  if constexpr (std::is_same_v<T, double>) {
    for (std::int64_t w : {std::int64_t{4}, std::int64_t{3}, width})
      check_operator_apply_single(op, context, whole, w, label);
    check_rounded_apply(op, context, whole, {1, 4, 3}, label);
  }

  const std::int64_t m = op.local_rows();
  const std::vector<double> x = hashed_block(partition.begin(rank), m, width, 21);
  std::vector<T> x_local(x.begin(), x.end()), y(static_cast<std::size_t>(m * width));
  const Space space = context.space();
  dense::DenseBlock<T> X(space, m, width), Y(space, m, width);
  dense::copy_bytes(X.data(), space, x_local.data(), Space::host, sizeof(T) * x_local.size());
  op.apply(T(1), X.cview(), T(0), Y.view());
  context.synchronize();
  dense::copy_bytes(y.data(), Space::host, Y.data(), space, sizeof(T) * y.size());
  return y;
}

}  // namespace blockeigs::test
