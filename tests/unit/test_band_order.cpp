// The band order (reverse Cuthill-McKee) of one rank's rows: a permutation
// on awkward graphs (no rows, isolated rows, components, a one-sided
// pattern, columns of other ranks, explicit zeros), the same at any number of
// threads (frontiers past the parallel threshold included), and a narrow
// band on randomly numbered paths and grids.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "solver/operator/partition/band_order.hpp"

namespace blockeigs {
namespace {

using Edges = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Rows [first, first + n) of a matrix with a diagonal and an entry for each
// edge (both ways unless `one_sided`), vertex v at row first + v.
CsrRows rows_of(std::int64_t n, const Edges& edges, bool one_sided = false, std::int64_t first = 0) {
  std::vector<std::set<std::int64_t>> columns(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) columns[v].insert(first + v);
  for (const auto& [a, b] : edges) {
    columns[a].insert(first + b);
    if (!one_sided) columns[b].insert(first + a);
  }
  CsrRows rows;
  rows.global_rows = rows.global_cols = first + n + 10;
  rows.first_row = first;
  rows.row_offsets.assign(1, 0);
  for (const auto& row : columns) {
    for (const std::int64_t j : row) {
      rows.col_indices.push_back(j);
      rows.values.push_back(j == first + rows.local_rows() ? 4.0 : -1.0);
    }
    rows.row_offsets.push_back(rows.nnz());
  }
  return rows;
}

// Vertex v renamed shuffled[v].
Edges renamed(const Edges& edges, std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> shuffled(static_cast<std::size_t>(n));
  std::iota(shuffled.begin(), shuffled.end(), std::int64_t{0});
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(seed));
  Edges out;
  for (const auto& [a, b] : edges) out.emplace_back(shuffled[a], shuffled[b]);
  return out;
}

Edges grid(std::int64_t nx, std::int64_t ny, std::int64_t nz = 1) {
  Edges edges;
  const auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return (z * ny + y) * nx + x; };
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        if (x + 1 < nx) edges.emplace_back(at(x, y, z), at(x + 1, y, z));
        if (y + 1 < ny) edges.emplace_back(at(x, y, z), at(x, y + 1, z));
        if (z + 1 < nz) edges.emplace_back(at(x, y, z), at(x, y, z + 1));
      }
  return edges;
}

// A random graph of degree about 2 * per_vertex: its breadth-first levels
// grow past the threshold where a level is expanded by every thread.
Edges random_graph(std::int64_t n, int per_vertex, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  Edges edges;
  for (std::int64_t v = 0; v < n; ++v)
    for (int e = 0; e < per_vertex; ++e)
      if (const auto u = static_cast<std::int64_t>(random() % n); u != v) edges.emplace_back(v, u);
  return edges;
}

void expect_permutation(const std::vector<std::int64_t>& position, std::int64_t n) {
  ASSERT_EQ(static_cast<std::int64_t>(position.size()), n);
  std::vector<char> taken(static_cast<std::size_t>(n), 0);
  for (const std::int64_t p : position) {
    ASSERT_GE(p, 0);
    ASSERT_LT(p, n);
    EXPECT_FALSE(taken[p]) << "position " << p << " twice";
    taken[p] = 1;
  }
}

std::int64_t bandwidth(const CsrRows& rows, const std::vector<std::int64_t>& position) {
  std::int64_t widest = 0;
  const std::int64_t begin = rows.first_row, end = begin + rows.local_rows();
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      if (const std::int64_t j = rows.col_indices[k]; j >= begin && j < end)
        widest = std::max(widest, std::abs(position[i] - position[j - begin]));
  return widest;
}

// The order at 1, 3 and 8 threads: the same, and a permutation.
std::vector<std::int64_t> order_at_any_thread_count(const CsrRows& rows) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<std::int64_t> one = solver::band_order(rows);
  for (const int threads : {3, 8}) {
    omp_set_num_threads(threads);
    EXPECT_EQ(solver::band_order(rows), one) << threads << " threads";
  }
  omp_set_num_threads(before);
  expect_permutation(one, rows.local_rows());
  return one;
}

TEST(BandOrder, NoRowsOneRowAndIsolatedRows) {
  EXPECT_TRUE(solver::band_order(rows_of(0, {})).empty());
  EXPECT_EQ(solver::band_order(rows_of(1, {})), std::vector<std::int64_t>{0});
  order_at_any_thread_count(rows_of(50, {}));
  order_at_any_thread_count(rows_of(50, {{3, 40}, {40, 7}}));
}

