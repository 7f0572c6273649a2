// A structured grid of points numbered in natural order (x fastest), for the
// grid generators (internal to io/). Unused dimensions have extent 1, which
// lets one code path serve 1D, 2D and 3D.
#pragma once

#include <cstdint>

namespace blockeigs::io {

struct Grid {
  std::int64_t nx = 1, ny = 1, nz = 1;
  std::int64_t points() const { return nx * ny * nz; }
};

// Walks grid points in natural order without a division per point.
struct GridCursor {
  Grid grid;
  std::int64_t x, y, z;
  GridCursor(const Grid& g, std::int64_t index)
      : grid(g), x(index % g.nx), y(index / g.nx % g.ny), z(index / (g.nx * g.ny)) {}
  void advance() {
    if (++x < grid.nx) return;
    x = 0;
    if (++y < grid.ny) return;
    y = 0;
    ++z;
  }
};

// How many of the offsets -1, 0, +1 stay inside [0, n) at coordinate c.
inline int reach(std::int64_t c, std::int64_t n) { return 1 + (c > 0) + (c + 1 < n); }

// Whether coordinate c + d lies inside [0, n).
inline bool inside(std::int64_t c, int d, std::int64_t n) { return c + d >= 0 && c + d < n; }

}  // namespace blockeigs::io
