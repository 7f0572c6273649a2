// block-eigs and block-cg run in-process at np 1-4 with inputs from HDF5
// files: a start block for LOBPCG and right-hand sides for block CG, read by
// row range on every rank; the results written in rank order are read back
// and checked.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "apps/app_main.hpp"
#include "apps/run/cg_run.hpp"
#include "apps/run/eigs_run.hpp"
#include "apps/run/output/distributed_output.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_dense.hpp"
#include "io/hdf5_writer.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;

// A double attribute of the file's root group; NaN where it is missing.
double read_root_attribute(const std::string& file, const char* name) {
  double value = std::nan("");
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (H5Aexists(f, name) > 0) {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &value);
    H5Aclose(a);
  }
  H5Fclose(f);
  return value;
}

// The HDF5 type class of a root attribute (H5T_NO_CLASS where it is missing)
// and its value as text: integers in decimal, an enum by its member's name.
struct Attribute {
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t size = 0;
  std::string text;
};

Attribute read_root_attribute_as_written(const std::string& file, const char* name) {
  Attribute out;
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (H5Aexists(f, name) > 0) {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    hid_t type = H5Aget_type(a);
    out.type_class = H5Tget_class(type);
    out.size = H5Tget_size(type);
    if (out.type_class == H5T_INTEGER) {
      long long value = 0;
      H5Aread(a, H5T_NATIVE_LLONG, &value);
      out.text = std::to_string(value);
    } else if (out.type_class == H5T_ENUM) {
      std::vector<char> raw(out.size);
      H5Aread(a, type, raw.data());
      char member[32] = {};
      H5Tenum_nameof(type, raw.data(), member, sizeof member);
      out.text = member;
    } else if (out.type_class == H5T_STRING) {
      std::string value(out.size, '\0');
      H5Aread(a, type, value.data());
      out.text = value.c_str();
    }
    H5Tclose(type);
    H5Aclose(a);
  }
  H5Fclose(f);
  return out;
}

// Integers and booleans as such, and where the file came from (issue 57).
void expect_typed_attributes_and_provenance(const std::string& file, const char* app, const char* count) {
  const Attribute converged = read_root_attribute_as_written(file, "all_converged");
  EXPECT_EQ(converged.type_class, H5T_ENUM);
  EXPECT_EQ(converged.size, 1u);
  EXPECT_EQ(converged.text, "TRUE");
  const Attribute counted = read_root_attribute_as_written(file, count);
  EXPECT_EQ(counted.type_class, H5T_INTEGER) << count;
  EXPECT_GT(std::stoll(counted.text.empty() ? "0" : counted.text), 0) << count;
  const Attribute ranks = read_root_attribute_as_written(file, "ranks");
  EXPECT_EQ(ranks.type_class, H5T_INTEGER);
  EXPECT_EQ(ranks.text, std::to_string(test::mpi_size()));
  EXPECT_EQ(read_root_attribute_as_written(file, "app").text, app);
  EXPECT_EQ(read_root_attribute_as_written(file, "version").text, BLOCKEIGS_VERSION);
  const std::string backend = read_root_attribute_as_written(file, "backend").text;
  EXPECT_TRUE(backend == "cpu" || backend == "cuda") << backend;
  EXPECT_FALSE(read_root_attribute_as_written(file, "commit").text.empty());
  const std::string date = read_root_attribute_as_written(file, "date").text;
  EXPECT_EQ(date.size(), 20u) << date;  // 2026-01-02T03:04:05Z
  EXPECT_EQ(date.back(), 'Z') << date;
}

