// execution.local_order: band by reverse Cuthill-McKee: a start vertex by
// George and Liu's search for a pseudo-peripheral vertex, then breadth-first
// level sets numbered in the order of each vertex's first-numbered parent,
// children by degree. Each level is expanded by the rank's threads; the
// numbering is the same for any number of threads.
#include "solver/operator/partition/band_order.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "core/huge_pages.hpp"
#include "core/thread_share.hpp"

namespace blockeigs::solver {
namespace {

using Vertex = std::int32_t;

// Breadth-first searches for the start vertex: from the component's first
// vertex, then from the narrowest vertex of its last level (on renumbered
// grids 2 give the band of 8 in less time: docs/benchmarks/partition.md#band-order).
constexpr int kMaxSearches = 2;
// Frontiers smaller than this are expanded on one thread.
constexpr std::int64_t kParallelFrontier = 4096;

// The rank's own graph: an edge for each nonzero between two of its rows (the
// diagonal, other ranks' columns and explicit zeros left out).
struct LocalGraph {
  std::vector<std::int64_t> offsets;  // vertices + 1
  std::unique_ptr<Vertex[]> neighbours;
  Vertex degree(Vertex v) const { return static_cast<Vertex>(offsets[v + 1] - offsets[v]); }
};

LocalGraph local_graph(const CsrRows& rows) {
  const std::int64_t m = rows.local_rows(), begin = rows.first_row, end = begin + m;
  const auto is_edge = [&](std::int64_t i, std::int64_t k) {
    const std::int64_t j = rows.col_indices[k];
    return j >= begin && j < end && j != begin + i && rows.values[k] != 0.0;
  };
  LocalGraph g;
  g.offsets.assign(static_cast<std::size_t>(m) + 1, 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t count = 0;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) count += is_edge(i, k);
    g.offsets[i + 1] = count;
  }
  for (std::int64_t i = 0; i < m; ++i) g.offsets[i + 1] += g.offsets[i];
  g.neighbours = std::make_unique_for_overwrite<Vertex[]>(static_cast<std::size_t>(g.offsets[m]) + 1);
  advise_huge_pages(g.neighbours.get(), static_cast<std::size_t>(g.offsets[m]) * sizeof(Vertex));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t at = g.offsets[i];
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      if (is_edge(i, k)) g.neighbours[at++] = static_cast<Vertex>(rows.col_indices[k] - begin);
  }
  return g;
}

// One label per vertex: its position once numbered; before, kUnseen, or
// while in the level being found, -(key + 2) with key the least position of
// a vertex of the level before that reaches it (kSeen in the searches).
class CuthillMcKee {
 public:
  CuthillMcKee(const LocalGraph& graph, Vertex vertices)
      : graph_(graph),
        vertices_(vertices),
        label_(static_cast<std::size_t>(vertices), kUnseen),
        found_(static_cast<std::size_t>(omp_get_max_threads())) {
    order_.reserve(static_cast<std::size_t>(vertices));
  }

  // Each vertex's position, components one after another from their lowest
  // vertex (with a one-sided pattern, the start found from v may not reach v).
  const std::vector<Vertex>& number() {
    for (Vertex v = 0; v < vertices_; ++v)
      while (label_[v] == kUnseen) number_component(start_vertex(v));
    return label_;
  }

 private:
  static constexpr Vertex kUnseen = -1, kSeen = -2;

  // The label an unnumbered neighbour of frontier vertex v takes (or keeps, if higher).
  Vertex mark_of(Vertex v, bool keyed) const { return keyed ? -(label_[v] + 2) : kSeen; }

  // Appends the unseen out-neighbours of order_[first, last) to order_. With
  // `keyed` (the frontier numbered), each one's key becomes the least
  // position among the frontier vertices that reach it.
  void expand(std::int64_t first, std::int64_t last, bool keyed) {
    if (last - first < kParallelFrontier) {
      for (std::int64_t at = first; at < last; ++at) {
        const Vertex v = order_[at], mark = mark_of(v, keyed);
        for (std::int64_t k = graph_.offsets[v]; k < graph_.offsets[v + 1]; ++k) {
          Vertex& label = label_[graph_.neighbours[k]];
          if (label == kUnseen) {
            label = mark;
            order_.push_back(graph_.neighbours[k]);
          } else if (label < kUnseen && mark > label) {
            label = mark;
          }
        }
      }
      return;
    }
    const int threads = static_cast<int>(found_.size());
    for (std::vector<Vertex>& part : found_) part.clear();  // also those of threads the runtime does not start
#pragma omp parallel num_threads(threads)
    {
      std::vector<Vertex>& mine = found_[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t at = first; at < last; ++at) {
        const Vertex v = order_[at], mark = mark_of(v, keyed);
        for (std::int64_t k = graph_.offsets[v]; k < graph_.offsets[v + 1]; ++k) {
          std::atomic_ref<Vertex> label(label_[graph_.neighbours[k]]);
          Vertex now = label.load(std::memory_order_relaxed);
          while (now == kUnseen || (now < kUnseen && mark > now)) {
            if (label.compare_exchange_weak(now, mark, std::memory_order_relaxed)) {
              if (now == kUnseen) mine.push_back(graph_.neighbours[k]);
              break;
            }
          }
        }
      }
    }
    for (const std::vector<Vertex>& part : found_) order_.insert(order_.end(), part.begin(), part.end());
  }

