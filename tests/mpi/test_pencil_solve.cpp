// solver::lobpcg on the generators' known answers, at np 1-4 with a rank
// that owns no rows: fem_p1's pencils K x = lambda M x (B = M) at both ends
// against the closed form, the graph Laplacians of a path and a cycle with
// the constant vector as a constraint, and the 2D pencil deflated by its
// lowest exact modes as constraints. Every pair is re-checked here over the
// whole matrices: eigenvalues to 1e-8 relative, X^T B X = I to 1e-10,
// ||A x - lambda B x|| / (|lambda| ||B x||) at most the tolerance, and
// Y^T B X = 0 to 1e-10.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "core/checks.hpp"
#include "io/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

using solver::SpectrumEnd;
constexpr double kTolerance = 1e-10;

int rank_of() {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  return rank;
}

int size_of() {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

io::CsrRows whole(const io::GeneratorSpec& spec) { return io::generate_rows(spec, 0, io::generated_rows(spec)); }

io::GeneratorSpec fem(io::GeneratorKind kind, std::int64_t nx, std::int64_t ny, std::int64_t nz, io::FemPart part) {
  io::GeneratorSpec spec;
  spec.kind = kind;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.part = part;
  return spec;
}

io::GeneratorSpec graph(io::GraphKind kind, std::int64_t n) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::graph_laplacian;
  spec.graph = kind;
  spec.n = n;
  return spec;
}

// y = M x over the whole matrix; x and y n x k row-major.
std::vector<double> times(const io::CsrRows& m, const std::vector<double>& x, std::int64_t k) {
  std::vector<double> y(x.size(), 0.0);
  for (std::int64_t i = 0; i < m.global_rows; ++i)
    for (std::int64_t p = m.row_offsets[i]; p < m.row_offsets[i + 1]; ++p)
      for (std::int64_t j = 0; j < k; ++j) y[i * k + j] += m.values[p] * x[m.col_indices[p] * k + j];
  return y;
}

// The eigenvectors of every rank, gathered (n x k row-major) on every rank.
std::vector<double> gathered(const spmm::DenseBlock<double>& x, const solver::RowPartition& partition) {
  const std::int64_t k = x.cols(), n = partition.global_rows();
  std::vector<double> mine(static_cast<std::size_t>(x.rows() * k));
  solver::copy_block(spmm::Context::host(), x.cview(), spmm::DenseView<double>{Space::host, x.rows(), k, k, mine.data()});
  std::vector<int> counts(partition.ranks()), displs(partition.ranks());
  for (int r = 0; r < partition.ranks(); ++r) {
    counts[r] = static_cast<int>(partition.rows(r) * k);
    displs[r] = static_cast<int>(partition.begin(r) * k);
  }
  std::vector<double> all(static_cast<std::size_t>(n * k));
  BLOCKEIGS_MPI_CHECK(MPI_Allgatherv(mine.data(), counts[rank_of()], MPI_DOUBLE, all.data(), counts.data(),
                                     displs.data(), MPI_DOUBLE, MPI_COMM_WORLD));
  return all;
}

struct Pencil {
  io::CsrRows a, b;                  // b empty: B = I
  std::vector<double> wanted;        // the k wanted eigenvalues, in the solver's order
  std::vector<double> constraints;   // n x m row-major, whole; empty: none
  std::int64_t m = 0;
};

void solve_and_check(const Pencil& p, const solver::LobpcgOptions& options) {
  const std::int64_t n = p.a.global_rows, k = options.k;
  const solver::RowPartition partition = test::partition_with_empty_rank(n, size_of());
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, spmm::Context::host(), p.a, partition);
  std::optional<test::CsrTestOperator<double>> B;
  if (p.b.global_rows > 0) B.emplace(MPI_COMM_WORLD, spmm::Context::host(), p.b, partition);
  std::optional<spmm::DenseBlock<double>> Y;
  std::optional<spmm::ConstDenseView<double>> y_view;
  if (p.m > 0) {
    const std::int64_t begin = partition.begin(rank_of()), rows = partition.rows(rank_of());
    Y.emplace(Space::host, rows, p.m);
    std::copy(p.constraints.begin() + begin * p.m, p.constraints.begin() + (begin + rows) * p.m, Y->data());
    y_view = Y->cview();
  }
  const solver::LobpcgResult<double> r =
      solver::lobpcg<double>(A, options, nullptr, std::nullopt, B ? &*B : nullptr, y_view);
  ASSERT_TRUE(r.all_converged());
  EXPECT_EQ(r.generalized, B.has_value());
  EXPECT_EQ(r.constraints, p.m);
  ASSERT_EQ(r.eigenvalues.size(), static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j)
    EXPECT_NEAR(r.eigenvalues[j], p.wanted[j], 1e-8 * std::abs(p.wanted[j])) << "pair " << j;

  const std::vector<double> x = gathered(r.eigenvectors, partition);
  const std::vector<double> ax = times(p.a, x, k), bx = B ? times(p.b, x, k) : x;
  for (std::int64_t j = 0; j < k; ++j) {
    double residual = 0, norm = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = ax[i * k + j] - r.eigenvalues[j] * bx[i * k + j];
      residual += e * e;
      norm += bx[i * k + j] * bx[i * k + j];
    }
    EXPECT_LE(std::sqrt(residual) / (std::abs(r.eigenvalues[j]) * std::sqrt(norm)), 1.01 * kTolerance) << "pair " << j;
    for (std::int64_t l = 0; l < k; ++l) {  // X^T B X = I
      double g = 0;
      for (std::int64_t i = 0; i < n; ++i) g += x[i * k + j] * bx[i * k + l];
      EXPECT_NEAR(g, j == l ? 1.0 : 0.0, 1e-10) << "(X^T B X)(" << j << ", " << l << ")";
    }
    const std::vector<double>& y = p.constraints;
    const std::vector<double> by = p.b.global_rows > 0 ? times(p.b, y, p.m) : y;
    for (std::int64_t c = 0; c < p.m; ++c) {  // Y^T B X = 0, Y's columns B-normalised
      double g = 0, yy = 0;
      for (std::int64_t i = 0; i < n; ++i) g += y[i * p.m + c] * bx[i * k + j];
      for (std::int64_t i = 0; i < n; ++i) yy += y[i * p.m + c] * by[i * p.m + c];
      EXPECT_LE(std::abs(g) / std::sqrt(yy), 1e-10) << "constraint " << c << ", pair " << j;
    }
  }
}

