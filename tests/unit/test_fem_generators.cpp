// The generators with known answers for A x = lambda B x and constraints:
// fem_p1's stiffness and mass matrices (1D, 2D, 3D) against Kronecker
// products of the 1D matrices built here, their pencil's closed-form
// eigenvalues against a dense solve, the graph Laplacians of a path and a
// cycle, renumbering, an HDF5 round trip, and the specs' messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/renumbering.hpp"
#include "tests/support/expect_error.hpp"
#include "test_matrices.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::io::FemPart;
using blockeigs::io::GeneratorKind;
using blockeigs::io::GeneratorSpec;
using blockeigs::io::GraphKind;
using blockeigs::test::dense;
using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;
constexpr double eps = std::numeric_limits<double>::epsilon();

GeneratorSpec fem(int dims, FemPart part, std::int64_t nx, std::int64_t ny = 1, std::int64_t nz = 1) {
  GeneratorSpec spec;
  spec.kind = dims == 1 ? GeneratorKind::fem_p1_1d : dims == 2 ? GeneratorKind::fem_p1_2d : GeneratorKind::fem_p1_3d;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.part = part;
  return spec;
}

GeneratorSpec graph(GraphKind kind, std::int64_t n) {
  GeneratorSpec spec;
  spec.kind = GeneratorKind::graph_laplacian;
  spec.graph = kind;
  spec.n = n;
  return spec;
}

CsrRows whole(const GeneratorSpec& spec) {
  return blockeigs::io::generate_rows(spec, 0, blockeigs::io::generated_rows(spec));
}

// Dense row-major products, built here from the formulas, independently of io/fem_p1.cpp.
using Dense = std::vector<double>;

Dense tridiagonal(std::int64_t n, double diagonal, double off) {
  Dense a(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i * n + i] = diagonal;
    if (i + 1 < n) a[i * n + i + 1] = a[(i + 1) * n + i] = off;
  }
  return a;
}

Dense stiffness_1d(std::int64_t n) {
  const double h = 1.0 / double(n + 1);
  return tridiagonal(n, 2.0 / h, -1.0 / h);
}

Dense mass_1d(std::int64_t n) {
  const double h = 1.0 / double(n + 1);
  return tridiagonal(n, 4.0 * h / 6.0, h / 6.0);
}

// kron(a, b) with a (na x na) outer, b (nb x nb) inner: row (i, k) -> i nb + k.
Dense kron(const Dense& a, std::int64_t na, const Dense& b, std::int64_t nb) {
  const std::int64_t n = na * nb;
  Dense c(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < na; ++i)
    for (std::int64_t j = 0; j < na; ++j)
      for (std::int64_t k = 0; k < nb; ++k)
        for (std::int64_t l = 0; l < nb; ++l) c[(i * nb + k) * n + j * nb + l] = a[i * na + j] * b[k * nb + l];
  return c;
}

