// block-eigs' inputs for A x = lambda B x and constraints, at np 1-4, run
// in-process: every bad input the issue lists is refused on every rank with
// a message naming the key, file or value, and nothing is written (B of
// another size, not symmetric, with a zero or negative diagonal entry; a
// constraint block with the wrong number of rows, a zero column, dependent
// columns, too many columns for k, a missing dataset; a checkpoint of the
// standard problem resumed as a generalized one). A dry run plans B.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/app_main.hpp"
#include "apps/run/eigs_run.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t n = 50;  // the path graph's vertices
const std::string kPath = "matrix:\n  generator: {type: graph_laplacian, graph: path, n: 50}\n";

fs::path folder() { return test::shared_folder("pencil_inputs"); }

// Rank 0 writes a rows x cols block (entry (i, j) from `value`) as `dataset` of `name`.
std::string write_block(const std::string& name, std::int64_t rows, std::int64_t cols,
                        double (*value)(std::int64_t, std::int64_t)) {
  const std::string path = (folder() / name).string();
  if (test::mpi_rank() == 0) {
    std::vector<double> values(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) values[i * cols + j] = value(i, j);
    io::Hdf5Writer writer(path, true);
    writer.write_matrix("/Y", rows, cols, values);
    writer.close();
    io::commit_output(path);
  }
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  return path;
}

// The agreed message of a refused run (empty when it ran); its output file must not exist.
std::string refusal(const std::string& name, const std::string& text) {
  const fs::path config = folder() / (name + ".yaml"), out = folder() / (name + "_out.h5");
  test::write_text(config, text + "output: {path: " + out.string() + ", monitor: false}\n");
  std::string message;
  try {
    apps::run_eigs(config.string(), MPI_COMM_WORLD);
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error()) << e.what();
    message = e.what();
  }
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out)) << out;
  return message;
}

void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(message.empty()) << "not refused";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
}

TEST(PencilInputs, ConstraintsWithTheWrongNumberOfRows) {
  const std::string y = write_block("short.h5", n - 1, 1, [](std::int64_t, std::int64_t) { return 1.0; });
  expect_parts(refusal("short", kPath + "eigensolver: {k: 4, constraints: {file: " + y + "}}\n"),
               {"eigensolver.constraints: ", "short.h5: /Y has 49 rows, but the matrix has 50"});
}

TEST(PencilInputs, ConstraintsWithAZeroColumn) {
  const std::string y = write_block(
      "zero.h5", n, 3, [](std::int64_t i, std::int64_t j) { return j == 1 ? 0.0 : std::cos(double(i + j)); });
  expect_parts(refusal("zero", kPath + "eigensolver: {k: 4, constraints: {file: " + y + "}}\n"),
               {"eigensolver.constraints: " + y + ":/Y: column 1 is zero", "full column rank"});
}

// Column 3 is 2 column 0 - column 1 (to rounding): the Gram matrix is singular.
TEST(PencilInputs, ConstraintsWithDependentColumns) {
  const std::string y = write_block("dependent.h5", n, 4, [](std::int64_t i, std::int64_t j) {
    const double a = 1.0, b = std::sin(0.3 * double(i)), c = double(i % 7);
    return j == 0 ? a : j == 1 ? b : j == 2 ? c : 2 * a - b;
  });
  expect_parts(refusal("dependent", kPath + "eigensolver: {k: 4, constraints: {file: " + y + "}}\n"),
               {"eigensolver.constraints: " + y + ":/Y: the 4 columns are linearly dependent",
                "a combination of columns 0, 1, 3 nearly vanishes", "full column rank"});
}

TEST(PencilInputs, ConstraintsLeavingNoRoomForK) {
  const std::string y =
      write_block("wide.h5", n, 3, [](std::int64_t i, std::int64_t j) { return std::cos(double((j + 1) * i)); });
  expect_parts(
      refusal("wide", kPath + "eigensolver: {k: 47, constraints: {file: " + y + "}}\n"),
      {"eigensolver.constraints: " + y + ":/Y has 3 columns and eigensolver.k is 47", "below the matrix's 50 rows"});
  expect_parts(refusal("constant_k", kPath + "eigensolver: {k: 49, constraints: constant}\n"),
               {"eigensolver.constraints: constant has 1 column and eigensolver.k is 49"});
}