  // Breadth-first levels from `root` into order_, marked kSeen; returns the last level's start and the depth.
  std::pair<std::int64_t, int> levels_from(Vertex root) {
    order_.clear();
    order_.push_back(root);
    label_[root] = kSeen;
    std::int64_t first = 0, last = 1;
    int depth = 1;
    for (;;) {
      expand(first, last, false);
      if (static_cast<std::int64_t>(order_.size()) == last) break;
      first = last;
      last = static_cast<std::int64_t>(order_.size());
      ++depth;
    }
    return {first, depth};
  }

  void unsee_order() {
    const auto n = static_cast<std::int64_t>(order_.size());
#pragma omp parallel for schedule(static) if (n > kParallelFrontier)
    for (std::int64_t at = 0; at < n; ++at) label_[order_[at]] = kUnseen;
  }

  // The vertex of least degree (then index) in order_[first, end).
  Vertex narrowest(std::int64_t first) const {
    Vertex best = order_[first];
    for (std::int64_t at = first + 1; at < static_cast<std::int64_t>(order_.size()); ++at) {
      const Vertex v = order_[at];
      if (std::pair(graph_.degree(v), v) < std::pair(graph_.degree(best), best)) best = v;
    }
    return best;
  }

  // George and Liu: the narrowest vertex of the last level from `root`, then
  // from it, while that deepens the levels, in at most kMaxSearches searches.
  Vertex start_vertex(Vertex root) {
    auto [last, depth] = levels_from(root);
    for (int search = 1;; ++search) {
      const Vertex candidate = narrowest(last);
      unsee_order();
      if (search >= kMaxSearches || depth == 1) return candidate;
      const auto [next_last, next_depth] = levels_from(candidate);
      if (next_depth <= depth) {
        unsee_order();
        return candidate;
      }
      last = next_last;
      depth = next_depth;
    }
  }

  // Numbers the level found after the frontier order_[first, last) (numbered,
  // in position order), which fills order_[last, end): each frontier vertex
  // in turn takes the new vertices whose key is its position, by degree then
  // index. Each thread takes a contiguous share of the frontier, so that its
  // children, put one after another in thread order, are the level in order.
  void number_level(std::int64_t first, std::int64_t last) {
    const auto end = static_cast<std::int64_t>(order_.size());
    const auto by_degree = [&](Vertex a, Vertex b) {
      return std::pair(graph_.degree(a), a) < std::pair(graph_.degree(b), b);
    };
    const int threads = last - first < kParallelFrontier ? 1 : static_cast<int>(found_.size());
    std::vector<std::int64_t> placed(static_cast<std::size_t>(threads) + 1, 0);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      std::vector<Vertex>& mine = found_[t];
      mine.clear();
      const auto [from, to] = thread_share(last - first);
      for (std::int64_t at = first + from; at < first + to; ++at) {
        const Vertex v = order_[at], mark = -(label_[v] + 2);
        const std::size_t children = mine.size();
        for (std::int64_t k = graph_.offsets[v]; k < graph_.offsets[v + 1]; ++k)
          if (label_[graph_.neighbours[k]] == mark) mine.push_back(graph_.neighbours[k]);
        std::sort(mine.begin() + static_cast<std::ptrdiff_t>(children), mine.end(), by_degree);
        mine.erase(std::unique(mine.begin() + static_cast<std::ptrdiff_t>(children), mine.end()), mine.end());
      }
      placed[t + 1] = static_cast<std::int64_t>(mine.size());
#pragma omp barrier
#pragma omp single
      for (int u = 0; u < threads; ++u) placed[u + 1] += placed[u];
      const std::int64_t at = last + placed[t];
      for (std::size_t i = 0; i < mine.size(); ++i) {
        order_[at + static_cast<std::int64_t>(i)] = mine[i];
        label_[mine[i]] = next_ + static_cast<Vertex>(placed[t] + static_cast<std::int64_t>(i));
      }
    }
    if (placed[threads] != end - last) throw LibraryError("band ordering: a level's vertices were not numbered once");
    next_ += static_cast<Vertex>(end - last);
  }

  void number_component(Vertex start) {
    order_.clear();
    order_.push_back(start);
    label_[start] = next_++;
    std::int64_t first = 0, last = 1;
    for (;;) {
      expand(first, last, true);
      if (static_cast<std::int64_t>(order_.size()) == last) break;
      number_level(first, last);
      first = last;
      last = static_cast<std::int64_t>(order_.size());
    }
  }

  const LocalGraph& graph_;
  const Vertex vertices_;
  std::vector<Vertex> label_, order_;
  std::vector<std::vector<Vertex>> found_;  // each thread's finds in a parallel expansion
  Vertex next_ = 0;
};

}  // namespace

std::string band_order_name() { return "reverse Cuthill-McKee"; }

std::vector<std::int64_t> band_order(const CsrRows& rows) {
  const std::int64_t m = rows.local_rows();
  // Labels of the level being found hold -(position + 2): positions stay 2 below int32's largest value.
  if (m > std::numeric_limits<Vertex>::max() - 2)
    throw LibraryError(detail::concat("band ordering: ", m, " rows on one rank exceed 32-bit local indices"));
  if (m == 0) return {};
  const LocalGraph graph = local_graph(rows);
  CuthillMcKee numbering(graph, static_cast<Vertex>(m));
  const std::vector<Vertex>& position = numbering.number();
  std::vector<std::int64_t> reversed(static_cast<std::size_t>(m));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) reversed[i] = m - 1 - position[i];
  return reversed;
}

}  // namespace blockeigs::solver
