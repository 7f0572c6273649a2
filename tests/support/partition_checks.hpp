// Checks for the MPI tests of execution.partition and execution.local_order:
// a 3D Laplacian config, a matrix loaded and distributed or split from a
// whole one, the total halo, the operator against the input's matrix under
// the numbering, sorted rows, the numbering's round trip, and a chain with
// empty rows.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "tests/support/distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/renumbering.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"

namespace blockeigs::test::partition_checks {

using solver::DistributedRows;
using solver::RowPartition;

inline io::MatrixConfig grid3d(std::int64_t n, bool renumber) {
  io::MatrixConfig config;
  config.generator.kind = io::GeneratorKind::laplacian_3d;
  config.generator.nx = config.generator.ny = config.generator.nz = n;
  config.generator.renumber = renumber;
  config.generator.renumber_seed = 11;
  return config;
}

inline DistributedRows load(const io::MatrixConfig& config, PartitionMethod method,
                            LocalOrder order = LocalOrder::automatic) {
  DistributedRows m = solver::load_distributed_rows(config, MPI_COMM_WORLD);
  solver::distribute_rows(m, method, MPI_COMM_WORLD, order);
  return m;
}

// A matrix every rank holds whole, distributed by `partition` as load_distributed_rows would.
inline DistributedRows from_whole(const CsrRows& whole, const RowPartition& partition) {
  DistributedRows m;
  const int rank = mpi_rank();
  m.rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  m.partition = partition;
  m.numbering = solver::RowNumbering::identity(MPI_COMM_WORLD, partition);
  m.global_nnz = whole.nnz();
  return m;
}

inline long long total_halo(const DistributedRows& m) {
  const auto context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, m.rows, m.partition);
  long long mine = A.halo_plan().halo_rows(), total = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

// The operator of `m` applied to a block given in the input's numbering and
// mapped back equals the input matrix `whole` times that block.
inline void expect_input_matrix(const DistributedRows& m, const CsrRows& whole) {
  constexpr std::int64_t cols = 3;
  const int rank = mpi_rank();
  const RowPartition& input = m.numbering.original();
  const std::vector<double> x_all = hashed_block(0, whole.global_rows, cols, 5);
  const std::vector<double> x_mine(x_all.begin() + input.begin(rank) * cols, x_all.begin() + input.end(rank) * cols);
  const std::vector<double> x = m.numbering.from_original_rows(MPI_COMM_WORLD, x_mine, cols);
  const std::int64_t local = m.partition.rows(rank);
  ASSERT_EQ(static_cast<std::int64_t>(x.size()), local * cols);

  const auto context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context, m.rows, m.partition);
  dense::DenseBlock<double> X(Space::host, local, cols), Y(Space::host, local, cols);
  std::copy(x.begin(), x.end(), X.data());
  A.apply(1.0, X.cview(), 0.0, Y.view());
  const std::vector<double> y(Y.data(), Y.data() + local * cols);
  const std::vector<double> y_input = m.numbering.to_original_rows(MPI_COMM_WORLD, y, cols);

  std::vector<double> expected, scale;
  reference_rows(whole, x_all, cols, input.begin(rank), input.end(rank), expected, scale, 1.1e-16);
  ASSERT_EQ(y_input.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(std::abs(y_input[i] - expected[i]), scale[i / cols] + 1e-300) << "input row " << i / cols;
}

inline bool can_partition() { return solver::graph_partitioner_compiled(); }

// Columns strictly increase within each row, as CsrRows promises.
inline void expect_sorted_rows(const CsrRows& rows) {
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i] + 1; k < rows.row_offsets[i + 1]; ++k)
      ASSERT_LT(rows.col_indices[k - 1], rows.col_indices[k]) << "local row " << i;
}

// Every input row is on exactly one rank, and the numbering maps both ways.
inline void expect_numbering_round_trip(const DistributedRows& m) {
  const int rank = mpi_rank();
  std::vector<std::int64_t> original(static_cast<std::size_t>(m.rows.local_rows()));
  for (std::int64_t i = 0; i < m.rows.local_rows(); ++i) original[i] = m.numbering.original_row(i);
  const std::vector<std::int64_t> back = m.numbering.to_original_rows(MPI_COMM_WORLD, original, 1);
  const RowPartition& input = m.numbering.original();
  ASSERT_EQ(static_cast<std::int64_t>(back.size()), input.rows(rank));
  for (std::int64_t i = 0; i < input.rows(rank); ++i) EXPECT_EQ(back[i], input.begin(rank) + i);
  EXPECT_EQ(m.numbering.from_original_rows(MPI_COMM_WORLD, back, 1), original);
}

// A 1D chain with holes: rows 10-14 and 40 have no entries at all (not even a diagonal).
inline CsrRows chain_with_empty_rows(std::int64_t n) {
  auto empty = [](std::int64_t i) { return (i >= 10 && i < 15) || i == 40; };
  CsrRows whole;
  whole.global_rows = whole.global_cols = n;
  whole.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!empty(i)) {
      for (std::int64_t j : {i - 1, i, i + 1}) {
        if (j < 0 || j >= n || empty(j)) continue;
        whole.col_indices.push_back(j);
        whole.values.push_back(j == i ? 2.0 + 0.01 * double(i) : -1.0);
      }
    }
    whole.row_offsets.push_back(whole.nnz());
  }
  return whole;
}

}  // namespace blockeigs::test::partition_checks
