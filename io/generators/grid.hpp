// A structured grid of points numbered in natural order (x fastest), for the
// grid generators (internal to io/). Unused dimensions have extent 1, which
// lets one code path serve 1D, 2D and 3D.
#pragma once

#include <array>
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

// A 3 x 3 x 3 stencil on a grid, tabulated by the kind of grid point: in each
// direction a point may lack its lower neighbour, its upper one or both, and
// each of the 64 kinds holds its row once (column offsets from the row's
// index, ascending, and values). Stencil values that are exactly 0 are not
// stored. Building a row is then a table lookup and a copy.
class GridStencil {
 public:
  static int slot(int dx, int dy, int dz) { return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); }

  GridStencil(const Grid& grid, const std::array<double, 27>& values) : grid_(grid) {
    const std::int64_t plane = grid.nx * grid.ny;
    for (int kind = 0; kind < 64; ++kind) {
      // Of a direction's two bits, the low one says the lower neighbour exists, the high one the upper.
      auto exists = [&](int direction, int d) { return d == 0 || (kind >> (2 * direction + (d > 0)) & 1); };
      Row& row = rows_[kind];
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            if (exists(0, dx) && exists(1, dy) && exists(2, dz) && values[slot(dx, dy, dz)] != 0.0) {
              row.offset[row.length] = dz * plane + dy * grid.nx + dx;
              row.value[row.length++] = values[slot(dx, dy, dz)];
            }
    }
  }

  std::int64_t length(const GridCursor& at) const { return rows_[kind(at)].length; }

  // Writes the row of grid point `at` (index `index`), columns ascending; returns its length.
  std::int64_t fill(const GridCursor& at, std::int64_t index, std::int64_t* col, double* val) const {
    const Row& row = rows_[kind(at)];
    for (int k = 0; k < row.length; ++k) {
      col[k] = index + row.offset[k];
      val[k] = row.value[k];
    }
    return row.length;
  }

 private:
  struct Row {
    int length = 0;
    std::array<std::int64_t, 27> offset{};
    std::array<double, 27> value{};
  };
  static int sides(std::int64_t c, std::int64_t n) { return int{c > 0} | int{c + 1 < n} << 1; }
  int kind(const GridCursor& at) const {
    return sides(at.x, grid_.nx) | sides(at.y, grid_.ny) << 2 | sides(at.z, grid_.nz) << 4;
  }

  Grid grid_;
  std::array<Row, 64> rows_{};
};

}  // namespace blockeigs::io
