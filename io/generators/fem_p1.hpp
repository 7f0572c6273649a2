// fem_p1 (internal to io/; generators.hpp is the interface): the stiffness
// and mass matrices of linear elements on a uniform grid of the unit
// interval, square or cube with Dirichlet boundaries, n interior nodes per
// direction, h = 1/(n + 1) in each:
//   1D  K = (1/h) tridiag(-1, 2, -1),  M = (h/6) tridiag(1, 4, 1);
//   2D  K2 = K (x) M + M (x) K,        M2 = M (x) M;
//   3D  K3 = K (x) M (x) M + M (x) K (x) M + M (x) M (x) K,  M3 = M (x) M (x) M
// (the bilinear / trilinear Q1 elements). Rows are numbered x fastest.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "io/generators/generators.hpp"
#include "io/generators/grid.hpp"

namespace blockeigs::io::fem {

// A row's entries come from one 3 x 3 x 3 stencil (the tensor product of the
// 1D ones) restricted to the grid. Entries that vanish exactly (the face
// neighbours of the 3D stiffness on a cube: -16 + 8 + 8 in units of h/36)
// are not stored.
class TensorStencil {
 public:
  explicit TensorStencil(const GeneratorSpec& spec);

  const Grid& grid() const { return grid_; }
  // The stencil's values by GridStencil::slot (0: no entry), for GridStencil.
  const std::array<double, 27>& values() const { return value_; }
  std::int64_t nnz() const;

 private:
  static int slot(int dx, int dy, int dz) { return GridStencil::slot(dx, dy, dz); }
  Grid grid_;
  std::array<double, 27> value_{};  // 0: no entry
};

// The pencil's generalized eigenvalues (K x = lambda M x on spec's grid),
// ascending: sums over the directions of the 1D ones,
// lambda_j = (6 / h^2) (1 - cos(j pi h)) / (2 + cos(j pi h)), j = 1..n.
std::vector<double> generalized_eigenvalues(const GeneratorSpec& spec);

}  // namespace blockeigs::io::fem
