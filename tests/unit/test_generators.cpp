// Matrix generators: sizes, symmetry, row-block independence, offsets, the
// closed-form Laplacian spectra (against a dense Jacobi eigen-solve), the
// random SPD matrix's dominance and determinism, and spec validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "tests/support/expect_error.hpp"
#include "core/csr_rows.hpp"
#include "io/generators/generators.hpp"
#include "io/renumbering.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "io/matrix_market.hpp"
#include "test_matrices.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::InputError;
using blockeigs::io::generate_rows;
using blockeigs::io::generated_row_offsets;
using blockeigs::io::generated_rows;
using blockeigs::io::GeneratorKind;
using blockeigs::io::GeneratorSpec;

GeneratorSpec laplacian(int dims, std::int64_t nx, std::int64_t ny = 1, std::int64_t nz = 1, int stencil = 0) {
  GeneratorSpec spec;
  spec.kind = dims == 1   ? GeneratorKind::laplacian_1d
              : dims == 2 ? GeneratorKind::laplacian_2d
                          : GeneratorKind::laplacian_3d;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.stencil = stencil ? stencil : 2 * dims + 1;
  return spec;
}

GeneratorSpec random_spd(std::int64_t n, std::int64_t nnz_per_row, std::uint64_t seed) {
  GeneratorSpec spec;
  spec.kind = GeneratorKind::random_spd;
  spec.n = n;
  spec.nnz_per_row = nnz_per_row;
  spec.seed = seed;
  return spec;
}

CsrRows whole(const GeneratorSpec& spec) { return generate_rows(spec, 0, generated_rows(spec)); }

using blockeigs::test::dense;
using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;
std::vector<double> jacobi_eigenvalues(std::vector<double> a, int n) {
  return blockeigs::test::dense_symmetric_eigenvalues(std::move(a), n);
}

