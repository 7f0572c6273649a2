// solver::check_symmetric (solver/operator/symmetry_check.hpp) at np 1-4, on
// an even split and on one where a rank owns no rows: an asymmetric value, a
// one-sided entry and an entry whose partner was removed, each with the
// transpose on the entry's rank and on another; a difference within the
// relative tolerance and a stored zero without a partner accepted; the
// refusal names the smallest mismatching entry, with the same message on
// every rank, for A and for B; with int32 and int64 indices in the messages
// between ranks; and HDF5 files whose column indices are stored as int32 or
// int64, loaded and checked as A and as B. Where a GPU is visible, each
// check also with the device's lookups, which must say the same.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/run/steps/matrix_setup.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "test_contexts.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;
using solver::RowPartition;
using Index = std::pair<std::int64_t, std::int64_t>;
using Entries = std::map<Index, double>;  // a whole matrix, (row, column) -> value

// The 2D Laplacian on a 5 x 4 grid (20 rows): 4 on the diagonal, -1 at (i, i +- 1) and (i, i +- 5).
constexpr std::int64_t n = 20;

CsrRows laplacian_rows() {
  return io::generate_rows(io::GeneratorSpec{io::GeneratorKind::laplacian_2d, 5, 4, 1, 5}, 0, n);
}

Entries laplacian() {
  const CsrRows whole = laplacian_rows();
  Entries m;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = whole.row_offsets[i]; k < whole.row_offsets[i + 1]; ++k)
      m[{i, whole.col_indices[k]}] = whole.values[k];
  return m;
}

// Rows [begin, end) of `m` (or all of them).
CsrRows rows_of(const Entries& m, std::int64_t begin = 0, std::int64_t end = n) {
  CsrRows rows;
  rows.global_rows = rows.global_cols = n;
  rows.first_row = begin;
  rows.row_offsets.assign(static_cast<std::size_t>(end - begin) + 1, 0);
  for (const auto& [at, value] : m) {
    if (at.first < begin || at.first >= end) continue;
    ++rows.row_offsets[at.first - begin + 1];
    rows.col_indices.push_back(at.second);
    rows.values.push_back(value);
  }
  for (std::int64_t r = 0; r < end - begin; ++r) rows.row_offsets[r + 1] += rows.row_offsets[r];
  return rows;
}

// An even split, and one where the middle rank (or none at np 1) owns no rows.
std::vector<RowPartition> splits() {
  const int ranks = test::mpi_size();
  const int empty = ranks > 1 ? ranks / 2 : ranks;
  const int busy = ranks > 1 ? ranks - 1 : 1;
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) first[r] = n * (r - (r > empty ? 1 : 0)) / busy;
  return {RowPartition::uniform(n, ranks), RowPartition(first)};
}

// The host's context, and a device's where there is one: the check's lookups
// run there (symmetry_check_device.hpp) and must say the same.
const test::TestContexts& contexts() {
  static const test::TestContexts all;
  return all;
}

// The message every rank threw (agreed, an input error), or "" where the
// matrix was accepted; the same with every context.
template <class Check>
std::string outcome_of(Check check) {
  std::vector<std::string> said;
  for (const dense::Context* context : contexts().all()) {
    said.emplace_back();
    try {
      check(context);
    } catch (const solver::AgreedError& e) {
      EXPECT_TRUE(e.is_input_error());
      said.back() = e.what();
    }
  }
  for (std::size_t c = 1; c < said.size(); ++c) EXPECT_EQ(said[c], said[0]) << "the device's check";
  return said[0];
}

std::string outcome(const Entries& m, const RowPartition& partition, const std::string& symbol) {
  const int rank = test::mpi_rank();
  const CsrRows rows = rows_of(m, partition.begin(rank), partition.end(rank));
  return outcome_of([&](const dense::Context* context) {
    solver::check_symmetric(MPI_COMM_WORLD, rows, partition, "test.mtx", symbol, nullptr, context);
  });
}

std::string refusal(const std::string& what, const std::string& symbol, std::int64_t i, std::int64_t j, double aij,
                    double aji) {
  std::ostringstream text;
  text << what << ": the matrix is not symmetric: " << symbol << "(" << i << ", " << j << ") = " << aij << " but "
       << symbol << "(" << j << ", " << i << ") = " << aji << " (zero-based indices); "
       << (symbol == "A" ? "block-eigs and block-cg need a symmetric matrix"
                         : "B of A x = lambda B x must be symmetric positive definite");
  return text.str();
}

// The first pair i < j with i and j on the same rank (or on different ones), stored in `m` or not.
std::optional<Index> find_pair(const Entries& m, const RowPartition& partition, bool same_rank, bool stored) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j)
      if ((partition.owner(i) == partition.owner(j)) == same_rank && m.count({i, j}) == (stored ? 1u : 0u))
        return Index{i, j};
  return std::nullopt;
}

