// The generators' `renumber` option: the permutation is a bijection with the
// right inverse, and a renumbered matrix is P A P^T of the natural one (row
// and column i are the natural row and column perm[i]), built row block by
// row block with ascending columns and offsets that match.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/csr_rows.hpp"
#include "io/generators/generators.hpp"
#include "io/renumbering.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::io::GeneratorKind;
using blockeigs::io::GeneratorSpec;
using blockeigs::io::RandomPermutation;

using Entries = std::map<std::pair<std::int64_t, std::int64_t>, double>;

Entries entries_of(const CsrRows& rows) {
  Entries out;
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      out[{rows.first_row + i, rows.col_indices[k]}] = rows.values[k];
  return out;
}

GeneratorSpec grid_3d(std::int64_t nx, std::int64_t ny, std::int64_t nz, int stencil) {
  GeneratorSpec spec;
  spec.kind = GeneratorKind::laplacian_3d;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.stencil = stencil;
  return spec;
}

GeneratorSpec random_spd(std::int64_t n) {
  GeneratorSpec spec;
  spec.kind = GeneratorKind::random_spd;
  spec.n = n;
  spec.nnz_per_row = 5;
  spec.seed = 3;
  return spec;
}

GeneratorSpec renumbered(GeneratorSpec spec, std::uint64_t seed) {
  spec.renumber = true;
  spec.renumber_seed = seed;
  return spec;
}

TEST(RandomPermutation, IsABijectionWithItsInverse) {
  for (const std::int64_t n : {1, 2, 3, 5, 16, 17, 1000, 4097}) {
    const RandomPermutation perm(n, 99);
    std::vector<int> hits(static_cast<std::size_t>(n), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t j = perm.natural_of(i);
      ASSERT_GE(j, 0);
      ASSERT_LT(j, n);
      ++hits[j];
      EXPECT_EQ(perm.renumbered_of(j), i) << "n = " << n;
    }
    for (const int h : hits) EXPECT_EQ(h, 1) << "n = " << n;
  }
}

TEST(RandomPermutation, ScramblesAndDependsOnTheSeed) {
  const RandomPermutation a(1000, 1), b(1000, 2);
  int fixed = 0, same = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    fixed += a.natural_of(i) == i;
    same += a.natural_of(i) == b.natural_of(i);
  }
  EXPECT_LT(fixed, 20);
  EXPECT_LT(same, 20);
}

// Row/column i of the result is row/column perm[i] of the natural matrix.
void expect_permuted(const GeneratorSpec& natural_spec, std::uint64_t seed) {
  const GeneratorSpec spec = renumbered(natural_spec, seed);
  const std::int64_t n = blockeigs::io::generated_rows(spec);
  const Entries natural = entries_of(blockeigs::io::generate_rows(natural_spec, 0, n));
  const CsrRows whole = blockeigs::io::generate_rows(spec, 0, n);
  const Entries renum = entries_of(whole);
  const RandomPermutation perm(n, seed);
  ASSERT_EQ(renum.size(), natural.size());
  for (const auto& [at, value] : renum)
    EXPECT_EQ(natural.at({perm.natural_of(at.first), perm.natural_of(at.second)}), value);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = whole.row_offsets[i] + 1; k < whole.row_offsets[i + 1]; ++k)
      EXPECT_LT(whole.col_indices[k - 1], whole.col_indices[k]) << "row " << i;
  EXPECT_EQ(blockeigs::io::generated_row_offsets(spec), whole.row_offsets);
  // Any row block alone gives the same rows.
  const std::int64_t cut = n / 3;
  Entries pieces = entries_of(blockeigs::io::generate_rows(spec, 0, cut));
  pieces.merge(entries_of(blockeigs::io::generate_rows(spec, cut, n)));
  EXPECT_EQ(pieces, renum);
}

TEST(RenumberedGenerator, SevenPointLaplacian) { expect_permuted(grid_3d(5, 4, 3, 7), 7); }
TEST(RenumberedGenerator, TwentySevenPointLaplacian) { expect_permuted(grid_3d(4, 3, 3, 27), 8); }
TEST(RenumberedGenerator, RandomSpd) { expect_permuted(random_spd(77), 9); }

TEST(RenumberedGenerator, DescriptionSaysRenumberedAndTheSeed) {
  EXPECT_EQ(blockeigs::io::describe(renumbered(grid_3d(2, 2, 2, 7), 42)),
            "3D Laplacian 2x2x2 (7-point), renumbered (seed 42)");
}

}  // namespace