Dense plus(Dense a, const Dense& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// The spec's matrix from the 1D ones; x is numbered fastest, so x is the innermost factor.
Dense kronecker_reference(const GeneratorSpec& spec) {
  const bool stiffness = spec.part == FemPart::stiffness;
  const std::int64_t nx = spec.nx, ny = spec.ny, nz = spec.nz;
  const Dense kx = stiffness_1d(nx), mx = mass_1d(nx);
  if (spec.kind == GeneratorKind::fem_p1_1d) return stiffness ? kx : mx;
  const Dense ky = stiffness_1d(ny), my = mass_1d(ny);
  if (spec.kind == GeneratorKind::fem_p1_2d)
    return stiffness ? plus(kron(my, ny, kx, nx), kron(ky, ny, mx, nx)) : kron(my, ny, mx, nx);
  const Dense kz = stiffness_1d(nz), mz = mass_1d(nz);
  const Dense mm_xy = kron(my, ny, mx, nx);
  if (!stiffness) return kron(mz, nz, mm_xy, nx * ny);
  return plus(plus(kron(mz, nz, kron(my, ny, kx, nx), nx * ny), kron(mz, nz, kron(ky, ny, mx, nx), nx * ny)),
              kron(kz, nz, mm_xy, nx * ny));
}

std::vector<GeneratorSpec> fem_cases() {
  std::vector<GeneratorSpec> cases;
  for (const FemPart part : {FemPart::stiffness, FemPart::mass})
    for (const auto& s : {fem(1, part, 9), fem(1, part, 1), fem(2, part, 5, 4), fem(2, part, 4, 4), fem(2, part, 1, 3),
                          fem(3, part, 3, 3, 3), fem(3, part, 4, 3, 2), fem(3, part, 1, 1, 1)})
      cases.push_back(s);
  return cases;
}

TEST(FemP1, OneDimensionalMatricesAreTheTridiagonals) {
  const double h = 1.0 / 6.0;
  const CsrRows k = whole(fem(1, FemPart::stiffness, 5)), m = whole(fem(1, FemPart::mass, 5));
  ASSERT_EQ(k.nnz(), 13);
  ASSERT_EQ(m.nnz(), 13);
  for (std::int64_t r = 0; r < 5; ++r)
    for (std::int64_t p = k.row_offsets[r]; p < k.row_offsets[r + 1]; ++p) {
      const bool diagonal = k.col_indices[p] == r;
      EXPECT_DOUBLE_EQ(k.values[p], diagonal ? 2.0 / h : -1.0 / h);
      EXPECT_DOUBLE_EQ(m.values[p], diagonal ? 4.0 * h / 6.0 : h / 6.0);
    }
}

TEST(FemP1, TensorProductsMatchKroneckerProducts) {
  for (const auto& spec : fem_cases()) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const Dense generated = dense(whole(spec)), reference = kronecker_reference(spec);
    ASSERT_EQ(generated.size(), reference.size());
    double largest = 0;
    for (const double v : reference) largest = std::max(largest, std::abs(v));
    for (std::size_t i = 0; i < reference.size(); ++i)
      ASSERT_NEAR(generated[i], reference[i], 8 * eps * largest) << "entry " << i;
  }
}

// The 3D stiffness on a cube has no face-neighbour entries (-16 + 8 + 8 in
// units of h/36): an interior row holds 21 entries, the mass matrix's 27.
TEST(FemP1, CubeStiffnessStoresNoExactZeros) {
  const std::int64_t centre = 13;  // (1, 1, 1) of 3 x 3 x 3
  const CsrRows k = blockeigs::io::generate_rows(fem(3, FemPart::stiffness, 3, 3, 3), centre, centre + 1);
  const CsrRows m = blockeigs::io::generate_rows(fem(3, FemPart::mass, 3, 3, 3), centre, centre + 1);
  EXPECT_EQ(k.nnz(), 21);
  EXPECT_EQ(m.nnz(), 27);
  const double h = 0.25;
  for (std::int64_t p = 0; p < k.nnz(); ++p) {
    const std::int64_t c = k.col_indices[p];
    const int off = int(std::abs(c % 3 - 1) + std::abs(c / 3 % 3 - 1) + std::abs(c / 9 - 1));
    ASSERT_NE(off, 1) << "a face neighbour is stored: column " << c;
    const double want = off == 0 ? 8.0 * h / 3.0 : off == 2 ? -h / 6.0 : -h / 12.0;
    EXPECT_DOUBLE_EQ(k.values[p], want) << "column " << c;
  }
}

TEST(FemP1, CountsOffsetsBlocksAndSymmetry) {
  for (const auto& spec : fem_cases()) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const CsrRows all = whole(spec);
    const std::int64_t n = all.global_rows;
    EXPECT_EQ(n, spec.nx * (spec.kind == GeneratorKind::fem_p1_1d ? 1 : spec.ny) *
                     (spec.kind == GeneratorKind::fem_p1_3d ? spec.nz : 1));
    EXPECT_EQ(blockeigs::io::generated_nnz(spec), all.nnz());
    EXPECT_EQ(blockeigs::io::generated_row_offsets(spec), all.row_offsets);
    EXPECT_NO_THROW(blockeigs::validate(all, "fem_p1"));
    const Dense a = dense(all);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_GT(a[i * n + i], 0.0) << "diagonal " << i;
      for (std::int64_t j = 0; j < i; ++j) ASSERT_EQ(a[i * n + j], a[j * n + i]) << i << ", " << j;
    }
    for (const std::int64_t cut : {std::int64_t{1}, n / 3, n / 2, n - 1}) {
      const CsrRows block = blockeigs::io::generate_rows(spec, cut, n);
      const CsrRows want = blockeigs::slice_rows(all, cut, n);
      EXPECT_EQ(block.row_offsets, want.row_offsets);
      EXPECT_EQ(block.col_indices, want.col_indices);
      EXPECT_EQ(block.values, want.values);
    }
  }
}