solver::LobpcgOptions options(int k, SpectrumEnd which) {
  solver::LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = kTolerance;
  o.max_iterations = 5000;
  return o;
}

std::vector<double> wanted(std::vector<double> ascending, int k, SpectrumEnd which, int skip = 0) {
  if (which == SpectrumEnd::largest) std::reverse(ascending.begin(), ascending.end());
  return {ascending.begin() + skip, ascending.begin() + skip + k};
}

TEST(PencilSolve, FemP1PencilsAtBothEnds) {
  const io::GeneratorSpec grids[] = {fem(io::GeneratorKind::fem_p1_1d, 40, 1, 1, io::FemPart::stiffness),
                                     fem(io::GeneratorKind::fem_p1_2d, 9, 7, 1, io::FemPart::stiffness),
                                     fem(io::GeneratorKind::fem_p1_3d, 5, 4, 3, io::FemPart::stiffness)};
  for (const auto& stiffness : grids) {
    io::GeneratorSpec mass = stiffness;
    mass.part = io::FemPart::mass;
    for (const SpectrumEnd which : {SpectrumEnd::smallest, SpectrumEnd::largest}) {
      SCOPED_TRACE(io::describe(stiffness) + (which == SpectrumEnd::smallest ? ", smallest" : ", largest"));
      Pencil p{whole(stiffness), whole(mass), wanted(io::fem_p1_eigenvalues(stiffness), 6, which), {}, 0};
      solve_and_check(p, options(6, which));
    }
  }
}

TEST(PencilSolve, GraphLaplaciansWithTheConstantVector) {
  for (const auto& spec : {graph(io::GraphKind::path, 40), graph(io::GraphKind::cycle, 36)}) {
    SCOPED_TRACE(io::describe(spec));
    Pencil p{whole(spec), {}, wanted(io::laplacian_eigenvalues(spec), 5, SpectrumEnd::smallest, 1),
             std::vector<double>(static_cast<std::size_t>(spec.n), 1.0), 1};
    solve_and_check(p, options(5, SpectrumEnd::smallest));
  }
}

// The 2D pencil's three lowest modes sin(p pi x h) sin(q pi y h) as constraints: the next ones are found.
TEST(PencilSolve, FemP1PencilDeflatedByItsLowestModes) {
  const std::int64_t nx = 9, ny = 7;
  const io::GeneratorSpec stiffness = fem(io::GeneratorKind::fem_p1_2d, nx, ny, 1, io::FemPart::stiffness);
  io::GeneratorSpec mass = stiffness;
  mass.part = io::FemPart::mass;
  // The modes by their eigenvalue: lambda_x(p) + lambda_y(q), the 1D closed form in each direction.
  auto one_d = [](std::int64_t n, int j) {
    const double h = 1.0 / double(n + 1), t = std::numbers::pi * j * h;
    return 6.0 * (1 - std::cos(t)) / (h * h * (2 + std::cos(t)));
  };
  std::vector<std::pair<double, std::pair<int, int>>> modes;
  for (int q = 1; q <= ny; ++q)
    for (int pp = 1; pp <= nx; ++pp) modes.push_back({one_d(nx, pp) + one_d(ny, q), {pp, q}});
  std::sort(modes.begin(), modes.end());
  const std::int64_t n = nx * ny, m = 3;
  std::vector<double> y(static_cast<std::size_t>(n * m));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < m; ++c) {
      const auto [pp, q] = modes[c].second;
      y[i * m + c] = std::sin(pp * std::numbers::pi * double(i % nx + 1) / double(nx + 1)) *
                     std::sin(q * std::numbers::pi * double(i / nx + 1) / double(ny + 1));
    }
  Pencil p{whole(stiffness), whole(mass), wanted(io::fem_p1_eigenvalues(stiffness), 4, SpectrumEnd::smallest, 3), y, m};
  solve_and_check(p, options(4, SpectrumEnd::smallest));
}

}  // namespace
}  // namespace blockeigs