// The run's account of time (issue 63): the set-up phases sum to time_setup, and all phases to the wall
// (the process's age when the file was written) within 5%.
void expect_account_adds_up(const std::string& file) {
  double setup = 0;
  for (const char* phase : {"startup", "config", "backend", "memory_plan", "read", "symmetry", "partition", "move_rows",
                            "local_order", "matrix_b", "operator", "start_block", "preconditioner"}) {
    const double t = read_root_attribute(file, ("time_setup_" + std::string(phase)).c_str());
    ASSERT_GE(t, 0.0) << phase;
    setup += t;
  }
  EXPECT_NEAR(setup, read_root_attribute(file, "time_setup"), 1e-9 * std::max(1.0, setup));
  double total = setup;
  for (const char* phase :
       {"time_solve_wall", "time_checkpoints", "time_output_gather", "time_output_write", "time_report"}) {
    const double t = read_root_attribute(file, phase);
    ASSERT_GE(t, 0.0) << phase;
    total += t;
  }
  const double wall = read_root_attribute(file, "time_wall");
  EXPECT_GT(read_root_attribute(file, "time_solve_wall"), 0.0);
  // Not a phase: the CUDA context's own time beside the reading (none on the CPU).
  const double context = read_root_attribute(file, "time_context_beside_reading");
  EXPECT_GE(context, 0.0);
  if (read_root_attribute_as_written(file, "backend").text == "cpu") {
    EXPECT_EQ(context, 0.0);
  }
  EXPECT_NEAR(total, wall, 0.05 * wall);
}

bool has_dataset(const std::string& file, const char* dataset) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const bool found = H5Lexists(f, dataset, H5P_DEFAULT) > 0;
  H5Fclose(f);
  return found;
}

constexpr std::int64_t nx = 16, ny = 12;  // 2D Laplacian, 192 rows

void block_cg_with_rhs_from_hdf5() {
  const fs::path dir = test::shared_folder("app_runs");
  const std::string rhs = (dir / "rhs.h5").string(), out = (dir / "cg.h5").string();
  const std::int64_t n = nx * ny;
  if (test::mpi_rank() == 0) {
    std::vector<double> B(static_cast<std::size_t>(n * 3));
    for (std::int64_t i = 0; i < n; ++i) {
      B[i * 3 + 0] = 1.0;
      B[i * 3 + 1] = std::sin(0.1 * double(i));
      B[i * 3 + 2] = 0.0;  // a zero column: x = 0
    }
    io::Hdf5Writer writer(rhs, true);
    writer.write_matrix("/rhs/B", n, 3, B);
    writer.close();
    io::commit_output(rhs);
  }
  test::write_text(dir / "cg.yaml",
                   "matrix:\n  generator: {type: laplacian_2d, nx: 16, ny: 12}\nblock_cg:\n  rhs: {source: hdf5, file: "
                   "rhs.h5, dataset: /rhs/B}\n  rtol: 1.0e-10\noutput:\n  path: " +
                       out + "\n  monitor: false\n");
  EXPECT_EQ(apps::run_cg((dir / "cg.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const auto true_residuals = test::read_dataset(out, "/true_residual_norms");
  const auto rhs_norms = test::read_dataset(out, "/rhs_norms");
  ASSERT_EQ(true_residuals.size(), 3u);
  for (int j = 0; j < 2; ++j) EXPECT_LE(true_residuals[j], 1e-9 * rhs_norms[j]) << j;
  EXPECT_EQ(true_residuals[2], 0.0);
  expect_typed_attributes_and_provenance(out, "block-cg", "total_iterations");
  expect_account_adds_up(out);
  // X as written (rank by rank) solves A X = B: check column 0 against A X from the whole matrix.
  const io::DenseRows X = io::read_hdf5_dense_rows(out, "/X", 0, n, n);
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, nx, ny, 1, 5};
  const CsrRows A = io::generate_rows(spec, 0, n);
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double ax = 0;
    for (std::int64_t k = A.row_offsets[i]; k < A.row_offsets[i + 1]; ++k)
      ax += A.values[k] * X.values[A.col_indices[k] * 3];
    worst = std::max(worst, std::abs(ax - 1.0));
  }
  EXPECT_LT(worst, 1e-8);
}

TEST(AppRuns, BlockCgWithRightHandSidesFromHdf5) { block_cg_with_rhs_from_hdf5(); }

// The write path that serial HDF5 builds take: each rank writes its rows straight into the file.
TEST(AppRuns, BlockCgWithSerialHdf5Output) {
  apps::set_serial_output_for_tests(true);
  block_cg_with_rhs_from_hdf5();
  apps::set_serial_output_for_tests(false);
}

// Generated right-hand sides are written to the result file while the run goes on (EarlyOutput); a run that
// fails after that (Jacobi refuses a zero on the diagonal) leaves neither the result nor its temporary file.
TEST(AppRuns, BlockCgThatFailsAfterWritingItsRightHandSidesLeavesNoFile) {
  const fs::path dir = test::shared_folder("app_runs");
  const std::string out = (dir / "cg_failed.h5").string();
  test::write_text(dir / "zero_diagonal.mtx",
                   "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 0\n2 1 1\n2 2 2\n3 3 2\n");
  test::write_text(dir / "cg_failed.yaml",
                   "matrix:\n  matrix_market: {file: zero_diagonal.mtx}\nblock_cg:\n  rhs: {source: random, columns: "
                   "2}\n  preconditioner: jacobi\nexecution: {partition: contiguous, local_order: none}\noutput:\n  "
                   "path: " +
                       out + "\n  monitor: false\n");
  EXPECT_THROW(apps::run_cg((dir / "cg_failed.yaml").string(), MPI_COMM_WORLD), Error);  // on every rank, agreed
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(io::temporary_output_name(out)));
}

