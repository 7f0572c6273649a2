// Configs for A x = lambda B x and constraints: matrix_b in each of the
// matrix's forms, the fem_p1 and graph_laplacian generators, and
// eigensolver.constraints; every bad input a clear message naming the file,
// line and key; block-cg refuses both with a note saying why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "config/run_config.hpp"

namespace blockeigs::cfg {
namespace {

using namespace blockeigs::io;

constexpr const char* kSource = "cfg/a.yaml";
constexpr const char* kPencil =
    "matrix: {generator: {type: fem_p1_2d, nx: 6, ny: 5, part: stiffness}}\n"
    "matrix_b: {generator: {type: fem_p1_2d, nx: 6, ny: 5, part: mass}}\n";

std::string eigs_error(const std::string& text) {
  try {
    parse_eigs_config(text, kSource);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(parsed without an error)";
}

std::string cg_error(const std::string& text) {
  try {
    parse_cg_config(text, kSource);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(parsed without an error)";
}

TEST(ConfigPencil, MatrixBInEveryForm) {
  const EigsConfig generated = parse_eigs_config(kPencil, kSource);
  ASSERT_TRUE(generated.matrix_b.has_value());
  EXPECT_EQ(generated.matrix.generator.kind, GeneratorKind::fem_p1_2d);
  EXPECT_EQ(generated.matrix.generator.part, FemPart::stiffness);
  EXPECT_EQ(generated.matrix_b->source, MatrixSource::generator);
  EXPECT_EQ(generated.matrix_b->generator.kind, GeneratorKind::fem_p1_2d);
  EXPECT_EQ(generated.matrix_b->generator.part, FemPart::mass);
  EXPECT_EQ(generated.matrix_b->generator.nx, 6);
  EXPECT_EQ(generated.matrix_b->generator.ny, 5);

  const EigsConfig file = parse_eigs_config(
      "matrix: {hdf5: {file: k.h5, group: /K}}\nmatrix_b: {hdf5: {file: k.h5, group: /M}}\n", kSource);
  ASSERT_TRUE(file.matrix_b.has_value());
  EXPECT_EQ(file.matrix_b->source, MatrixSource::hdf5);
  EXPECT_EQ(file.matrix_b->file, "k.h5");
  EXPECT_EQ(file.matrix_b->group, "/M");

  const EigsConfig market = parse_eigs_config(
      "matrix: {matrix_market: {file: k.mtx}}\nmatrix_b: {matrix_market: {file: m.mtx.gz}}\n", kSource);
  ASSERT_TRUE(market.matrix_b.has_value());
  EXPECT_EQ(market.matrix_b->source, MatrixSource::matrix_market);
  EXPECT_EQ(market.matrix_b->file, "m.mtx.gz");

  EXPECT_FALSE(parse_eigs_config("matrix: {generator: {type: laplacian_1d, nx: 4}}\n", kSource).matrix_b.has_value());
}

TEST(ConfigPencil, MatrixBByOverride) {
  const std::vector<std::string> set{"matrix_b={generator: {type: fem_p1_1d, nx: 10, part: mass}}"};
  const EigsConfig config =
      parse_eigs_config("matrix: {generator: {type: fem_p1_1d, nx: 10, part: stiffness}}\n", kSource, set);
  ASSERT_TRUE(config.matrix_b.has_value());
  EXPECT_EQ(config.matrix_b->generator.part, FemPart::mass);
}

TEST(ConfigPencil, GraphLaplacianGenerator) {
  const EigsConfig config = parse_eigs_config(
      "matrix: {generator: {type: graph_laplacian, graph: cycle, n: 40, renumber: {seed: 3}}}\n", kSource);
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::graph_laplacian);
  EXPECT_EQ(config.matrix.generator.graph, GraphKind::cycle);
  EXPECT_EQ(config.matrix.generator.n, 40);
  EXPECT_TRUE(config.matrix.generator.renumber);
  EXPECT_EQ(parse_eigs_config("matrix: {generator: {type: graph_laplacian, graph: path, n: 2}}\n", kSource)
                .matrix.generator.graph,
            GraphKind::path);
}

TEST(ConfigPencil, Constraints) {
  const std::string matrix = "matrix: {generator: {type: graph_laplacian, graph: path, n: 50}}\n";
  const EigsConfig none = parse_eigs_config(matrix, kSource);
  EXPECT_EQ(none.eigensolver.constraints, ConstraintsSource::none);
  const EigsConfig constant = parse_eigs_config(matrix + "eigensolver: {constraints: constant}\n", kSource);
  EXPECT_EQ(constant.eigensolver.constraints, ConstraintsSource::constant);
  const EigsConfig file = parse_eigs_config(matrix + "eigensolver: {constraints: {file: y.h5}}\n", kSource);
  EXPECT_EQ(file.eigensolver.constraints, ConstraintsSource::hdf5);
  EXPECT_EQ(file.eigensolver.constraints_file, "y.h5");
  EXPECT_EQ(file.eigensolver.constraints_dataset, "/Y");
  const EigsConfig dataset =
      parse_eigs_config(matrix + "eigensolver: {constraints: {file: r.h5, dataset: /eigenvectors}}\n", kSource);
  EXPECT_EQ(dataset.eigensolver.constraints_dataset, "/eigenvectors");
}

struct Case {
  const char* name;
  bool cg;
  std::string text;
  std::vector<std::string> parts;
};

const std::vector<Case> kCases = {
    {"MatrixBWithoutSource",
     false,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\nmatrix_b: {}\n",
     {"cfg/a.yaml:2: matrix_b needs a source: generator, hdf5 or matrix_market"}},
    {"MatrixBTwoSources",
     false,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\nmatrix_b:\n  hdf5: {file: b.h5}\n  matrix_market: {file: "
     "b.mtx}\n",
     {"cfg/a.yaml:2: matrix_b takes exactly one source, got hdf5 and matrix_market"}},
    {"MatrixBMisspelled",
     false,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\nmatrx_b: {hdf5: {file: b.h5}}\n",
     {"cfg/a.yaml:2: unknown key matrx_b (did you mean matrix_b?)"}},
    {"MatrixBUnknownGeneratorKey",
     false,
     "matrix: {generator: {type: fem_p1_1d, nx: 4, part: stiffness}}\n"
     "matrix_b: {generator: {type: fem_p1_1d, nx: 4, part: mass, stencil: 3}}\n",
     {"cfg/a.yaml:2: unknown key matrix_b.generator.stencil (type fem_p1_1d takes nx, part and renumber)"}},
    {"MatrixBHdf5WithoutFile",
     false,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\nmatrix_b: {hdf5: {group: /B}}\n",
     {"missing required key matrix_b.hdf5.file"}},
    {"MatrixBGridZero",
     false,
     "matrix: {generator: {type: fem_p1_2d, nx: 4, ny: 4, part: stiffness}}\n"
     "matrix_b: {generator: {type: fem_p1_2d, nx: 4, ny: 0, part: mass}}\n",
     {"cfg/a.yaml:2: matrix_b.generator.ny must be at least 1, got 0"}},
    {"FemWithoutPart",
     false,
     "matrix: {generator: {type: fem_p1_3d, nx: 4, ny: 4, nz: 4}}\n",
     {"missing required key matrix.generator.part (type fem_p1_3d takes nx, ny, nz, part and renumber)"}},
    {"FemUnknownPart",
     false,
     "matrix: {generator: {type: fem_p1_1d, nx: 4, part: damping}}\n",
     {"matrix.generator.part must be stiffness or mass, got 'damping'"}},
    {"FemNeedsItsSizes",
     false,
     "matrix: {generator: {type: fem_p1_2d, nx: 4, part: mass}}\n",
     {"missing required key matrix.generator.ny (type fem_p1_2d takes nx, ny, part and renumber)"}},
    {"GraphUnknown",
     false,
     "matrix: {generator: {type: graph_laplacian, graph: star, n: 9}}\n",
     {"matrix.generator.graph must be path or cycle, got 'star'"}},
    {"GraphWithoutN",
     false,
     "matrix: {generator: {type: graph_laplacian, graph: path}}\n",
     {"missing required key matrix.generator.n (type graph_laplacian takes graph, n and renumber)"}},
    {"GraphCycleOfTwo",
     false,
     "matrix: {generator: {type: graph_laplacian, graph: cycle, n: 2}}\n",
     {"cfg/a.yaml:1: matrix.generator: n must be at least 3 for a cycle, got 2"}},
    {"ConstraintsWord",
     false,
     std::string(kPencil) + "eigensolver: {constraints: ones}\n",
     {"cfg/a.yaml:3: eigensolver.constraints must be constant (the all-ones vector) or a mapping "
      "{file: F, dataset: D}, got 'ones'"}},
    {"ConstraintsList",
     false,
     std::string(kPencil) + "eigensolver: {constraints: [a, b]}\n",
     {"eigensolver.constraints must be constant or a mapping {file: F, dataset: D}, got a list"}},
    {"ConstraintsWithoutFile",
     false,
     std::string(kPencil) + "eigensolver: {constraints: {dataset: /Y}}\n",
     {"missing required key eigensolver.constraints.file"}},
    {"ConstraintsUnknownKey",
     false,
     std::string(kPencil) + "eigensolver: {constraints: {file: y.h5, colums: 2}}\n",
     {"unknown key eigensolver.constraints.colums"}},
    {"MatrixBInBlockCg",
     true,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\nmatrix_b: {generator: {type: laplacian_1d, nx: 4}}\n",
     {"cfg/a.yaml:2: unknown key matrix_b (matrix_b (B of A x = lambda B x) is read by block-eigs; block-cg solves "
      "A X = B with B from block_cg.rhs)"}},
    {"ConstraintsInBlockCg",
     true,
     "matrix: {generator: {type: laplacian_1d, nx: 4}}\neigensolver: {constraints: constant}\n",
     {"cfg/a.yaml:2: unknown key eigensolver", "block-eigs"}},
};

class ConfigPencilError : public ::testing::TestWithParam<Case> {};

TEST_P(ConfigPencilError, MessageSaysWhatAndWhere) {
  const Case& c = GetParam();
  const std::string message = c.cg ? cg_error(c.text) : eigs_error(c.text);
  for (const std::string& part : c.parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
}

INSTANTIATE_TEST_SUITE_P(Config, ConfigPencilError, ::testing::ValuesIn(kCases),
                         [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace blockeigs::cfg