// Runs `check(m, partition, symbol, i, j)` for each split, A and B, int32 and
// int64 indices between ranks, and a pair (i, j), i < j, with i and j on one
// rank and on two (where the split has two ranks with rows).
template <class Check>
void for_each_case(bool stored, Check check) {
  const Entries m = laplacian();
  for (const RowPartition& partition : splits())
    for (const char* symbol : {"A", "B"})
      for (const bool wide : {false, true})
        for (const bool same_rank : {true, false}) {
          const std::optional<Index> pair = find_pair(m, partition, same_rank, stored);
          if (!pair) {
            EXPECT_TRUE(!same_rank) << "no pair on one rank";
            continue;
          }
          SCOPED_TRACE(std::string(symbol) + (wide ? ", int64" : ", int32") +
                       (same_rank ? ", one rank" : ", two ranks") +
                       ", split of rank 0: " + std::to_string(partition.rows(0)) + " rows, pair (" +
                       std::to_string(pair->first) + ", " + std::to_string(pair->second) + ")");
          solver::set_symmetry_check_wide_indices_for_tests(wide);
          check(m, partition, std::string(symbol), pair->first, pair->second);
          solver::set_symmetry_check_wide_indices_for_tests(false);
        }
}

TEST(SymmetryCheck, AcceptsTheLaplacian) {
  for_each_case(true, [](const Entries& m, const RowPartition& partition, const std::string& symbol, std::int64_t,
                         std::int64_t) { EXPECT_EQ(outcome(m, partition, symbol), ""); });
}

TEST(SymmetryCheck, AnAsymmetricValue) {
  for_each_case(
      true, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        Entries upper = m, lower = m;
        upper[{i, j}] = -1.5;
        EXPECT_EQ(outcome(upper, partition, symbol), refusal("test.mtx", symbol, i, j, -1.5, -1));
        lower[{j, i}] = -1.5;
        EXPECT_EQ(outcome(lower, partition, symbol), refusal("test.mtx", symbol, i, j, -1, -1.5));
      });
}

TEST(SymmetryCheck, AOneSidedEntry) {
  for_each_case(
      false, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        Entries upper = m, lower = m;
        upper[{i, j}] = 0.5;
        EXPECT_EQ(outcome(upper, partition, symbol), refusal("test.mtx", symbol, i, j, 0.5, 0));
        lower[{j, i}] = -2.25;
        EXPECT_EQ(outcome(lower, partition, symbol), refusal("test.mtx", symbol, j, i, -2.25, 0));
      });
}

TEST(SymmetryCheck, AnEntryWhosePartnerIsRemoved) {
  for_each_case(
      true, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        Entries upper = m, lower = m;
        upper.erase({i, j});
        EXPECT_EQ(outcome(upper, partition, symbol), refusal("test.mtx", symbol, j, i, -1, 0));
        lower.erase({j, i});
        EXPECT_EQ(outcome(lower, partition, symbol), refusal("test.mtx", symbol, i, j, -1, 0));
      });
}

// Rows moved by a saved numbering (the operator's row g is the input's
// n - 1 - g) are checked where they landed, and the entry is named in the
// input's numbering: of the mirrored pair, the one whose row comes first in
// the operator's.
TEST(SymmetryCheck, MovedRowsNameTheEntryInTheInputsNumbering) {
  for_each_case(
      true, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        m[{i, j}] = -1.5;
        const int rank = test::mpi_rank();
        solver::DistributedRows matrix;
        matrix.rows = rows_of(m, partition.begin(rank), partition.end(rank));
        matrix.partition = partition;
        matrix.numbering = solver::RowNumbering::identity(MPI_COMM_WORLD, partition);
        std::vector<std::int64_t> reversed;
        for (std::int64_t g = partition.begin(rank); g < partition.end(rank); ++g) reversed.push_back(n - 1 - g);
        solver::distribute_by_numbering(matrix, partition, reversed, "test", MPI_COMM_WORLD);
        ASSERT_EQ(matrix.numbering.is_identity(), false);
        const std::string what = outcome_of([&](const dense::Context* context) {
          solver::check_symmetric(MPI_COMM_WORLD, matrix.rows, matrix.partition, "test.mtx", symbol, &matrix.numbering,
                                  context);
        });
        EXPECT_EQ(what, refusal("test.mtx", symbol, j, i, -1, -1.5));
      });
}

TEST(SymmetryCheck, RelativeToleranceOf1e12) {
  for_each_case(
      true, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        m[{i, j}] = -1 - 5e-13;
        EXPECT_EQ(outcome(m, partition, symbol), "");
        m[{i, j}] = -1 - 5e-12;  // printed as -1
        EXPECT_EQ(outcome(m, partition, symbol), refusal("test.mtx", symbol, i, j, -1, -1));
      });
}

TEST(SymmetryCheck, AStoredZeroNeedsNoPartner) {
  for_each_case(
      false, [](Entries m, const RowPartition& partition, const std::string& symbol, std::int64_t i, std::int64_t j) {
        m[{j, i}] = 0.0;
        EXPECT_EQ(outcome(m, partition, symbol), "");
        m[{i, j}] = 0.0;
        EXPECT_EQ(outcome(m, partition, symbol), "");
      });
}