TEST(Generators, RowCountsAndNonzeros) {
  struct Case {
    GeneratorSpec spec;
    std::int64_t rows, nnz;
  };
  const Case cases[] = {
      {laplacian(1, 10), 10, 3 * 10 - 2},
      {laplacian(1, 1), 1, 1},
      {laplacian(2, 4, 3), 12, 12 + 2 * (3 * 3 + 4 * 2)},  // n + 2 * grid edges
      {laplacian(3, 4, 3, 2), 24, 24 + 2 * (3 * 3 * 2 + 4 * 2 * 2 + 4 * 3 * 1)},
      {laplacian(3, 4, 3, 2, 27), 24, (3 * 4 - 2) * (3 * 3 - 2) * (3 * 2 - 2)},  // prod (3n - 2)
      {laplacian(3, 1, 1, 1, 27), 1, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(blockeigs::io::describe(c.spec));
    EXPECT_EQ(generated_rows(c.spec), c.rows);
    const CsrRows m = whole(c.spec);
    EXPECT_EQ(m.local_rows(), c.rows);
    EXPECT_EQ(m.global_rows, c.rows);
    EXPECT_EQ(m.global_cols, c.rows);
    EXPECT_EQ(m.nnz(), c.nnz);
    EXPECT_NO_THROW(blockeigs::validate(m, "generator"));
  }
  EXPECT_EQ(generated_rows(random_spd(77, 5, 1)), 77);
}

TEST(Generators, LaplacianStencilValues) {
  // Interior rows carry the full stencil: diagonal 2d (or 26), all neighbours -1.
  const struct {
    GeneratorSpec spec;
    std::int64_t interior;
    double diagonal;
    std::int64_t length;
  } cases[] = {{laplacian(1, 5), 2, 2.0, 3},
               {laplacian(2, 5, 5), 12, 4.0, 5},
               {laplacian(3, 3, 3, 3), 13, 6.0, 7},
               {laplacian(3, 3, 3, 3, 27), 13, 26.0, 27}};
  for (const auto& c : cases) {
    SCOPED_TRACE(blockeigs::io::describe(c.spec));
    const CsrRows row = generate_rows(c.spec, c.interior, c.interior + 1);
    ASSERT_EQ(row.nnz(), c.length);
    for (std::int64_t p = 0; p < row.nnz(); ++p)
      EXPECT_EQ(row.values[p], row.col_indices[p] == c.interior ? c.diagonal : -1.0);
  }
}

TEST(Generators, MatricesAreSymmetric) {
  for (const auto& spec : {laplacian(1, 9), laplacian(2, 5, 4), laplacian(3, 3, 4, 2), laplacian(3, 4, 3, 3, 27),
                           random_spd(60, 5, 3), random_spd(9, 8, 4)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const CsrRows m = whole(spec);
    const std::vector<double> a = dense(m);
    const std::int64_t n = m.global_rows;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) ASSERT_EQ(a[i * n + j], a[j * n + i]) << i << ", " << j;
  }
}

TEST(Generators, RowBlocksConcatenateToTheWhole) {
  for (const auto& spec : {laplacian(1, 31), laplacian(2, 7, 5), laplacian(3, 5, 3, 4), laplacian(3, 4, 5, 3, 27),
                           random_spd(123, 7, 9)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const CsrRows all = whole(spec);
    const std::int64_t n = all.global_rows;
    const std::int64_t cuts[] = {0, 1, 1, n / 3, n / 2, n - 1, n, n};
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) {
      const CsrRows block = generate_rows(spec, cuts[k], cuts[k + 1]);
      const CsrRows want = blockeigs::slice_rows(all, cuts[k], cuts[k + 1]);
      EXPECT_EQ(block.first_row, cuts[k]);
      EXPECT_EQ(block.global_rows, n);
      EXPECT_EQ(block.row_offsets, want.row_offsets);
      EXPECT_EQ(block.col_indices, want.col_indices);
      EXPECT_EQ(block.values, want.values);
      EXPECT_NO_THROW(blockeigs::validate(block, "block"));
    }
  }
}

TEST(Generators, RowOffsetsAgreeWithTheRows) {
  for (const auto& spec : {laplacian(1, 17), laplacian(2, 6, 9), laplacian(3, 4, 4, 5), laplacian(3, 5, 4, 3, 27),
                           random_spd(200, 12, 2), random_spd(50, 0, 2)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    EXPECT_EQ(generated_row_offsets(spec), whole(spec).row_offsets);
  }
}

TEST(Generators, LaplacianEigenvaluesMatchADenseSolve) {
  for (const auto& spec : {laplacian(1, 12), laplacian(1, 1), laplacian(2, 5, 4), laplacian(2, 7, 1),
                           laplacian(3, 3, 3, 4), laplacian(3, 4, 3, 3, 27), laplacian(3, 2, 5, 6, 27)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const CsrRows m = whole(spec);
    const int n = static_cast<int>(m.global_rows);
    ASSERT_LE(n, 64);
    const std::vector<double> closed = blockeigs::io::laplacian_eigenvalues(spec);
    ASSERT_EQ(closed.size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(std::is_sorted(closed.begin(), closed.end()));
    const std::vector<double> computed = jacobi_eigenvalues(dense(m), n);
    // Backward-stable solve: errors of order n * eps * ||A||, and ||A|| <= 2 * 26.
    const double tolerance = 64 * n * std::numeric_limits<double>::epsilon() * 52.0;
    for (int i = 0; i < n; ++i) EXPECT_NEAR(closed[i], computed[i], tolerance) << "eigenvalue " << i;
    EXPECT_GT(closed.front(), 0.0);  // Dirichlet Laplacians are positive definite
  }
}

TEST(Generators, LaplacianEigenvaluesKnownValues) {
  const auto one = blockeigs::io::laplacian_eigenvalues(laplacian(1, 3));
  ASSERT_EQ(one.size(), 3u);
  EXPECT_NEAR(one[0], 2.0 - std::sqrt(2.0), 1e-15);  // 2 - 2 cos(pi/4)
  EXPECT_NEAR(one[1], 2.0, 1e-15);
  EXPECT_NEAR(one[2], 2.0 + std::sqrt(2.0), 1e-15);
  // A single 27-point cell is the scalar 26.
  EXPECT_EQ(blockeigs::io::laplacian_eigenvalues(laplacian(3, 1, 1, 1, 27)), std::vector<double>{26.0});
  expect_mentions(input_error_message([] { blockeigs::io::laplacian_eigenvalues(random_spd(5, 1, 1)); }),
                  {"random SPD", "closed-form"});
}

TEST(Generators, RandomSpdIsDiagonallyDominantAndBounded) {
  const GeneratorSpec spec = random_spd(2000, 8, 42);
  const CsrRows m = whole(spec);
  for (std::int64_t r = 0; r < m.local_rows(); ++r) {
    double diagonal = 0.0, off = 0.0;
    for (std::int64_t p = m.row_offsets[r]; p < m.row_offsets[r + 1]; ++p) {
      if (m.col_indices[p] == r) {
        diagonal = m.values[p];
      } else {
        ASSERT_GT(m.values[p], -1.0);
        ASSERT_LT(m.values[p], 1.0);
        ASSERT_NE(m.values[p], 0.0);
        off += std::abs(m.values[p]);
      }
    }
    ASSERT_DOUBLE_EQ(diagonal, off + 1.0) << "row " << r;
  }
  // About nnz_per_row off-diagonals per row on average, within a band.
  const double mean = static_cast<double>(m.nnz() - m.global_rows) / static_cast<double>(m.global_rows);
  EXPECT_GT(mean, 7.0);
  EXPECT_LT(mean, 9.0);
  for (std::int64_t r = 0; r < m.local_rows(); ++r)
    for (std::int64_t p = m.row_offsets[r]; p < m.row_offsets[r + 1]; ++p)
      ASSERT_LE(std::abs(m.col_indices[p] - r), 4 * spec.nnz_per_row);
}

TEST(Generators, RandomSpdIsPositiveDefinite) {
  const GeneratorSpec spec = random_spd(48, 10, 5);
  const auto eigenvalues = jacobi_eigenvalues(dense(whole(spec)), 48);
  EXPECT_GE(eigenvalues.front(), 1.0 - 1e-12);  // Gershgorin: every disc lies right of 1
}

TEST(Generators, RandomSpdIsDeterministicInTheSeed) {
  const CsrRows a = whole(random_spd(500, 6, 7));
  const CsrRows b = whole(random_spd(500, 6, 7));
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.col_indices, b.col_indices);
  EXPECT_EQ(a.values, b.values);
  const CsrRows c = whole(random_spd(500, 6, 8));
  EXPECT_NE(a.col_indices, c.col_indices);
  EXPECT_NE(a.values, c.values);
}

TEST(Generators, RandomSpdSmallAndDiagonalCases) {
  const CsrRows diagonal = whole(random_spd(10, 0, 1));
  EXPECT_EQ(diagonal.nnz(), 10);
  for (const double v : diagonal.values) EXPECT_EQ(v, 1.0);
  // nnz_per_row = n - 1 links every pair: the matrix is dense.
  EXPECT_EQ(whole(random_spd(7, 6, 1)).nnz(), 49);
  EXPECT_EQ(whole(random_spd(1, 0, 1)).nnz(), 1);
}

TEST(Generators, ValidateNamesTheSourceAndTheProblem) {
  using blockeigs::io::validate;
  const std::string source = "configs/demo.yaml: matrix.generator";
  auto error = [&](const GeneratorSpec& spec) {
    const std::string message = input_error_message([&] { validate(spec, source); });
    expect_mentions(message, {source});
    return message;
  };
  expect_mentions(error(laplacian(1, 0)), {"nx must be positive, got 0"});
  expect_mentions(error(laplacian(2, 4, -2)), {"ny must be positive, got -2"});
  expect_mentions(error(laplacian(3, 4, 4, 0)), {"nz must be positive, got 0"});
  expect_mentions(error(laplacian(1, 4, 1, 1, 5)), {"1D Laplacian", "3-point", "got 5"});
  expect_mentions(error(laplacian(2, 4, 4, 1, 7)), {"2D Laplacian", "5-point", "got 7"});
  expect_mentions(error(laplacian(3, 4, 4, 4, 9)), {"3D Laplacian", "7- or 27-point", "got 9"});
  expect_mentions(error(laplacian(3, 1 << 22, 1 << 22, 1 << 22)), {"too many points"});
  expect_mentions(error(random_spd(0, 0, 1)), {"n must be positive, got 0"});
  expect_mentions(error(random_spd(10, 10, 1)), {"nnz_per_row", "got 10"});
  expect_mentions(error(random_spd(10, -1, 1)), {"nnz_per_row", "got -1"});
  // Only the dimensions a Laplacian uses are checked.
  EXPECT_NO_THROW(validate(laplacian(2, 4, 4, 0), source));
  EXPECT_NO_THROW(validate(laplacian(3, 2, 2, 2, 27), source));
}

TEST(Generators, RejectsRowRangesOutsideTheMatrix) {
  const GeneratorSpec spec = laplacian(2, 4, 4);
  expect_mentions(input_error_message([&] { generate_rows(spec, 10, 17); }),
                  {"2D Laplacian 4x4", "rows [10, 17)", "16 rows"});
  expect_mentions(input_error_message([&] { generate_rows(spec, -1, 3); }), {"rows [-1, 3)"});
  expect_mentions(input_error_message([&] { generate_rows(spec, 5, 4); }), {"rows [5, 4)"});
  expect_mentions(input_error_message([&] { generate_rows(laplacian(2, 4, 0), 0, 0); }), {"ny must be positive"});
}

TEST(Generators, Describe) {
  using blockeigs::io::describe;
  EXPECT_EQ(describe(laplacian(1, 100)), "1D Laplacian 100 (3-point)");
  EXPECT_EQ(describe(laplacian(2, 32, 16)), "2D Laplacian 32x16 (5-point)");
  EXPECT_EQ(describe(laplacian(3, 32, 32, 32)), "3D Laplacian 32x32x32 (7-point)");
  EXPECT_EQ(describe(laplacian(3, 8, 8, 8, 27)), "3D Laplacian 8x8x8 (27-point)");
  EXPECT_EQ(describe(random_spd(1000, 8, 3)), "random SPD 1000x1000 (~8 off-diagonals per row, seed 3)");
}

// Row i of a grid Laplacian, built the plain way: every stencil point inside
// the grid, in the natural order, which ascends.
void expected_row(const GeneratorSpec& spec, std::int64_t i, std::vector<std::int64_t>& cols,
                  std::vector<double>& vals) {
  const std::int64_t nx = spec.nx, ny = spec.ny, nz = spec.nz;
  const std::int64_t x = i % nx, y = i / nx % ny, z = i / (nx * ny);
  cols.clear();
  vals.clear();
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny || z + dz < 0 || z + dz >= nz) continue;
        if (spec.stencil == 7 && distance > 1) continue;
        cols.push_back(i + dz * nx * ny + dy * nx + dx);
        vals.push_back(distance == 0 ? (spec.stencil == 27 ? 26.0 : 6.0) : -1.0);
      }
}

// Blocks of many more entries than generate_rows builds at a time (2^16),
// cut anywhere, hold the plain rows.
TEST(Generators, LargeBlocksHoldThePlainRows) {
  std::vector<std::int64_t> cols;
  std::vector<double> vals;
  for (const auto& spec : {laplacian(3, 41, 29, 23, 27), laplacian(3, 67, 53, 31)}) {
    SCOPED_TRACE(blockeigs::io::describe(spec));
    const std::int64_t n = generated_rows(spec);
    const std::int64_t cuts[] = {0, 1, n / 3, n / 3 + 1, n - 7, n};
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) {
      const CsrRows block = generate_rows(spec, cuts[k], cuts[k + 1]);
      ASSERT_EQ(block.local_rows(), cuts[k + 1] - cuts[k]);
      for (std::int64_t r = 0; r < block.local_rows(); ++r) {
        expected_row(spec, cuts[k] + r, cols, vals);
        const auto begin = block.row_offsets[r], end = block.row_offsets[r + 1];
        ASSERT_EQ(std::vector<std::int64_t>(block.col_indices.begin() + begin, block.col_indices.begin() + end), cols)
            << "row " << cuts[k] + r;
        ASSERT_EQ(std::vector<double>(block.values.begin() + begin, block.values.begin() + end), vals);
      }
      EXPECT_EQ(block.nnz(), block.row_offsets.back());
    }
    EXPECT_GT(generate_rows(spec, 0, n).nnz(), 8 * (std::int64_t{1} << 16));
  }
}

