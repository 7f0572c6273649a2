// block-eigs and block-cg on complex Hermitian matrices, in-process at np 1-4: the
// periodic (Bloch) generator, a complex Matrix Market file (checked whole)
// and a complex HDF5 file (the distributed Hermitian check); the result file's
// eigenvalues against the closed form and its complex eigenvectors (h5py's
// layout) re-checked against the matrix; a real generator taken as complex
// (matrix.field); block-cg's complex solutions (h5py's layout) against the
// right-hand sides it wrote; and the settings a complex run refuses, by key,
// on every rank.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <string>
#include <tuple>
#include <vector>

#include "apps/app_main.hpp"
#include "apps/run/cg_run.hpp"
#include "apps/run/eigs_run.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "io/hdf5_csr.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "tests/support/expect_error.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;
using C = std::complex<double>;

const io::TwistedLaplacian kBloch{9, 8, 7, {0.7, -1.1, 2.3}};
constexpr int kPairs = 10;

// A dataset of complex values in h5py's layout (a compound of r and i), whole.
std::vector<C> read_complex(const std::string& file, const char* name) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t set = H5Dopen2(f, name, H5P_DEFAULT);
  hid_t type = H5Dget_type(set), space = H5Dget_space(set);
  EXPECT_EQ(H5Tget_class(type), H5T_COMPOUND) << name << " is not complex";
  std::vector<C> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  hid_t memory = H5Tcreate(H5T_COMPOUND, sizeof(C));
  H5Tinsert(memory, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(memory, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  EXPECT_GE(H5Dread(set, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0);
  for (hid_t id : {memory, type}) H5Tclose(id);
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(f);
  return out;
}

// The run's eigenvalues equal the closed form's smallest to 1e-9 relative; each
// eigenvector's residual ||A x - lambda x|| is within the test, and X^H X = I.
void expect_pairs(const std::string& result, const ComplexCsrRows& whole, const std::vector<double>& exact) {
  const std::vector<double> lambda = test::read_dataset(result, "/eigenvalues");
  const std::vector<C> X = read_complex(result, "/eigenvectors");
  ASSERT_EQ(lambda.size(), std::size_t(kPairs));
  ASSERT_EQ(X.size(), std::size_t(whole.global_rows * kPairs));
  for (int j = 0; j < kPairs; ++j) {
    EXPECT_NEAR(lambda[j], exact[j], 1e-9 * exact[j]) << "pair " << j;
    double residual = 0;
    for (std::int64_t i = 0; i < whole.global_rows; ++i) {
      C y = -lambda[j] * X[i * kPairs + j];
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        y += whole.values[p] * X[whole.col_indices[p] * kPairs + j];
      residual += std::norm(y);
    }
    EXPECT_LE(std::sqrt(residual), 2e-10 * lambda[j]) << "pair " << j;
    for (int l = 0; l < j; ++l) {
      C dot = 0;
      for (std::int64_t i = 0; i < whole.global_rows; ++i) dot += std::conj(X[i * kPairs + l]) * X[i * kPairs + j];
      EXPECT_LE(std::abs(dot), 1e-12) << "x_" << l << "^H x_" << j;
    }
  }
}

std::string config(const std::string& matrix, const std::string& result, const std::string& more = "") {
  return "matrix:\n" + matrix + "eigensolver: {k: " + std::to_string(kPairs) +
         ", tolerance: 1.0e-10}\noutput: {path: " + result + ", monitor: false}\n" + more;
}

int run(const fs::path& dir, const std::string& name, const std::string& text) {
  test::write_text(dir / name, text);  // rank 0 writes, every rank waits
  return apps::run_eigs((dir / name).string(), MPI_COMM_WORLD);
}

// The Bloch Laplacian as a general complex Matrix Market file, every entry written.
void write_matrix_market(const fs::path& path, const ComplexCsrRows& whole) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix coordinate complex general\n"
      << whole.global_rows << " " << whole.global_cols << " " << whole.nnz() << "\n"
      << std::setprecision(17);
  for (std::int64_t i = 0; i < whole.global_rows; ++i)
    for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
      out << i + 1 << " " << whole.col_indices[p] + 1 << " " << whole.values[p].real() << " " << whole.values[p].imag()
          << "\n";
}

TEST(ComplexRuns, BlochGeneratorMatrixMarketAndHdf5) {
  const fs::path dir = test::shared_folder("complex_runs");
  const std::int64_t n = kBloch.nx * kBloch.ny * kBloch.nz;
  const ComplexCsrRows whole = io::twisted_laplacian_rows(kBloch, 0, n);
  const std::vector<double> exact = io::twisted_laplacian_eigenvalues(kBloch);
  if (test::mpi_rank() == 0) {
    write_matrix_market(dir / "bloch.mtx", whole);
    io::write_hdf5_csr((dir / "bloch.h5").string(), "/A", whole);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string generator =
      "  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7, boundary: periodic, phase: [0.7, -1.1, 2.3]}\n";
  const std::string sources[] = {generator, "  matrix_market: {file: bloch.mtx}\n", "  hdf5: {file: bloch.h5}\n"};
  for (const std::string& source : sources) {
    SCOPED_TRACE(source);
    const std::string result = (dir / "result.h5").string();
    ASSERT_EQ(run(dir, "bloch.yaml", config(source, result)), apps::exit_ok);
    expect_pairs(result, whole, exact);
  }
  // The file's rows moved by a graph partition (where PT-Scotch is built in; else a random saved numbering)
  // and ordered by band: the same pairs, the eigenvectors in the file's numbering.
  const std::string result = (dir / "moved.h5").string();
  const std::string moved = solver::graph_partitioner_compiled() ? "execution: {partition: graph, local_order: band}\n"
                                                                 : "execution: {local_order: band}\n";
  ASSERT_EQ(run(dir, "moved.yaml", config(sources[2], result, moved)), apps::exit_ok);
  expect_pairs(result, whole, exact);
}

// A window of the Bloch Laplacian, [0.5, 1.2] (the closed form's values there, each once, none missed), in
// two slices (side by side on groups of ranks at two ranks and more), the mixed filter on the device's
// default; complex eigenvectors re-checked against the matrix and orthonormal; count: inertia refused.
TEST(ComplexRuns, WindowOfTheBlochLaplacian) {
  const fs::path dir = test::shared_folder("complex_runs_window");
  const std::int64_t n = kBloch.nx * kBloch.ny * kBloch.nz;
  const ComplexCsrRows whole = io::twisted_laplacian_rows(kBloch, 0, n);
  std::vector<double> exact;
  for (const double v : io::twisted_laplacian_eigenvalues(kBloch))
    if (v >= 0.5 && v <= 1.2) exact.push_back(v);
  const std::string bloch =
      "matrix:\n  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7, boundary: periodic, phase: [0.7, -1.1, "
      "2.3]}\n";
  const std::string result = (dir / "window.h5").string();
  ASSERT_EQ(run(dir, "window.yaml",
                bloch + "eigensolver: {interval: [0.5, 1.2], slices: 2, tolerance: 1.0e-10}\noutput: {path: " + result +
                    ", monitor: false}\n"),
            apps::exit_ok);
  const std::vector<double> lambda = test::read_dataset(result, "/eigenvalues");
  const std::vector<C> X = read_complex(result, "/eigenvectors");
  ASSERT_EQ(lambda.size(), exact.size());
  const std::size_t k = exact.size();
  ASSERT_EQ(X.size(), std::size_t(n) * k);
  for (std::size_t j = 0; j < k; ++j) {
    EXPECT_NEAR(lambda[j], exact[j], 1e-9 * exact[j]) << "pair " << j;
    double residual = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      C y = -lambda[j] * X[i * k + j];
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        y += whole.values[p] * X[whole.col_indices[p] * k + j];
      residual += std::norm(y);
    }
    EXPECT_LE(std::sqrt(residual), 2e-10 * lambda[j]) << "pair " << j;
    for (std::size_t l = 0; l <= j; ++l) {
      C dot = 0;
      for (std::int64_t i = 0; i < n; ++i) dot += std::conj(X[i * k + l]) * X[i * k + j];
      EXPECT_LE(std::abs(dot - (l == j ? 1.0 : 0.0)), 1e-12) << "x_" << l << "^H x_" << j;
    }
  }
  test::expect_mentions(test::input_error_message([&] {
                          run(dir, "inertia.yaml", bloch + "eigensolver: {interval: [0.5, 1.2], count: inertia}\n");
                        }),
                        {"eigensolver.count", "complex values"});
}

// matrix.field: complex on a real generator: its values taken as complex, the real closed form found.
TEST(ComplexRuns, RealGeneratorTakenAsComplex) {
  const fs::path dir = test::shared_folder("complex_runs_field");
  const std::string result = (dir / "result.h5").string();
  ASSERT_EQ(run(dir, "field.yaml",
                config("  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7}\n  field: complex\n", result)),
            apps::exit_ok);
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, 9, 8, 7, 7};
  const std::vector<double> exact = io::laplacian_eigenvalues(spec),
                            lambda = test::read_dataset(result, "/eigenvalues");
  for (int j = 0; j < kPairs; ++j) EXPECT_NEAR(lambda[j], exact[j], 1e-9 * exact[j]) << "pair " << j;
  EXPECT_EQ(read_complex(result, "/eigenvectors").size(), std::size_t(9 * 8 * 7 * kPairs));
}

