#include "io/generators/fem_p1.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace blockeigs::io::fem {
namespace {

int dimensions(GeneratorKind kind) {
  return kind == GeneratorKind::fem_p1_1d ? 1 : kind == GeneratorKind::fem_p1_2d ? 2 : 3;
}

// The 1D stencils in integers: K = (1/h) kk, M = (h/6) mm.
int kk(int d) { return d == 0 ? 2 : -1; }
int mm(int d) { return d == 0 ? 4 : 1; }

}  // namespace

TensorStencil::TensorStencil(const GeneratorSpec& spec) {
  const int dims = dimensions(spec.kind);
  grid_ = {spec.nx, dims > 1 ? spec.ny : 1, dims > 2 ? spec.nz : 1};
  const std::int64_t extents[3] = {grid_.nx, grid_.ny, grid_.nz};
  double h[3];
  for (int i = 0; i < dims; ++i) h[i] = 1.0 / static_cast<double>(extents[i] + 1);
  const bool stiffness = spec.part == FemPart::stiffness;
  const int reach_of[3] = {1, dims > 1 ? 1 : 0, dims > 2 ? 1 : 0};
  for (int dz = -reach_of[2]; dz <= reach_of[2]; ++dz)
    for (int dy = -reach_of[1]; dy <= reach_of[1]; ++dy)
      for (int dx = -reach_of[0]; dx <= reach_of[0]; ++dx) {
        const int d[3] = {dx, dy, dz};
        if (!stiffness) {
          double v = 1.0;
          for (int j = 0; j < dims; ++j) v *= h[j] * mm(d[j]) / 6.0;
          value_[slot(dx, dy, dz)] = v;
          continue;
        }
        // Term i: kk(d_i) prod_{j != i} mm(d_j), an integer, times (1/h_i) prod_{j != i} h_j / 6.
        // On a cube every term has the same scale: summing the integers first keeps exact zeros exact.
        double scale[3];
        int coefficient[3];
        bool one_scale = true;
        for (int i = 0; i < dims; ++i) {
          scale[i] = 1.0 / h[i];
          coefficient[i] = kk(d[i]);
          for (int j = 0; j < dims; ++j)
            if (j != i) {
              scale[i] *= h[j] / 6.0;
              coefficient[i] *= mm(d[j]);
            }
          one_scale = one_scale && scale[i] == scale[0];
        }
        double v = 0.0;
        if (one_scale) {
          int sum = 0;
          for (int i = 0; i < dims; ++i) sum += coefficient[i];
          v = scale[0] * sum;
        } else {
          for (int i = 0; i < dims; ++i) v += scale[i] * coefficient[i];
        }
        value_[slot(dx, dy, dz)] = v;
      }
}

std::int64_t TensorStencil::nnz() const {
  // Offset d has an entry at every point whose neighbour d is inside: prod (n_i - |d_i|).
  std::int64_t total = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (value_[slot(dx, dy, dz)] == 0.0) continue;
        const std::int64_t count = std::max<std::int64_t>(0, grid_.nx - std::abs(dx)) *
                                   std::max<std::int64_t>(0, grid_.ny - std::abs(dy)) *
                                   std::max<std::int64_t>(0, grid_.nz - std::abs(dz));
        total += count;
      }
  return total;
}

std::vector<double> generalized_eigenvalues(const GeneratorSpec& spec) {
  const int dims = dimensions(spec.kind);
  const std::int64_t extents[3] = {spec.nx, spec.ny, spec.nz};
  std::vector<double> out{0.0};
  for (int i = 0; i < dims; ++i) {
    const auto n = static_cast<double>(extents[i]);
    const double h = 1.0 / (n + 1.0);
    std::vector<double> next;
    next.reserve(out.size() * static_cast<std::size_t>(extents[i]));
    for (const double partial : out)
      for (std::int64_t j = 1; j <= extents[i]; ++j) {
        // 1 - cos t = 2 sin^2(t / 2) keeps the smallest ones accurate to the last digits.
        const double t = std::numbers::pi * static_cast<double>(j) * h;
        const double s = std::sin(0.5 * t);
        next.push_back(partial + 6.0 * (2.0 * s * s) / (h * h * (2.0 + std::cos(t))));
      }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace blockeigs::io::fem