// A rank's share of a large grid must come quickly: the offsets of a 256^3
// grid (16.7M rows) and a 1M-row slab of its rows, each well within seconds.
TEST(Generators, LargeGridsAreFast) {
  const GeneratorSpec spec = laplacian(3, 256, 256, 256);
  const auto start = std::chrono::steady_clock::now();
  const auto offsets = generated_row_offsets(spec);
  const std::int64_t begin = 8'000'000, end = 9'048'576;
  const CsrRows slab = generate_rows(spec, begin, end);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(offsets.size(), 256u * 256u * 256u + 1u);
  EXPECT_EQ(offsets.back(), 7 * 256LL * 256 * 256 - 6 * 256LL * 256);
  EXPECT_EQ(slab.nnz(), offsets[end] - offsets[begin]);
  EXPECT_LT(seconds, 10.0);
  std::printf("256^3 offsets + 1M-row slab: %.2f s\n", seconds);
}

}  // namespace

namespace blockeigs::test {
namespace {

// The twisted Laplacian is Hermitian, its row blocks are the whole matrix's,
// and every Bloch wave x_m = exp(i sum_d 2 pi j_d m_d / n_d) is an eigenvector
// with the closed-form eigenvalue: n orthogonal eigenvectors, so the whole
// spectrum. Extents of 1 and 2 fold a direction's links onto one column.
TEST(TwistedLaplacian, HermitianWithClosedFormEigenpairs) {
  using C = std::complex<double>;
  for (const io::TwistedLaplacian spec :
       {io::TwistedLaplacian{5, 4, 3, {0.7, -1.3, 2.9}}, io::TwistedLaplacian{1, 2, 6, {0.4, 1.1, 0.0}}}) {
    const std::int64_t n = spec.nx * spec.ny * spec.nz;
    const ComplexCsrRows whole = io::twisted_laplacian_rows(spec, 0, n);
    io::check_hermitian(whole, "twisted");
    validate(whole, "twisted");
    const ComplexCsrRows tail = io::twisted_laplacian_rows(spec, n / 3, n);
    const ComplexCsrRows part = slice_rows(whole, n / 3, n);
    EXPECT_EQ(tail.row_offsets, part.row_offsets);
    EXPECT_EQ(tail.col_indices, part.col_indices);
    EXPECT_EQ(tail.values, part.values);

    std::vector<double> found;
    const std::array<std::int64_t, 3> extent{spec.nx, spec.ny, spec.nz};
    for (std::int64_t jz = 0; jz < spec.nz; ++jz)
      for (std::int64_t jy = 0; jy < spec.ny; ++jy)
        for (std::int64_t jx = 0; jx < spec.nx; ++jx) {
          const std::array<std::int64_t, 3> j{jx, jy, jz};
          std::vector<C> x(static_cast<std::size_t>(n));
          for (std::int64_t m = 0; m < n; ++m) {
            const std::array<std::int64_t, 3> at{m % spec.nx, m / spec.nx % spec.ny, m / (spec.nx * spec.ny)};
            double angle = 0.0;
            for (int d = 0; d < 3; ++d) angle += 2.0 * std::numbers::pi * double(j[d] * at[d]) / double(extent[d]);
            x[static_cast<std::size_t>(m)] = std::polar(1.0, angle);
          }
          double lambda = 0.0;
          for (int d = 0; d < 3; ++d)
            lambda += 2.0 - 2.0 * std::cos((2.0 * std::numbers::pi * double(j[d]) + spec.phase[d]) / double(extent[d]));
          for (std::int64_t r = 0; r < n; ++r) {
            C hx = 0.0;
            for (std::int64_t p = whole.row_offsets[r]; p < whole.row_offsets[r + 1]; ++p)
              hx += whole.values[p] * x[static_cast<std::size_t>(whole.col_indices[p])];
            ASSERT_LT(std::abs(hx - lambda * x[static_cast<std::size_t>(r)]), 1e-12) << "row " << r;
          }
          found.push_back(lambda);
        }
    std::sort(found.begin(), found.end());
    const std::vector<double> closed = io::twisted_laplacian_eigenvalues(spec);
    ASSERT_EQ(closed.size(), found.size());
    for (std::size_t k = 0; k < closed.size(); ++k) EXPECT_NEAR(closed[k], found[k], 1e-13) << k;
  }
  expect_mentions(input_error_message([] {
                    io::twisted_laplacian_rows({0, 2, 2, {0, 0, 0}}, 0, 0);
                  }),
                  {"extents must be positive"});
  expect_mentions(input_error_message([] {
                    io::twisted_laplacian_eigenvalues({2, 2, 2, {0, std::nan(""), 0}});
                  }),
                  {"phase 1"});
}

// The twisted Laplacian renumbered (`renumber: {seed: N}`) is P A P^T: entry (i, j) is the natural matrix's
// (perm(i), perm(j)), every row's columns ascending, and a row block is the whole's rows.
TEST(TwistedLaplacian, RenumberedIsASymmetricPermutation) {
  GeneratorSpec spec;
  spec.kind = GeneratorKind::laplacian_3d;
  spec.nx = 5;
  spec.ny = 4;
  spec.nz = 3;
  spec.periodic = true;
  spec.phase = {0.7, -1.3, 2.9};
  const std::int64_t n = io::generated_rows(spec);
  const ComplexCsrRows natural = io::generate_complex_rows(spec, 0, n);
  spec.renumber = true;
  spec.renumber_seed = 5;
  const ComplexCsrRows renumbered = io::generate_complex_rows(spec, 0, n);
  validate(renumbered, "renumbered");
  const io::RandomPermutation perm(n, 5);
  const auto entry = [](const ComplexCsrRows& a, std::int64_t i, std::int64_t j) {
    for (std::int64_t p = a.row_offsets[i]; p < a.row_offsets[i + 1]; ++p)
      if (a.col_indices[p] == j) return a.values[p];
    return std::complex<double>(0.0);
  };
  ASSERT_EQ(renumbered.nnz(), natural.nnz());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      ASSERT_EQ(entry(renumbered, i, j), entry(natural, perm.natural_of(i), perm.natural_of(j))) << i << ", " << j;
  const ComplexCsrRows tail = io::generate_complex_rows(spec, n / 3, n), part = slice_rows(renumbered, n / 3, n);
  EXPECT_EQ(tail.col_indices, part.col_indices);
  EXPECT_EQ(tail.values, part.values);
  EXPECT_NE(io::describe(spec).find("renumbered (seed 5)"), std::string::npos) << io::describe(spec);
}

}  // namespace
}  // namespace blockeigs::test
