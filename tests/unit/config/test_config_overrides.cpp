// --set KEY=VALUE on the command line over a config file: values replace the
// file's (the last --set of a key wins), sections the file lacks are made,
// and every check of the file applies, with the message naming the --set
// instead of a line of the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "config/run_config.hpp"

namespace blockeigs::cfg {
namespace {

using namespace blockeigs::io;

constexpr const char* kSource = "cfg/a.yaml";
constexpr const char* kFile =
    "matrix:\n"
    "  generator: {type: laplacian_2d, nx: 10, ny: 12}\n"
    "eigensolver:\n"
    "  k: 8\n"
    "  tolerance: 1.0e-6\n";

EigsConfig eigs(const std::vector<std::string>& sets, const std::string& text = kFile) {
  return parse_eigs_config(text, kSource, sets);
}

// The InputError message, empty when it parsed.
std::string eigs_error(const std::vector<std::string>& sets, const std::string& text = kFile) {
  try {
    eigs(sets, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

std::string cg_error(const std::vector<std::string>& sets) {
  try {
    parse_cg_config("matrix: {generator: {type: laplacian_1d, nx: 10}}\n", kSource, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

TEST(ConfigOverrides, ReplaceTheFilesValues) {
  const EigsConfig config = eigs({"eigensolver.k=4", "eigensolver.tolerance=1e-9", "matrix.generator.nx=20"});
  EXPECT_EQ(config.eigensolver.lobpcg.k, 4);
  EXPECT_EQ(config.eigensolver.lobpcg.tolerance, 1e-9);
  EXPECT_EQ(config.matrix.generator.nx, 20);
  EXPECT_EQ(config.matrix.generator.ny, 12);  // untouched
  EXPECT_EQ(config.overrides,
            (std::vector<std::string>{"eigensolver.k=4", "eigensolver.tolerance=1e-9", "matrix.generator.nx=20"}));
}

TEST(ConfigOverrides, WithoutOverridesTheFileIsReadAsItIs) {
  const EigsConfig config = eigs({});
  EXPECT_EQ(config.eigensolver.lobpcg.k, 8);
  EXPECT_TRUE(config.overrides.empty());
}

TEST(ConfigOverrides, TheLastOfARepeatedKeyWins) {
  EXPECT_EQ(eigs({"eigensolver.k=4", "eigensolver.k=5"}).eigensolver.lobpcg.k, 5);
}

TEST(ConfigOverrides, MakeSectionsTheFileLacks) {
  const EigsConfig config = eigs({"output.path=out.h5", "output.monitor=false", "execution.backend=cpu"});
  EXPECT_EQ(config.output.path, "out.h5");
  EXPECT_FALSE(config.output.monitor);
  EXPECT_EQ(config.execution.backend, Backend::cpu);
  // A section written with nothing under it is filled too.
  EXPECT_EQ(eigs({"output.path=x.h5"}, std::string(kFile) + "output:\n").output.path, "x.h5");
}

TEST(ConfigOverrides, ValuesAreYaml) {
  const EigsConfig config = eigs({"matrix.generator={type: laplacian_1d, nx: 50}", "eigensolver.which=largest",
                                  "eigensolver.start={file: x0.h5}"});
  EXPECT_EQ(config.matrix.generator.kind, GeneratorKind::laplacian_1d);
  EXPECT_EQ(config.matrix.generator.nx, 50);
  EXPECT_EQ(config.eigensolver.lobpcg.which, SpectrumEnd::largest);
  EXPECT_EQ(config.eigensolver.start_file, "x0.h5");
}

TEST(ConfigOverrides, BlockCgTakesThemToo) {
  const CgConfig config = parse_cg_config("matrix: {generator: {type: laplacian_1d, nx: 10}}\n", kSource,
                                          std::vector<std::string>{"block_cg.rtol=1e-10", "block_cg.rhs.columns=3"});
  EXPECT_EQ(config.solver.cg.rtol, 1e-10);
  EXPECT_EQ(config.solver.columns, 3);
}

TEST(ConfigOverrides, BadValuesNameTheSet) {
  EXPECT_EQ(eigs_error({"eigensolver.k=0"}), "--set eigensolver.k=0: eigensolver.k must be at least 1, got 0");
  EXPECT_EQ(eigs_error({"eigensolver.tolerance=-1"}),
            "--set eigensolver.tolerance=-1: eigensolver.tolerance must be positive, got -1");
  EXPECT_EQ(eigs_error({"eigensolver.which=smalest"}),
            "--set eigensolver.which=smalest: eigensolver.which must be smallest or largest, got 'smalest' "
            "(did you mean smallest?)");
  EXPECT_EQ(cg_error({"block_cg.rtol=abc"}),
            "--set block_cg.rtol=abc: block_cg.rtol must be a finite number, got 'abc'");
  // Inside a value given whole, and a key it lacks.
  EXPECT_EQ(eigs_error({"matrix.generator={type: laplacian_1d, nx: 0}"}),
            "--set matrix.generator={type: laplacian_1d, nx: 0}: matrix.generator.nx must be at least 1, got 0");
  EXPECT_EQ(eigs_error({"matrix.generator={type: laplacian_1d}"}),
            "--set matrix.generator={type: laplacian_1d}: missing required key matrix.generator.nx "
            "(type laplacian_1d takes nx, stencil and renumber)");
}

TEST(ConfigOverrides, UnknownKeysAreNamedWithASuggestion) {
  EXPECT_EQ(eigs_error({"eigensolver.tolerence=1e-7"}),
            "--set eigensolver.tolerence=1e-7: unknown key eigensolver.tolerence (did you mean tolerance?)");
  EXPECT_EQ(eigs_error({"eigensolvr.k=4"}), "--set eigensolvr.k=4: unknown key eigensolvr (did you mean eigensolver?)");
  EXPECT_EQ(eigs_error({"block_cg.rtol=1e-6"}),
            "--set block_cg.rtol=1e-6: unknown key block_cg (block_cg is read by block-cg, not block-eigs)");
  EXPECT_EQ(cg_error({"block_cg.k=4"}).rfind("--set block_cg.k=4: unknown key block_cg.k (known keys: ", 0), 0u)
      << cg_error({"block_cg.k=4"});
}

TEST(ConfigOverrides, ChecksAcrossKeysStillApply) {
  // block_size from the file against k from the command line: the file's key is named, where it is.
  const std::string text = std::string(kFile) + "  block_size: 10\n";
  EXPECT_EQ(eigs_error({"eigensolver.k=12"}, text),
            "cfg/a.yaml:6: eigensolver.block_size must be 0 (automatic) or at least k = 12, got 10");
  EXPECT_EQ(eigs_error({"eigensolver.block_size=4"}),
            "--set eigensolver.block_size=4: eigensolver.block_size must be 0 (automatic) or at least k = 8, got 4");
}

TEST(ConfigOverrides, MalformedAssignmentsAreRefused) {
  EXPECT_EQ(eigs_error({"eigensolver.k"}), "--set eigensolver.k: expected KEY=VALUE, e.g. --set eigensolver.k=4");
  EXPECT_EQ(eigs_error({"=4"}),
            "--set =4: expected KEY=VALUE with KEY a dotted key path such as eigensolver.k, got ''");
  EXPECT_EQ(eigs_error({"eigensolver..k=4"}),
            "--set eigensolver..k=4: expected KEY=VALUE with KEY a dotted key path such as eigensolver.k, got "
            "'eigensolver..k'");
  EXPECT_EQ(eigs_error({"eigensolver.k=[4"}).rfind("--set eigensolver.k=[4: the value is not YAML: ", 0), 0u)
      << eigs_error({"eigensolver.k=[4"});
  // A path through a value that is not a mapping names where that value is.
  EXPECT_EQ(eigs_error({"eigensolver.k.x=1"}),
            "--set eigensolver.k.x=1: cannot set eigensolver.k.x: cfg/a.yaml:4: eigensolver.k is '8', not a "
            "mapping of keys");
  // An empty value is no value.
  EXPECT_EQ(eigs_error({"output.path="}), "--set output.path=: output.path must be a string, got nothing");
}

TEST(ConfigOverrides, TheFormIsCheckedApart) {
  // What the apps refuse as a bad command line (exit 2) before reading the file.
  EXPECT_EQ(override_form_problem("eigensolver.k=4"), "");
  EXPECT_EQ(override_form_problem("eigensolver.k="), "");  // an empty value is the value's problem
  EXPECT_EQ(override_form_problem("eigensolver.k"), "expected KEY=VALUE, e.g. --set eigensolver.k=4");
  EXPECT_EQ(override_form_problem(".k=4"),
            "expected KEY=VALUE with KEY a dotted key path such as eigensolver.k, got '.k'");
  EXPECT_EQ(override_form_problem("eigensolver.=4"),
            "expected KEY=VALUE with KEY a dotted key path such as eigensolver.k, got 'eigensolver.'");
}

TEST(ConfigOverrides, ABadChoiceGetsTheValueItMeans) {
  const auto suggested = [](const std::string& set) {
    const std::string message = eigs_error({set});
    const std::size_t at = message.find("(did you mean ");
    return at == std::string::npos ? std::string("none") : message.substr(at + 14, message.size() - at - 16);
  };
  // By meaning, where the nearest spelling misleads ("gpu" is one edit from "cpu").
  EXPECT_EQ(suggested("execution.backend=gpu"), "cuda");
  EXPECT_EQ(suggested("execution.backend=GPU"), "cuda");
  EXPECT_EQ(suggested("execution.backend=host"), "cpu");
  EXPECT_EQ(suggested("execution.spmm_algorithm=auto"), "automatic");
  EXPECT_EQ(suggested("execution.spmm_precision=double"), "fp64");
  EXPECT_EQ(suggested("execution.partition=metis"), "graph");
  EXPECT_EQ(suggested("eigensolver.which=max"), "largest");
  EXPECT_EQ(suggested("eigensolver.preconditioner=diagonal"), "jacobi");
  // A word whose meaning is not among the allowed values falls back to the spelling.
  EXPECT_EQ(suggested("execution.backend=cdua"), "cuda");
  EXPECT_EQ(suggested("eigensolver.which=smalest"), "smallest");
  EXPECT_EQ(suggested("execution.backend=fpga"), "none");
  EXPECT_EQ(eigs_error({"execution.backend=gpu"}),
            "--set execution.backend=gpu: execution.backend must be auto, cpu or cuda, got 'gpu' (did you mean cuda?)");
}

TEST(ConfigOverrides, ReadFromAFile) {
  const auto dir = std::filesystem::temp_directory_path() / "blockeigs_config_overrides";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "c.yaml").string();
  std::ofstream(path) << kFile;
  const std::vector<std::string> sets{"eigensolver.k=3"};
  EXPECT_EQ(read_eigs_config(path, sets).eigensolver.lobpcg.k, 3);
  try {
    read_eigs_config(path, std::vector<std::string>{"eigensolver.k=x"});
    FAIL() << "parsed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--set eigensolver.k=x: eigensolver.k must be an integer, got 'x'");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blockeigs::cfg