TEST(FemP1, PencilEigenvaluesMatchADenseSolve) {
  for (const auto& stiffness :
       {fem(1, FemPart::stiffness, 12), fem(1, FemPart::stiffness, 1), fem(2, FemPart::stiffness, 5, 4),
        fem(2, FemPart::stiffness, 6, 6), fem(3, FemPart::stiffness, 3, 3, 3), fem(3, FemPart::stiffness, 2, 3, 4)}) {
    SCOPED_TRACE(blockeigs::io::describe(stiffness));
    GeneratorSpec mass = stiffness;
    mass.part = FemPart::mass;
    const int n = static_cast<int>(blockeigs::io::generated_rows(stiffness));
    const std::vector<double> closed = blockeigs::io::fem_p1_eigenvalues(stiffness);
    ASSERT_EQ(closed, blockeigs::io::fem_p1_eigenvalues(mass));  // the pencil's, whichever part
    ASSERT_EQ(closed.size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(std::is_sorted(closed.begin(), closed.end()));
    const std::vector<double> computed =
        blockeigs::test::dense_generalized_eigenvalues(dense(whole(stiffness)), dense(whole(mass)), n);
    // The reduction to L^-1 K L^-T loses about cond(M) (at most 3^d) times eps relative to the largest.
    for (int i = 0; i < n; ++i) EXPECT_NEAR(closed[i], computed[i], 1e3 * eps * closed.back()) << "eigenvalue " << i;
    EXPECT_GT(closed.front(), 0.0);
    // Both matrices are positive definite.
    EXPECT_GT(blockeigs::test::dense_symmetric_eigenvalues(dense(whole(stiffness)), n).front(), 0.0);
    EXPECT_GT(blockeigs::test::dense_symmetric_eigenvalues(dense(whole(mass)), n).front(), 0.0);
  }
}

TEST(FemP1, PencilEigenvaluesKnownValues) {
  // One interior node: h = 1/2, K = [4], M = [1/3]: lambda = 12 = (6 / h^2) (1 - 0) / (2 + 0).
  EXPECT_NEAR(blockeigs::io::fem_p1_eigenvalues(fem(1, FemPart::stiffness, 1)).at(0), 12.0, 1e-14);
  // Fine grids approach the continuous Dirichlet problem's (j pi)^2 from above.
  const auto fine = blockeigs::io::fem_p1_eigenvalues(fem(1, FemPart::stiffness, 999));
  EXPECT_GT(fine[0], std::numbers::pi * std::numbers::pi);
  EXPECT_NEAR(fine[0], std::numbers::pi * std::numbers::pi, 1e-5);
  // 2D and 3D: sums over the directions.
  const auto one = blockeigs::io::fem_p1_eigenvalues(fem(1, FemPart::mass, 4));
  const auto cube = blockeigs::io::fem_p1_eigenvalues(fem(3, FemPart::mass, 4, 4, 4));
  EXPECT_NEAR(cube.front(), 3 * one.front(), 1e-12 * cube.front());
  EXPECT_NEAR(cube.back(), 3 * one.back(), 1e-12 * cube.back());
}

TEST(FemP1, RenumberedIsASymmetricPermutation) {
  for (const auto& natural : {fem(2, FemPart::mass, 5, 4), fem(3, FemPart::stiffness, 3, 4, 2)}) {
    GeneratorSpec spec = natural;
    spec.renumber = true;
    spec.renumber_seed = 11;
    const std::int64_t n = blockeigs::io::generated_rows(spec);
    const Dense a = dense(whole(natural)), b = dense(whole(spec));
    const blockeigs::io::RandomPermutation perm(n, 11);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        ASSERT_EQ(b[i * n + j], a[perm.natural_of(i) * n + perm.natural_of(j)]) << i << ", " << j;
    EXPECT_EQ(blockeigs::io::generated_row_offsets(spec), whole(spec).row_offsets);
    EXPECT_EQ(blockeigs::io::generated_nnz(spec), whole(spec).nnz());
  }
}

TEST(FemP1, Hdf5RoundTrip) {
  const auto dir = std::filesystem::temp_directory_path() / ("blockeigs-fem-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "pencil.h5").string();
  const CsrRows k = whole(fem(3, FemPart::stiffness, 4, 3, 5)), m = whole(fem(3, FemPart::mass, 4, 3, 5));
  blockeigs::io::write_hdf5_csr(file, "/K", k);
  blockeigs::io::write_hdf5_csr(file, "/M", m, blockeigs::io::ExistingFile::add);
  for (const auto& [group, want] : {std::pair{"/K", &k}, std::pair{"/M", &m}}) {
    const CsrRows back = blockeigs::io::read_hdf5_csr_rows(file, group, 0, want->global_rows);
    EXPECT_EQ(back.row_offsets, want->row_offsets) << group;
    EXPECT_EQ(back.col_indices, want->col_indices) << group;
    EXPECT_EQ(back.values, want->values) << group;
  }
  std::filesystem::remove_all(dir);
}

TEST(GraphLaplacian, RowsAreDegreeMinusAdjacency) {
  for (const auto& spec :
       {graph(GraphKind::path, 2), graph(GraphKind::path, 7), graph(GraphKind::cycle, 3), graph(GraphKind::cycle, 8)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const CsrRows all = whole(spec);
    const std::int64_t n = spec.n;
    EXPECT_EQ(all.global_rows, n);
    EXPECT_EQ(blockeigs::io::generated_nnz(spec), all.nnz());
    EXPECT_EQ(blockeigs::io::generated_row_offsets(spec), all.row_offsets);
    EXPECT_NO_THROW(blockeigs::validate(all, "graph"));  // columns ascend in every row
    const Dense a = dense(all);
    for (std::int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        sum += a[i * n + j];
        ASSERT_EQ(a[i * n + j], a[j * n + i]);
        const bool edge = std::abs(i - j) == 1 || (spec.graph == GraphKind::cycle && std::abs(i - j) == n - 1);
        if (i != j) {
          ASSERT_EQ(a[i * n + j], edge ? -1.0 : 0.0) << i << ", " << j;
        }
      }
      EXPECT_EQ(sum, 0.0) << "row " << i;  // the constant vector is in the null space
    }
    const auto closed = blockeigs::io::laplacian_eigenvalues(spec);
    const auto computed = blockeigs::test::dense_symmetric_eigenvalues(a, static_cast<int>(n));
    ASSERT_EQ(closed.size(), computed.size());
    for (std::size_t j = 0; j < closed.size(); ++j) EXPECT_NEAR(closed[j], computed[j], 64 * n * eps * 4) << j;
    EXPECT_EQ(closed.front(), 0.0);
  }
  // Known values: a path of 2 has 0 and 2; a cycle of 4 has 0, 2, 2, 4.
  const auto two = blockeigs::io::laplacian_eigenvalues(graph(GraphKind::path, 2));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], 0.0);
  EXPECT_NEAR(two[1], 2.0, 1e-15);
  const auto four = blockeigs::io::laplacian_eigenvalues(graph(GraphKind::cycle, 4));
  ASSERT_EQ(four.size(), 4u);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(four[j], (std::vector<double>{0, 2, 2, 4})[j], 1e-15);
}