// Mismatches on several ranks: the one with the smallest (row, column) is named, whichever rank found it.
TEST(SymmetryCheck, NamesTheSmallestMismatch) {
  const Entries original = laplacian();
  for (const RowPartition& partition : splits()) {
    Entries m = original;
    m[{n - 1, n - 6}] = 3;  // in the last rows
    m[{n - 2, 0}] = 7;      // one-sided, with rows on both ends
    m[{6, 7}] = -0.75;
    m[{7, 6}] = -0.5;
    EXPECT_EQ(outcome(m, partition, "A"), refusal("test.mtx", "A", 6, 7, -0.75, -0.5));
    m[{1, 0}] = 2.5;
    EXPECT_EQ(outcome(m, partition, "B"), refusal("test.mtx", "B", 0, 1, -1, 2.5));
  }
}

TEST(SymmetryCheck, RefusesARectangularMatrix) {
  const int rank = test::mpi_rank();
  const RowPartition partition = RowPartition::uniform(n, test::mpi_size());
  CsrRows rows = rows_of(laplacian(), partition.begin(rank), partition.end(rank));
  rows.global_cols = n + 1;
  try {
    solver::check_symmetric(MPI_COMM_WORLD, rows, partition, "wide.mtx");
    ADD_FAILURE() << "not refused";
  } catch (const solver::AgreedError& e) {
    EXPECT_NE(std::string(e.what()).find("wide.mtx is 20 x 21, not square"), std::string::npos) << e.what();
  }
}

// Rank 0 writes `whole` as the CSR group /A of an HDF5 file, with column indices stored as `index_type`.
void write_hdf5(const fs::path& path, const CsrRows& whole, hid_t index_type) {
  if (test::mpi_rank() == 0) {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0) << path;
    const hid_t group = H5Gcreate2(file, "A", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    auto dataset = [&](const char* name, hid_t file_type, hid_t memory_type, std::size_t count, const void* data) {
      const hsize_t extent = count;
      const hid_t space = H5Screate_simple(1, &extent, nullptr);
      const hid_t set = H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      EXPECT_GE(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0) << name;
      H5Dclose(set);
      H5Sclose(space);
    };
    dataset("indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, whole.row_offsets.size(), whole.row_offsets.data());
    dataset("indices", index_type, H5T_NATIVE_INT64, whole.col_indices.size(), whole.col_indices.data());
    dataset("data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, whole.values.size(), whole.values.data());
    const hsize_t two = 2;
    const std::int64_t shape[2] = {whole.global_rows, whole.global_cols};
    const hid_t space = H5Screate_simple(1, &two, nullptr);
    const hid_t attribute = H5Acreate2(group, "shape", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, shape), 0);
    H5Aclose(attribute);
    H5Sclose(space);
    H5Gclose(group);
    H5Fclose(file);
  }
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

io::MatrixConfig hdf5(const fs::path& path) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::hdf5;
  config.file = path.string();
  return config;
}

std::string refusal_of(auto&& load) {
  try {
    load();
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    return e.what();
  }
  return "";
}

TEST(SymmetryCheck, Hdf5FilesWithInt32AndInt64Indices) {
  const fs::path dir = test::shared_folder("symmetry_check");
  Entries bad = laplacian();
  bad[{3, 8}] = -1.25;  // (8, 3) stays -1
  for (const hid_t index_type : {H5T_STD_I32LE, H5T_STD_I64LE}) {
    const std::string width = H5Tget_size(index_type) == 4 ? "32" : "64";
    SCOPED_TRACE("int" + width);
    const fs::path good_file = dir / ("good" + width + ".h5"), bad_file = dir / ("bad" + width + ".h5");
    write_hdf5(good_file, laplacian_rows(), index_type);
    write_hdf5(bad_file, rows_of(bad), index_type);
    const solver::DistributedRows a =
        apps::load_symmetric_matrix(hdf5(good_file), PartitionMethod::contiguous, LocalOrder::none, MPI_COMM_WORLD);
    EXPECT_FALSE(a.symmetric_by_construction);
    EXPECT_EQ(a.global_nnz, laplacian_rows().nnz());
    EXPECT_EQ(refusal_of([&] { solver::load_matrix_b(hdf5(good_file), a, MPI_COMM_WORLD); }), "");
    EXPECT_EQ(refusal_of([&] {
                apps::load_symmetric_matrix(hdf5(bad_file), PartitionMethod::contiguous, LocalOrder::none,
                                            MPI_COMM_WORLD);
              }),
              refusal(bad_file.string() + ":/A", "A", 3, 8, -1.25, -1));
    EXPECT_EQ(refusal_of([&] { solver::load_matrix_b(hdf5(bad_file), a, MPI_COMM_WORLD); }),
              refusal("matrix_b: " + bad_file.string() + ":/A", "B", 3, 8, -1.25, -1));
  }
}

}  // namespace
}  // namespace blockeigs