TEST(PencilInputs, ConstraintsDatasetMissing) {
  const std::string y = write_block("other.h5", n, 1, [](std::int64_t, std::int64_t) { return 1.0; });
  expect_parts(refusal("missing", kPath + "eigensolver: {k: 4, constraints: {file: " + y + ", dataset: /Z}}\n"),
               {"eigensolver.constraints: ", "other.h5", "/Z"});
}

TEST(PencilInputs, BadMatrixBThroughTheApp) {
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  const std::string symmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
  test::write_text(folder() / "b_nonsymmetric.mtx", general + "4 4 5\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n3 1 0.25\n");
  test::write_text(folder() / "b_zero.mtx", symmetric + "4 4 4\n1 1 1\n2 2 1\n3 3 0\n4 4 1\n");
  test::write_text(folder() / "b_negative.mtx", symmetric + "4 4 4\n1 1 1\n2 2 1\n3 3 1\n4 4 -2\n");
  const std::string a = "matrix:\n  generator: {type: fem_p1_1d, nx: 4, part: stiffness}\neigensolver: {k: 1}\n";
  auto with_b = [&](const std::string& b) { return a + "matrix_b: " + b + "\n"; };
  expect_parts(refusal("b_size", with_b("{generator: {type: fem_p1_1d, nx: 5, part: mass}}")),
               {"matrix_b: 1D fem_p1 mass 5", "is 5 x 5, but the matrix (A) is 4 x 4"});
  expect_parts(
      refusal("b_nonsymmetric", with_b("{matrix_market: {file: " + (folder() / "b_nonsymmetric.mtx").string() + "}}")),
      {"matrix_b: ", "b_nonsymmetric.mtx: the matrix is not symmetric: B(2, 0) = 0.25 but B(0, 2) = 0"});
  expect_parts(refusal("b_zero", with_b("{matrix_market: {file: " + (folder() / "b_zero.mtx").string() + "}}")),
               {"matrix_b: ", "b_zero.mtx: B(2, 2) = 0 (zero-based)", "positive diagonal"});
  expect_parts(refusal("b_negative", with_b("{matrix_market: {file: " + (folder() / "b_negative.mtx").string() + "}}")),
               {"b_negative.mtx: B(3, 3) = -2 (zero-based)"});
}

// A checkpoint of A x = lambda x is no start for A x = lambda B x: refused before anything is solved.
TEST(PencilInputs, ResumeOfTheOtherProblemIsRefused) {
  const fs::path checkpoint = folder() / "standard_checkpoint.h5", config = folder() / "standard.yaml";
  const std::string a = "matrix:\n  generator: {type: fem_p1_2d, nx: 8, ny: 6, part: stiffness}\n";
  test::write_text(config,
                   a + "eigensolver: {k: 2, max_iterations: 2}\noutput:\n  monitor: false\n  checkpoint: {path: " +
                       checkpoint.string() + ", every_iterations: 1}\n");
  EXPECT_EQ(apps::run_eigs(config.string(), MPI_COMM_WORLD), apps::exit_not_converged);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  ASSERT_TRUE(fs::exists(checkpoint));
  expect_parts(
      refusal("resumed", a +
                             "matrix_b: {generator: {type: fem_p1_2d, nx: 8, ny: 6, part: mass}}\n"
                             "eigensolver: {k: 2}\nresume: " +
                             checkpoint.string() + "\n"),
      {"resume: " + checkpoint.string() + " is a checkpoint of A x = \u03bb x, but this run solves A x = \u03bb B x",
       "give matrix_b as that run did"});
}

TEST(PencilInputs, DryRunPlansB) {
  const fs::path config = folder() / "dry.yaml", out = folder() / "dry.h5";
  test::write_text(config,
                   "matrix:\n  generator: {type: fem_p1_3d, nx: 6, ny: 5, nz: 4, part: stiffness}\n"
                   "matrix_b:\n  generator: {type: fem_p1_3d, nx: 6, ny: 5, nz: 4, part: mass}\n"
                   "eigensolver: {k: 3, constraints: constant}\noutput: {path: " +
                       out.string() + "}\n");
  EXPECT_EQ(apps::run_eigs(config.string(), MPI_COMM_WORLD, {}, true), apps::exit_ok);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace blockeigs