TEST(BandOrder, ARandomlyNumberedPathGetsBandwidthOne) {
  const std::int64_t n = 10007;
  Edges path;
  for (std::int64_t v = 0; v + 1 < n; ++v) path.emplace_back(v, v + 1);
  const CsrRows rows = rows_of(n, renamed(path, n, 3));
  EXPECT_EQ(bandwidth(rows, order_at_any_thread_count(rows)), 1);
}

// A 2D grid renumbered at random: the natural order's band (nx) within 2x,
// against about n for the random order.
TEST(BandOrder, ARandomlyNumberedGridGetsANarrowBand) {
  const std::int64_t nx = 37, ny = 90, n = nx * ny;
  const CsrRows rows = rows_of(n, renamed(grid(nx, ny), n, 5));
  std::vector<std::int64_t> identity(static_cast<std::size_t>(n));
  std::iota(identity.begin(), identity.end(), std::int64_t{0});
  EXPECT_GT(bandwidth(rows, identity), n / 2);
  EXPECT_LE(bandwidth(rows, order_at_any_thread_count(rows)), 2 * nx);
}

// Components numbered one after another: each takes a range of positions.
TEST(BandOrder, ComponentsTakeRangesOfPositions) {
  Edges edges = grid(6, 5);                                                  // vertices 0-29
  for (const auto& [a, b] : grid(4, 4)) edges.emplace_back(a + 40, b + 40);  // 40-55; 30-39 isolated
  const std::int64_t n = 60;                                                 // 56-59 isolated
  const Edges shuffled = renamed(edges, n, 11);
  const CsrRows rows = rows_of(n, shuffled);
  const std::vector<std::int64_t> position = order_at_any_thread_count(rows);
  // The component of each vertex by a union-find over the shuffled edges.
  std::vector<std::int64_t> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), std::int64_t{0});
  const auto root = [&](std::int64_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const auto& [a, b] : shuffled) parent[root(a)] = root(b);
  std::vector<std::int64_t> low(static_cast<std::size_t>(n), n), high(low.size(), -1), size(low.size(), 0);
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t c = root(v);
    low[c] = std::min(low[c], position[v]);
    high[c] = std::max(high[c], position[v]);
    ++size[c];
  }
  for (std::int64_t c = 0; c < n; ++c) {
    if (size[c] > 0) {
      EXPECT_EQ(high[c] - low[c] + 1, size[c]) << "component of vertex " << c;
    }
  }
}

// Frontiers of thousands of vertices (expanded by every thread): the same order at any thread count.
TEST(BandOrder, WideLevelsGiveTheSameOrderAtAnyThreadCount) {
  const std::int64_t n = 60000;
  order_at_any_thread_count(rows_of(n, random_graph(n, 3, 13)));
  const CsrRows cube = rows_of(27000, renamed(grid(30, 30, 30), 27000, 17));
  EXPECT_LE(bandwidth(cube, order_at_any_thread_count(cube)), 3 * 30 * 30);
}

// Only one direction of each edge (a pattern a symmetry check would refuse): still a permutation.
TEST(BandOrder, AOneSidedPatternStillGivesAPermutation) {
  const std::int64_t n = 5000;
  order_at_any_thread_count(rows_of(n, random_graph(n, 2, 19), true));
  order_at_any_thread_count(rows_of(900, renamed(grid(30, 30), 900, 23), true));
}

// Columns of other ranks and explicit zeros are not edges: the order is that of the rows without them.
TEST(BandOrder, OtherRanksColumnsAndExplicitZerosAreLeftOut) {
  const std::int64_t n = 400, first = 1000;
  const Edges edges = renamed(grid(20, 20), n, 29);
  const CsrRows plain = rows_of(n, edges, false, first);
  CsrRows extra;  // each row also reads a column below and one above the range
  extra.global_rows = extra.global_cols = plain.global_rows + 1000;
  extra.first_row = first;
  extra.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    extra.col_indices.push_back(i % first);
    extra.values.push_back(-1.0);
    for (std::int64_t k = plain.row_offsets[i]; k < plain.row_offsets[i + 1]; ++k) {
      extra.col_indices.push_back(plain.col_indices[k]);
      extra.values.push_back(plain.values[k]);
    }
    extra.col_indices.push_back(first + n + i);
    extra.values.push_back(-1.0);
    extra.row_offsets.push_back(extra.nnz());
  }
  EXPECT_EQ(solver::band_order(extra), solver::band_order(plain));
  CsrRows zeros = rows_of(n, edges, false, first);
  for (double& value : zeros.values)
    if (value == -1.0) value = 0.0;  // every edge an explicit zero: all rows isolated
  std::vector<std::int64_t> isolated(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) isolated[i] = n - 1 - i;  // numbered in order, then reversed
  EXPECT_EQ(solver::band_order(zeros), isolated);
}

}  // namespace
}  // namespace blockeigs
