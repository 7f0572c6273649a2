// YAML configs: the examples in configs/, defaults, the values read, text and
// control bytes, relative file names, and which sections each app accepts
// (every kind of input error: test_config_errors.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "config/keywords.hpp"
#include "config/run_config.hpp"
#include "io/config_yaml.hpp"
#include "tests/support/config_text.hpp"
#include "tests/support/expect_error.hpp"

namespace blockeigs::cfg {
namespace {

namespace fs = std::filesystem;
using namespace config_test;

const fs::path kConfigs = fs::path(BLOCKEIGS_SOURCE_DIR) / "configs";

// A scratch folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            (std::string("blockeigs_config_") + test->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
  }

 private:
  fs::path path_;
};

// --- the examples in configs/ ---------------------------------------------------

TEST(ConfigExamples, EveryExampleParsesForExactlyOneApp) {
  int examples = 0;
  for (const auto& entry : fs::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".yaml") continue;
    ++examples;
    const std::string path = entry.path().string();
    std::string eigs_error, cg_error;
    try {
      read_eigs_config(path);
    } catch (const InputError& e) {
      eigs_error = e.what();
    }
    try {
      read_cg_config(path);
    } catch (const InputError& e) {
      cg_error = e.what();
    }
    EXPECT_NE(eigs_error.empty(), cg_error.empty())
        << path << "\n  as eigs: " << eigs_error << "\n  as cg: " << cg_error;
  }
  EXPECT_GE(examples, 4);
}