// Not Hermitian: the entries named, from Matrix Market (checked whole, 1-based) and HDF5 (distributed, 0-based),
// on every rank, no result file: an off-diagonal entry whose partner is not its conjugate, an imaginary diagonal.
TEST(ComplexRuns, NotHermitianIsRefusedNamingTheEntries) {
  const fs::path dir = test::shared_folder("complex_runs_bad");
  const std::int64_t n = kBloch.nx * kBloch.ny * kBloch.nz;
  const ComplexCsrRows good = io::twisted_laplacian_rows(kBloch, 0, n);
  std::int64_t off = good.row_offsets[5];  // row 5's first entry off the diagonal
  while (good.col_indices[off] == 5) ++off;
  const std::string col = std::to_string(good.col_indices[off]);
  ComplexCsrRows off_diagonal = good, diagonal = good;
  off_diagonal.values[off] += C(0, 0.25);
  for (std::int64_t p = good.row_offsets[5]; p < good.row_offsets[6]; ++p)
    if (good.col_indices[p] == 5) diagonal.values[p] += C(0, 0.25);
  const std::string result = (dir / "never.h5").string();
  for (const auto& [bad, mtx_entry, h5_entry] :
       {std::tuple{off_diagonal, "(6, " + std::to_string(good.col_indices[off] + 1) + ")", "Im A(5, " + col + ")"},
        {diagonal, std::string("(6, 6)"), std::string("A(5, 5) has the imaginary part")}}) {
    if (test::mpi_rank() == 0) {
      write_matrix_market(dir / "bad.mtx", bad);
      io::write_hdf5_csr((dir / "bad.h5").string(), "/A", bad);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string mtx =
        test::input_error_message([&] { run(dir, "bad.yaml", config("  matrix_market: {file: bad.mtx}\n", result)); });
    test::expect_mentions(mtx, {"bad.mtx", "Hermitian", mtx_entry});
    const std::string h5 =
        test::input_error_message([&] { run(dir, "bad.yaml", config("  hdf5: {file: bad.h5}\n", result)); });
    test::expect_mentions(h5, {"bad.h5", "not Hermitian", h5_entry});
    // As B of a pencil beside the Bloch Laplacian: named as matrix_b and B.
    std::string b_entry = h5_entry;
    b_entry.replace(b_entry.find('A'), 1, "B");
    const std::string b = test::input_error_message([&] {
      run(dir, "bad_b.yaml",
          config(
              "  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7, boundary: periodic, phase: [0.7, -1.1, 2.3]}\n",
              result, "matrix_b:\n  hdf5: {file: bad.h5}\n"));
    });
    test::expect_mentions(b, {"matrix_b", "bad.h5", "not Hermitian", b_entry});
    EXPECT_FALSE(fs::exists(result));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// What a complex run does not take is refused by key; a complex file under field: real too, and a complex B
// beside a real A.
TEST(ComplexRuns, RefusedSettingsNameTheirKeys) {
  const fs::path dir = test::shared_folder("complex_runs_refused");
  const std::string bloch =
      "  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7, boundary: periodic, phase: [0.7, -1.1, 2.3]}\n";
  const std::string result = (dir / "never.h5").string();
  const std::pair<std::string, std::string> cases[] = {
      {"eigensolver: {k: 4, search_precision: fp32}\n", "eigensolver.search_precision"},
      {"  field: real\neigensolver: {k: 4}\n", "matrix.field"},
  };
  for (const auto& [rest, key] : cases) {
    SCOPED_TRACE(key);
    const std::string message =
        test::input_error_message([&] { run(dir, "refused.yaml", "matrix:\n" + bloch + rest); });
    test::expect_mentions(message, {key});
  }
  const std::string real_a = test::input_error_message([&] {
    run(dir, "real_a.yaml",
        "matrix:\n  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7}\nmatrix_b:\n" + bloch +
            "eigensolver: {k: 4}\n");
  });
  test::expect_mentions(real_a, {"matrix_b", "complex values and A real ones"});
  EXPECT_FALSE(fs::exists(result));
  const std::string phase = test::input_error_message([&] {
    run(dir, "phase.yaml",
        "matrix:\n  generator: {type: laplacian_3d, nx: 4, ny: 4, nz: 4, phase: [1, 0, 0]}\n"
        "eigensolver: {k: 2}\n");
  });
  test::expect_mentions(phase, {"phase.yaml", "boundary: periodic"});
}

// block-cg on the Bloch Laplacian (Hermitian positive definite) with a Chebyshev preconditioner: X and B
// complex128 in the result file, A X = B to the tolerance by loops over the whole matrix; a band order
// a graph partition and band order giving the same X; that /B read back as right-hand sides (and a real one
// widened), but not for a real matrix.
TEST(ComplexRuns, BlockCgOnTheBlochLaplacian) {
  const fs::path dir = test::shared_folder("complex_runs_cg");
  const std::int64_t n = kBloch.nx * kBloch.ny * kBloch.nz, s = 3;
  const ComplexCsrRows whole = io::twisted_laplacian_rows(kBloch, 0, n);
  const std::string result = (dir / "cg.h5").string();
  const std::string head =
      "matrix:\n  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7, boundary: periodic, phase: [0.7, -1.1, 2.3]}\n";
  test::write_text(dir / "cg.yaml", head +
                                        "block_cg: {rtol: 1.0e-10, rhs: {source: random, columns: 3}, preconditioner: "
                                        "chebyshev}\noutput: {path: " +
                                        result + ", monitor: false}\n");
  ASSERT_EQ(apps::run_cg((dir / "cg.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  const std::vector<C> X = read_complex(result, "/X"), B = read_complex(result, "/B");
  ASSERT_EQ(X.size(), std::size_t(n * s));
  ASSERT_EQ(B.size(), std::size_t(n * s));
  for (std::int64_t j = 0; j < s; ++j) {
    double residual = 0, norm_b = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      C r = B[i * s + j];
      norm_b += std::norm(r);
      for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p)
        r -= whole.values[p] * X[whole.col_indices[p] * s + j];
      residual += std::norm(r);
    }
    EXPECT_LE(std::sqrt(residual), 2e-10 * std::sqrt(norm_b)) << "column " << j;
    EXPECT_GT(std::abs(B[j].imag()), 0.0) << "complex right-hand sides";
  }
  // A real B of the same rows for the file's right-hand sides: a real run's.
  test::write_text(dir / "real.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7}\nblock_cg: {rhs: {columns: 2}}\n"
                   "output: {path: " +
                       (dir / "real.h5").string() + ", monitor: false}\n");
  ASSERT_EQ(apps::run_cg((dir / "real.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  // The rows moved (a graph partition where PT-Scotch is built in) and ordered by band: the same X, in the
  // input's numbering.
  test::write_text(dir / "moved.yaml", head +
                                           "block_cg: {rtol: 1.0e-10, rhs: {source: random, columns: 3}, "
                                           "preconditioner: chebyshev}\nexecution: {partition: " +
                                           (solver::graph_partitioner_compiled() ? "graph" : "contiguous") +
                                           ", local_order: band}\noutput: {path: " + (dir / "moved.h5").string() +
                                           ", monitor: false}\n");
  ASSERT_EQ(apps::run_cg((dir / "moved.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  const std::vector<C> moved = read_complex((dir / "moved.h5").string(), "/X");
  ASSERT_EQ(moved.size(), X.size());
  for (std::size_t e = 0; e < X.size(); ++e) EXPECT_LT(std::abs(moved[e] - X[e]), 1e-8 * (1 + std::abs(X[e])));
  // Right-hand sides from a file: the complex run's own /B read back gives the same X; a real /B is taken as
  // complex; the complex /B with the real matrix is refused, naming the file.
  test::write_text(dir / "again.yaml", head + "block_cg: {rtol: 1.0e-10, rhs: {source: hdf5, file: " + result +
                                           ", dataset: /B}, preconditioner: chebyshev}\noutput: {path: " +
                                           (dir / "again.h5").string() + ", monitor: false}\n");
  ASSERT_EQ(apps::run_cg((dir / "again.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  const std::vector<C> again = read_complex((dir / "again.h5").string(), "/X");
  ASSERT_EQ(again.size(), X.size());
  for (std::size_t e = 0; e < X.size(); ++e) EXPECT_LT(std::abs(again[e] - X[e]), 1e-8 * (1 + std::abs(X[e])));
  test::write_text(dir / "widened.yaml",
                   head + "block_cg: {rhs: {source: hdf5, file: real.h5, dataset: /B}}\noutput: {monitor: false}\n");
  EXPECT_EQ(apps::run_cg((dir / "widened.yaml").string(), MPI_COMM_WORLD), apps::exit_ok);
  test::write_text(dir / "real_refused.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 9, ny: 8, nz: 7}\n"
                   "block_cg: {rhs: {source: hdf5, file: " +
                       result + ", dataset: /B}}\n");
  test::expect_mentions(
      test::input_error_message([&] { apps::run_cg((dir / "real_refused.yaml").string(), MPI_COMM_WORLD); }),
      {"cg.h5", "/B holds complex values, but the matrix is real"});
}

}  // namespace
}  // namespace blockeigs
