// Scotch's Gibbs-Poole-Stockmeyer band ordering (SCOTCH_graphOrder), for
// partition-bench's comparison with the apps' reverse Cuthill-McKee.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include <ptscotch.h>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/operator/partition/band_order.hpp"

namespace blockeigs::solver {
namespace {

// The rank's own graph in Scotch's arrays (local vertex numbers from 0).
struct OwnGraph {
  std::vector<SCOTCH_Num> vertices;  // offsets, rows + 1
  std::vector<SCOTCH_Num> edges;
};

OwnGraph own_graph(const CsrRows& rows) {
  const std::int64_t m = rows.local_rows(), begin = rows.first_row, end = begin + m;
  OwnGraph g;
  g.vertices.reserve(static_cast<std::size_t>(m) + 1);
  g.edges.reserve(static_cast<std::size_t>(rows.nnz()));
  g.vertices.push_back(0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t j = rows.col_indices[k];
      if (j >= begin && j < end && j != begin + i && rows.values[k] != 0.0)
        g.edges.push_back(static_cast<SCOTCH_Num>(j - begin));
    }
    g.vertices.push_back(static_cast<SCOTCH_Num>(g.edges.size()));
  }
  return g;
}

}  // namespace

bool scotch_band_order_compiled() { return true; }

std::vector<std::int64_t> scotch_band_order(const CsrRows& rows, int passes) {
  const std::int64_t m = rows.local_rows();
  if (m == 0) return {};
  // One rank's rows fit int32 local indices (local_blocks.cpp), as they must Scotch's.
  if (rows.nnz() > std::numeric_limits<SCOTCH_Num>::max())
    throw LibraryError(detail::concat("band ordering: ", rows.nnz(), " nonzeros on one rank exceed Scotch's ",
                                      sizeof(SCOTCH_Num) * 8, "-bit integers"));
  OwnGraph g = own_graph(rows);
  const auto n = static_cast<SCOTCH_Num>(m);
  const auto arcs = static_cast<SCOTCH_Num>(g.edges.size());
  g.edges.push_back(0);  // never a null pointer, even without edges
  std::vector<SCOTCH_Num> position(static_cast<std::size_t>(m)), inverse(position.size());
  SCOTCH_Graph graph;
  SCOTCH_Strat strategy;
  int code = SCOTCH_graphInit(&graph);
  if (code != 0) throw LibraryError("Scotch's SCOTCH_graphInit failed");
  SCOTCH_stratInit(&strategy);
  code = SCOTCH_graphBuild(&graph, 0, n, g.vertices.data(), g.vertices.data() + 1, nullptr, nullptr, arcs,
                           g.edges.data(), nullptr);
  const std::string method = "g{pass=" + std::to_string(std::max(passes, 1)) + "}";
  if (code == 0) code = SCOTCH_stratGraphOrder(&strategy, method.c_str());
  if (code == 0)
    code = SCOTCH_graphOrder(&graph, &strategy, position.data(), inverse.data(), nullptr, nullptr, nullptr);
  SCOTCH_stratExit(&strategy);
  SCOTCH_graphExit(&graph);
  if (code != 0)
    throw LibraryError(detail::concat("Scotch's band ordering (SCOTCH_graphOrder) failed (code ", code, ")"));
  // Scotch does not report every failure of a method: check for a permutation.
  std::vector<std::int64_t> out(static_cast<std::size_t>(m));
  std::vector<char> taken(static_cast<std::size_t>(m), 0);
  for (std::int64_t i = 0; i < m; ++i) {
    const SCOTCH_Num p = position[i];
    if (p < 0 || p >= n || taken[p]) throw LibraryError("Scotch's band ordering returned no permutation");
    taken[p] = 1;
    out[i] = p;
  }
  return out;
}

}  // namespace blockeigs::solver