// The full examples in docs/config.md stay valid.
TEST(ConfigExamples, DocsExamplesParse) {
  std::ifstream in(fs::path(BLOCKEIGS_SOURCE_DIR) / "docs" / "config.md");
  ASSERT_TRUE(in) << "docs/config.md not found";
  std::vector<std::string> blocks;
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```yaml") {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  ASSERT_EQ(blocks.size(), 4u);
  const EigsConfig window = parse_eigs_config(blocks[0], "docs/config.md (window example)");
  EXPECT_TRUE(window.eigensolver.interval);
  EXPECT_EQ(window.eigensolver.window.lower, 1.0);
  EXPECT_EQ(window.eigensolver.window.upper, 1.3);
  const EigsConfig eigs = parse_eigs_config(blocks[1], "docs/config.md (block-eigs example)");
  EXPECT_EQ(eigs.eigensolver.start_file, "data/x0.h5");
  EXPECT_EQ(eigs.eigensolver.preconditioner.kind, PreconditionerKind::chebyshev);
  EXPECT_EQ(eigs.eigensolver.preconditioner.chebyshev.degree, 8);
  const EigsConfig pencil = parse_eigs_config(blocks[2], "docs/config.md (A x = lambda B x example)");
  ASSERT_TRUE(pencil.matrix_b.has_value());
  EXPECT_EQ(pencil.matrix_b->group, "/M");
  EXPECT_EQ(pencil.eigensolver.constraints, ConstraintsSource::hdf5);
  EXPECT_EQ(pencil.eigensolver.constraints_dataset, "/eigenvectors");
  const CgConfig cg = parse_cg_config(blocks[3], "docs/config.md (block-cg example)");
  EXPECT_EQ(cg.solver.rhs, RhsSource::known_solution);
}

TEST(ConfigExamples, DemoNeedsNoInputFile) {
  const EigsConfig config = read_eigs_config((kConfigs / "demo.yaml").string());
  EXPECT_EQ(config.matrix.source, MatrixSource::generator);
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::laplacian_3d);
  EXPECT_EQ(config.matrix.generator.nx, 24);
  EXPECT_EQ(config.matrix.generator.ny, 24);
  EXPECT_EQ(config.matrix.generator.nz, 24);
  EXPECT_EQ(config.matrix.generator.stencil, 7);
  EXPECT_EQ(config.eigensolver.lobpcg.k, 8);
  EXPECT_EQ(config.eigensolver.lobpcg.tolerance, 1e-6);
  EXPECT_EQ(config.execution.backend, Backend::automatic);
  EXPECT_EQ(config.execution.partition, PartitionMethod::automatic);
  EXPECT_EQ(config.execution.local_order, LocalOrder::automatic);
  EXPECT_TRUE(config.output.path.empty());
  EXPECT_TRUE(config.eigensolver.start_file.empty());
}

TEST(ConfigExamples, Laplacian128) {
  const EigsConfig config = read_eigs_config((kConfigs / "laplacian3d-128.yaml").string());
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::laplacian_3d);
  EXPECT_EQ(config.matrix.generator.nx * config.matrix.generator.ny * config.matrix.generator.nz, 128 * 128 * 128);
  EXPECT_EQ(config.eigensolver.lobpcg.k, 16);
  EXPECT_EQ(config.eigensolver.lobpcg.tolerance, 1e-5);
  EXPECT_EQ(config.eigensolver.lobpcg.test, StoppingTest::relative);
  EXPECT_EQ(config.output.path, "results.h5");  // outputs stay relative to the working directory
}

TEST(ConfigExamples, FromHdf5ResolvesTheFileNextToTheConfig) {
  const EigsConfig config = read_eigs_config((kConfigs / "from-hdf5.yaml").string());
  EXPECT_EQ(config.matrix.source, MatrixSource::hdf5);
  EXPECT_EQ(config.matrix.file, (kConfigs / "matrix.h5").lexically_normal().string());
  EXPECT_EQ(config.matrix.group, "/A");
  EXPECT_EQ(config.eigensolver.preconditioner.kind, PreconditionerKind::jacobi);
}

TEST(ConfigExamples, BlockCgDemo) {
  const CgConfig config = read_cg_config((kConfigs / "block-cg-demo.yaml").string());
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::laplacian_2d);
  EXPECT_EQ(config.matrix.generator.nx, 200);
  EXPECT_EQ(config.matrix.generator.ny, 200);
  EXPECT_EQ(config.matrix.generator.stencil, 5);
  EXPECT_EQ(config.solver.rhs, RhsSource::random);
  EXPECT_EQ(config.solver.columns, 16);
}

// --- defaults and values ----------------------------------------------------------

TEST(ConfigDefaults, Eigs) {
  const EigsConfig config = parse_eigs_config(std::string(kMatrix) + "eigensolver:\n", kSource);
  EXPECT_EQ(config.path, kSource);
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::laplacian_1d);
  EXPECT_EQ(config.matrix.generator.nx, 10);
  EXPECT_EQ(config.matrix.generator.stencil, 3);
  const EigensolverSettings& e = config.eigensolver;
  EXPECT_EQ(e.lobpcg.k, 8);
  EXPECT_EQ(e.lobpcg.block_size, 0);
  EXPECT_EQ(e.lobpcg.which, SpectrumEnd::smallest);
  EXPECT_EQ(e.lobpcg.tolerance, 1e-6);
  EXPECT_EQ(e.lobpcg.test, StoppingTest::relative);  // bounds the eigenvalues' relative error, as SLEPc's default
  EXPECT_EQ(e.lobpcg.max_iterations, 1000);
  EXPECT_EQ(e.lobpcg.stagnation_window, 2000);
  EXPECT_EQ(e.lobpcg.tuning.recompute_interval, 0);  // from the tolerance
  EXPECT_EQ(e.preconditioner.kind, PreconditionerKind::automatic);
  EXPECT_EQ(e.lobpcg.search_precision, SearchPrecision::automatic);
  EXPECT_EQ(e.lobpcg.seed, 1u);
  EXPECT_TRUE(e.start_file.empty());
  EXPECT_EQ(e.start_dataset, "/X");
  EXPECT_EQ(config.execution.backend, Backend::automatic);
  EXPECT_EQ(config.execution.spmm_algorithm, Algorithm::automatic);
  EXPECT_EQ(config.execution.spmm_precision, Precision::fp64);
  EXPECT_TRUE(config.output.path.empty());
  EXPECT_TRUE(config.output.monitor);
  EXPECT_EQ(config.output.monitor_every, 1);
}

TEST(ConfigDefaults, BlockCg) {
  const CgConfig config = parse_cg_config(kMatrix, kSource);
  const BlockCgSettings& s = config.solver;
  EXPECT_EQ(s.rhs, RhsSource::random);
  EXPECT_EQ(s.columns, 16);
  EXPECT_EQ(s.rhs_dataset, "/B");
  EXPECT_EQ(s.cg.rtol, 1e-8);
  EXPECT_EQ(s.cg.atol, 0.0);
  EXPECT_EQ(s.cg.max_iterations, 10000);
  EXPECT_EQ(s.cg.stagnation_window, 2000);
  EXPECT_EQ(s.preconditioner.kind, PreconditionerKind::none);
  EXPECT_EQ(s.seed, 1u);
}

TEST(ConfigDefaults, StencilFollowsTheDimension) {
  const auto stencil = [](const std::string& generator) {
    return parse_eigs_config("matrix: {generator: " + generator + "}", kSource).matrix.generator.stencil;
  };
  EXPECT_EQ(stencil("{type: laplacian_2d, nx: 4, ny: 4}"), 5);
  EXPECT_EQ(stencil("{type: laplacian_3d, nx: 4, ny: 4, nz: 4}"), 7);
  EXPECT_EQ(stencil("{type: laplacian_3d, nx: 4, ny: 4, nz: 4, stencil: 27}"), 27);
}

TEST(ConfigValues, EverySettingIsRead) {
  const EigsConfig config = parse_eigs_config(R"(
matrix:
  generator: {type: random_spd, n: 500, nnz_per_row: 6, seed: 42}
eigensolver:
  k: 4
  block_size: 6
  which: largest
  tolerance: 1e-9
  convergence_test: relative
  max_iterations: 50
  recompute_interval: 40
  preconditioner: jacobi
  search_precision: fp64
  seed: 9223372036854775807
  start: {file: x0.h5, dataset: /Y}
execution: {backend: cpu, spmm_algorithm: merge_based, spmm_precision: fp32, partition: graph, local_order: none}
output: {path: out/r.h5, monitor: false}
)",
                                              kSource);
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::random_spd);
  EXPECT_EQ(config.matrix.generator.n, 500);
  EXPECT_EQ(config.matrix.generator.nnz_per_row, 6);
  EXPECT_EQ(config.matrix.generator.seed, 42u);
  const EigensolverSettings& e = config.eigensolver;
  EXPECT_EQ(e.lobpcg.k, 4);
  EXPECT_EQ(e.lobpcg.block_size, 6);
  EXPECT_EQ(e.lobpcg.which, SpectrumEnd::largest);
  EXPECT_EQ(e.lobpcg.tolerance, 1e-9);
  EXPECT_EQ(e.lobpcg.test, StoppingTest::relative);
  EXPECT_EQ(e.lobpcg.max_iterations, 50);
  EXPECT_EQ(e.lobpcg.tuning.recompute_interval, 40);
  EXPECT_EQ(e.preconditioner.kind, PreconditionerKind::jacobi);
  EXPECT_EQ(e.lobpcg.search_precision, SearchPrecision::fp64);
  EXPECT_EQ(e.lobpcg.seed, 9223372036854775807u);
  EXPECT_EQ(e.start_file, "x0.h5");
  EXPECT_EQ(e.start_dataset, "/Y");
  EXPECT_EQ(config.execution.backend, Backend::cpu);
  EXPECT_EQ(config.execution.spmm_algorithm, Algorithm::merge_based);
  EXPECT_EQ(config.execution.spmm_precision, Precision::fp32);
  EXPECT_EQ(config.execution.partition, PartitionMethod::graph);
  EXPECT_EQ(config.execution.local_order, LocalOrder::none);
  EXPECT_EQ(config.output.path, "out/r.h5");
  EXPECT_FALSE(config.output.monitor);
}

TEST(ConfigValues, BlockSizeZeroOrAtLeastK) {
  const std::string base = std::string(kMatrix) + "eigensolver: {k: 8, block_size: ";
  EXPECT_EQ(parse_eigs_config(base + "0}", kSource).eigensolver.lobpcg.block_size, 0);
  EXPECT_EQ(parse_eigs_config(base + "8}", kSource).eigensolver.lobpcg.block_size, 8);
}

TEST(ConfigValues, BlockCgSettingsAndRhsSources) {
  const CgConfig config = parse_cg_config(std::string(kMatrix) + R"(
block_cg:
  rhs: {source: hdf5, file: b.h5}
  rtol: 1e-10
  atol: 1e-12
  max_iterations: 7
  preconditioner: jacobi
  seed: 3
)",
                                          kSource);
  EXPECT_EQ(config.solver.rhs, RhsSource::hdf5);
  EXPECT_EQ(config.solver.rhs_file, "b.h5");
  EXPECT_EQ(config.solver.rhs_dataset, "/B");
  EXPECT_EQ(config.solver.cg.rtol, 1e-10);
  EXPECT_EQ(config.solver.cg.atol, 1e-12);
  EXPECT_EQ(config.solver.cg.max_iterations, 7);
  EXPECT_EQ(config.solver.preconditioner.kind, PreconditionerKind::jacobi);
  EXPECT_EQ(config.solver.seed, 3u);

  const CgConfig known =
      parse_cg_config(std::string(kMatrix) + "block_cg: {rhs: {source: known_solution, columns: 3}}", kSource);
  EXPECT_EQ(known.solver.rhs, RhsSource::known_solution);
  EXPECT_EQ(known.solver.columns, 3);
  EXPECT_TRUE(known.solver.rhs_output);  // generated right-hand sides are written by default

  for (const char* source : {"random", "known_solution"}) {
    const CgConfig quiet =
        parse_cg_config(std::string(kMatrix) + "block_cg: {rhs: {source: " + source + ", output: false}}", kSource);
    EXPECT_FALSE(quiet.solver.rhs_output) << source;
  }
}

TEST(ConfigValues, MatrixMarketSource) {
  const EigsConfig config = parse_eigs_config("matrix: {matrix_market: {file: m.mtx.gz}}", kSource);
  EXPECT_EQ(config.matrix.source, MatrixSource::matrix_market);
  EXPECT_EQ(config.matrix.file, "m.mtx.gz");
}

TEST(ConfigText, ControlByteInASetIsRefused) {
  try {
    parse_eigs_config(kMatrix, kSource, std::vector<std::string>{"eigensolver.k=4", "eigensolver.k=\x02"});
    FAIL() << "parsed";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains_all(e.what(), {"--set: byte 15 of KEY=VALUE is 0x02, a control character"}));
  }
}

TEST(ConfigGenerator, RenumberIsReadOnEveryType) {
  for (const char* type : {"laplacian_1d, nx: 8", "laplacian_2d, nx: 4, ny: 2", "laplacian_3d, nx: 2, ny: 2, nz: 2",
                           "random_spd, n: 20"}) {
    const auto config =
        parse_eigs_config(std::string("matrix: {generator: {type: ") + type + ", renumber: {seed: 12}}}\n", kSource);
    EXPECT_TRUE(config.matrix.generator.renumber) << type;
    EXPECT_EQ(config.matrix.generator.renumber_seed, 12u) << type;
  }
  EXPECT_FALSE(parse_eigs_config(kMatrix, kSource).matrix.generator.renumber);
}

// Needs io::validate from io/generators.cpp: the 3D Laplacian has 7- and
// 27-point stencils only.
TEST(ConfigGenerator, ValidateRejectsAStencilTheDimensionLacks) {
  EXPECT_TRUE(
      contains_all(error_of(App::eigs, "matrix: {generator: {type: laplacian_3d, nx: 4, ny: 4, nz: 4, stencil: 5}}"),
                   {"cfg/a.yaml:1: matrix.generator"}));
}

TEST(ConfigKeys, ClosestKey) {
  const std::vector<std::string_view> keys{"k", "block_size", "tolerance", "nx", "ny"};
  EXPECT_EQ(yaml::closest_key("tolerence", keys), "tolerance");
  EXPECT_EQ(yaml::closest_key("tolernace", keys), "tolerance");
  EXPECT_EQ(yaml::closest_key("blocksize", keys), "block_size");
  EXPECT_EQ(yaml::closest_key("K", keys), "k");
  EXPECT_EQ(yaml::closest_key("nz", keys), "nx");
  EXPECT_EQ(yaml::closest_key("x", keys), std::nullopt);
  EXPECT_EQ(yaml::closest_key("precision", keys), std::nullopt);
}

// --- files and relative paths -----------------------------------------------------

TEST(ConfigFiles, RelativeFilesAreTakenFromTheConfigFolder) {
  TempDir dir;
  const fs::path config = dir.write("sub/run.yaml", R"(
matrix: {hdf5: {file: m.h5, group: /M}}
eigensolver: {start: {file: ../starts/x0.h5}}
output: {path: out.h5}
)");
  const EigsConfig eigs = read_eigs_config(config.string());
  EXPECT_EQ(eigs.path, config.string());
  EXPECT_EQ(eigs.matrix.file, (dir.path() / "sub" / "m.h5").string());
  EXPECT_EQ(eigs.matrix.group, "/M");
  EXPECT_EQ(eigs.eigensolver.start_file, (dir.path() / "starts" / "x0.h5").string());
  EXPECT_EQ(eigs.output.path, "out.h5");

  const fs::path cg = dir.write("sub/cg.yaml", R"(
matrix: {matrix_market: {file: /abs/m.mtx}}
block_cg: {rhs: {source: hdf5, file: b.h5, dataset: /RHS}}
)");
  const CgConfig cg_config = read_cg_config(cg.string());
  EXPECT_EQ(cg_config.matrix.file, "/abs/m.mtx");  // absolute names are kept
  EXPECT_EQ(cg_config.solver.rhs_file, (dir.path() / "sub" / "b.h5").string());
  EXPECT_EQ(cg_config.solver.rhs_dataset, "/RHS");
}

TEST(ConfigFiles, ParsedTextTakesFilesFromTheWorkingDirectory) {
  const EigsConfig config =
      parse_eigs_config("matrix: {hdf5: {file: ./data/m.h5}}\neigensolver: {start: {file: x0.h5}}", "inline");
  EXPECT_EQ(config.matrix.file, "data/m.h5");
  EXPECT_EQ(config.eigensolver.start_file, "x0.h5");
}

TEST(ConfigFiles, ErrorsNameTheFileAndLine) {
  TempDir dir;
  const fs::path config = dir.write("bad.yaml", std::string(kMatrix) + "eigensolver:\n  k: -2\n");
  try {
    read_eigs_config(config.string());
    FAIL() << "parsed";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains_all(e.what(), {config.string() + ":3: eigensolver.k must be at least 1"}));
  }
}

TEST(ConfigFiles, MissingEmptyAndDirectory) {
  TempDir dir;
  const auto message = [](const fs::path& path) {
    try {
      read_cg_config(path.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const fs::path missing = dir.path() / "nope.yaml";
  EXPECT_TRUE(contains_all(message(missing), {missing.string() + ": config file not found"}));
  const fs::path empty = dir.write("empty.yaml", "");
  EXPECT_TRUE(contains_all(message(empty), {empty.string() + ": the config is empty"}));
  EXPECT_TRUE(contains_all(message(dir.path()), {dir.path().string() + ": is a directory"}));
}

// Every input the fuzzer found a hang or a crash with is refused with an
// InputError, read as a config file (fuzz/findings).
TEST(ConfigFiles, FuzzFindingsAreRefused) {
  const fs::path findings = fs::path(BLOCKEIGS_SOURCE_DIR) / "fuzz" / "findings";
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(findings)) {
    if (!entry.path().filename().string().starts_with("config-")) continue;
    ++seen;
    EXPECT_THROW(read_eigs_config(entry.path().string()), InputError) << entry.path();
    EXPECT_THROW(read_cg_config(entry.path().string()), InputError) << entry.path();
  }
  EXPECT_GE(seen, 1);
}

// The fuzzer's input with a NUL byte (fuzz/findings): refused as a control byte, naming the file, line and byte.
TEST(ConfigFiles, NulByteFindingNamesTheFileLineAndByte) {
  const fs::path finding = fs::path(BLOCKEIGS_SOURCE_DIR) / "fuzz" / "findings" / "config-timeout-yaml-cpp-f2378b95";
  for (const App app : {App::eigs, App::cg}) {
    try {
      if (app == App::eigs)
        read_eigs_config(finding.string());
      else
        read_cg_config(finding.string());
      FAIL() << "parsed";
    } catch (const InputError& e) {
      EXPECT_TRUE(contains_all(e.what(), {finding.string() + ":1: byte 1 of the line is 0x00, a control character"}));
    }
  }
}

// Keywords (Python's arguments) with a list: an interval read as a file's [a, b], and its checks.
TEST(ConfigKeywords, AnIntervalAsAListOfNumbers) {
  const EigensolverSettings s =
      eigensolver_from_keywords({{"interval", std::vector<double>{0.25, 1.5}}, {"slices", std::int64_t{2}}}, "test");
  EXPECT_TRUE(s.interval);
  EXPECT_EQ(s.window.lower, 0.25);
  EXPECT_EQ(s.window.upper, 1.5);
  EXPECT_EQ(s.window.slices, 2);
  test::expect_mentions(test::input_error_message([] {
                          eigensolver_from_keywords({{"interval", std::vector<double>{1, 2, 3}}}, "f");
                        }),
                        {"f", "eigensolver.interval must be a list of two numbers"});
  test::expect_mentions(test::input_error_message([] {
                          eigensolver_from_keywords({{"interval", std::vector<double>{2, 1}}}, "f");
                        }),
                        {"eigensolver.interval must be [a, b] with a < b, got [2, 1]"});
}

}  // namespace
}  // namespace blockeigs::cfg