TEST(GeneratorMessages, NewGeneratorsNameTheProblem) {
  const std::string source = "a.yaml:3: matrix_b.generator";
  auto error = [&](const GeneratorSpec& spec) {
    const std::string message = input_error_message([&] { blockeigs::io::validate(spec, source); });
    expect_mentions(message, {source});
    return message;
  };
  expect_mentions(error(fem(2, FemPart::mass, 4, 0)), {"ny must be positive, got 0"});
  expect_mentions(error(fem(3, FemPart::stiffness, 4, 4, -1)), {"nz must be positive, got -1"});
  expect_mentions(error(graph(GraphKind::cycle, 2)), {"n must be at least 3 for a cycle, got 2"});
  expect_mentions(error(graph(GraphKind::path, 1)), {"n must be at least 2 for a path, got 1"});
  expect_mentions(input_error_message([] { blockeigs::io::laplacian_eigenvalues(fem(1, FemPart::stiffness, 4)); }),
                  {"fem_p1", "fem_p1_eigenvalues"});
  expect_mentions(input_error_message([] { blockeigs::io::fem_p1_eigenvalues(graph(GraphKind::path, 4)); }),
                  {"graph Laplacian", "fem_p1's pencil only"});
  using blockeigs::io::describe;
  EXPECT_EQ(describe(fem(1, FemPart::stiffness, 100)), "1D fem_p1 stiffness 100 (linear elements, Dirichlet)");
  EXPECT_EQ(describe(fem(3, FemPart::mass, 8, 7, 6)),
            "3D fem_p1 mass 8x7x6 (linear elements, tensor product, Dirichlet)");
  EXPECT_EQ(describe(graph(GraphKind::cycle, 100)), "graph Laplacian of a cycle of 100 vertices");
}

}  // namespace