TEST(AppRuns, BlockEigsWithStartBlockFromHdf5) {
  const fs::path dir = test::shared_folder("app_runs");
  const std::string start = (dir / "start.h5").string(), out = (dir / "eigs.h5").string();
  const std::int64_t n = nx * ny;
  if (test::mpi_rank() == 0) {
    std::vector<double> X(static_cast<std::size_t>(n * 2));
    for (std::int64_t i = 0; i < n; ++i) X[i * 2] = X[i * 2 + 1] = 1.0;  // two equal columns: rank deficient
    io::Hdf5Writer writer(start, true);
    writer.write_matrix("/X", n, 2, X);
    writer.close();
    io::commit_output(start);
  }
  test::write_text(dir / "eigs.yaml",
                   "matrix:\n  generator: {type: laplacian_2d, nx: 16, ny: 12}\neigensolver:\n  k: 3\n  tolerance: "
                   "1.0e-8\n  convergence_test: relative\n  start: {file: start.h5}\noutput:\n  path: " +
                       out + "\n  monitor: false\n");
  EXPECT_EQ(apps::run_eigs((dir / "eigs.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const auto values = test::read_dataset(out, "/eigenvalues");
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, nx, ny, 1, 5};
  const auto exact = io::laplacian_eigenvalues(spec);
  ASSERT_EQ(values.size(), 3u);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(values[j], exact[j], 1e-10 * exact[j]) << j;
  const io::DenseRows vectors = io::read_hdf5_dense_rows(out, "/eigenvectors", 0, n, n);
  EXPECT_EQ(vectors.cols, 3);
  // The rest of the results (issue 5, item 4): residuals, verdicts, the
  // per-iteration history, the config used, timings.
  const auto relative = test::read_dataset(out, "/relative_residuals"),
             converged = test::read_dataset(out, "/converged");
  ASSERT_EQ(test::read_dataset(out, "/residual_norms").size(), 3u);
  ASSERT_EQ(relative.size(), 3u);
  ASSERT_EQ(converged.size(), 3u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_LE(relative[j], 1e-8) << j;
    EXPECT_EQ(converged[j], 1.0) << j;
  }
  const auto iterations = test::read_dataset(out, "/iterations");
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_GE(iterations[0], 1.0);
  // One history row per iteration and one for the start block.
  EXPECT_EQ(test::read_dataset(out, "/history/residual_norms").size(), std::size_t(iterations[0] + 1) * 3);
  EXPECT_EQ(test::read_dataset(out, "/history/eigenvalues").size(), std::size_t(iterations[0] + 1) * 3);
  EXPECT_TRUE(has_dataset(out, "/config"));
  expect_typed_attributes_and_provenance(out, "block-eigs", "block_size");
  EXPECT_GT(read_root_attribute(out, "time_total"), 0.0);
  expect_account_adds_up(out);
}

}  // namespace
}  // namespace blockeigs
