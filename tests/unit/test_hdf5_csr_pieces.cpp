// The HDF5 CSR reader on matrices of several read pieces (hdf5_read_piece
// entries): rows, unsorted and repeated columns and bad entries placed across
// piece boundaries; indices and values stored natively (int32, int64, float32,
// float64) and through HDF5's conversion; contiguous and chunked, compressed
// datasets; read on 1 to 7 threads (contiguous native datasets are read by
// every thread, each a share of the rows). Results must equal the
// whole-array reference: the rows sliced, then every row sorted and its
// repeats summed.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/expect_csr.hpp"
#include "core/csr_rows.hpp"
#include "io/hdf5_csr.hpp"
#include "tests/support/raw_hdf5.hpp"
#include "tests/support/expect_error.hpp"

namespace {

namespace fs = std::filesystem;
using blockeigs::CsrRows;
using blockeigs::io::hdf5_read_piece;
using blockeigs::io::read_hdf5_csr_rows;
using blockeigs::io::read_hdf5_row_offsets;
using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;

constexpr std::int64_t kPiece = hdf5_read_piece;

// Runs `body` with 1, 3 and 7 OpenMP threads, then restores the count.
template <class Body>
void at_thread_counts(Body body) {
  const int before = omp_get_max_threads();
  for (const int threads : {1, 3, 7}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    omp_set_num_threads(threads);
    body();
  }
  omp_set_num_threads(before);
}

// The row holding entry p (the last of those starting at p when rows are empty).
std::int64_t row_of(const CsrRows& m, std::int64_t p) {
  return std::upper_bound(m.row_offsets.begin(), m.row_offsets.end(), p) - m.row_offsets.begin() - 1;
}

// Flaws placed at piece boundaries; after the first one every row is
// canonicalised anyway, so each matrix holds one kind only.
enum class Flaw {
  none,
  reversed,  // the row at the first boundary: columns reversed, and a repeat
  repeat,    // the long row: a repeat exactly across its boundary
  descent,   // a short row straddling a boundary: a descent exactly across it
};

// About 1.5 pieces of rows holding 0 to 5 ascending columns each, integer
// values (exact in every storage type), a row of a piece and a half that
// straddles a piece boundary, and `flaw`.
CsrRows test_matrix(Flaw flaw) {
  CsrRows m;
  const std::int64_t rows = kPiece + kPiece / 2;
  m.global_rows = rows;
  m.global_cols = 100'000;
  m.row_offsets = {0};
  std::mt19937_64 random(7);
  const std::int64_t long_row = rows / 2;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = r == long_row ? kPiece + kPiece / 2 : static_cast<std::int64_t>(random() % 6);
    std::int64_t column = static_cast<std::int64_t>(random() % 50);
    for (std::int64_t k = 0; k < length; ++k) {
      m.col_indices.push_back(column);
      m.values.push_back(static_cast<double>(static_cast<std::int64_t>(random() % 41) - 20));
      column += r == long_row ? 1 : 1 + static_cast<std::int64_t>(random() % 3000);
    }
    m.row_offsets.push_back(static_cast<std::int64_t>(m.col_indices.size()));
  }
  for (std::int64_t p = kPiece; p < m.nnz(); p += kPiece) {
    const std::int64_t r = row_of(m, p), begin = m.row_offsets[r], end = m.row_offsets[r + 1];
    if (flaw == Flaw::reversed) {
      std::reverse(m.col_indices.begin() + begin, m.col_indices.begin() + end);
      if (end - begin >= 2) m.col_indices[begin + 1] = m.col_indices[begin];
      break;
    }
    if (flaw == Flaw::repeat && r == long_row) {
      m.col_indices[p] = m.col_indices[p - 1];
      break;
    }
    if (flaw == Flaw::descent && r != long_row && begin < p) {
      std::swap(m.col_indices[p - 1], m.col_indices[p]);
      break;
    }
  }
  return m;
}

CsrRows reference(const CsrRows& whole, std::int64_t begin, std::int64_t end) {
  CsrRows want = blockeigs::slice_rows(whole, begin, end);
  blockeigs::sort_and_sum_duplicates(want);
  return want;
}

using blockeigs::test::write_dataset;

void expect_same(const CsrRows& got, const CsrRows& want) { blockeigs::test::expect_same_rows(got, want); }

struct Storage {
  hid_t indices = H5T_STD_I32LE, data = H5T_IEEE_F64LE;
  hsize_t chunk = 0;  // 0: contiguous; else chunked and deflated
};

void write_file(const std::string& path, const CsrRows& m, const Storage& storage) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t group = H5Gcreate2(file, "A", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  write_dataset(group, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, m.row_offsets.size(), m.row_offsets.data(),
                storage.chunk);
  write_dataset(group, "indices", storage.indices, H5T_NATIVE_INT64, m.col_indices.size(), m.col_indices.data(),
                storage.chunk);
  write_dataset(group, "data", storage.data, H5T_NATIVE_DOUBLE, m.values.size(), m.values.data(), storage.chunk);
  const std::int64_t shape[2] = {m.global_rows, m.global_cols};
  const hsize_t two = 2;
  const hid_t space = H5Screate_simple(1, &two, nullptr);
  const hid_t attribute = H5Acreate2(group, "shape", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attribute, H5T_NATIVE_INT64, shape);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Gclose(group);
  H5Fclose(file);
}

class Hdf5CsrPieces : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("blockeigs-h5p-" + std::to_string(::getpid()) + "-" + test->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Row ranges that start, end and stay inside pieces, an empty one and the whole.
  static std::vector<std::pair<std::int64_t, std::int64_t>> ranges(const CsrRows& m) {
    const std::int64_t rows = m.local_rows(), second = row_of(m, kPiece), third = row_of(m, 2 * kPiece);
    return {{0, rows}, {second, third + 1}, {second + 1, rows}, {third, third}, {rows - 1, rows}, {0, 1}};
  }

  // The first bad entry in file order named with its row, in any storage of the values.
  void bad_entries_name_their_row() {
    const CsrRows whole = test_matrix(Flaw::none);
    const std::int64_t late = 2 * kPiece + 17, later = 3 * kPiece - 1;
    const std::string row_late = "row " + std::to_string(row_of(whole, late)) + " ";
    const std::string row_later = "row " + std::to_string(row_of(whole, later)) + " ";
    for (const hid_t data : {H5T_IEEE_F64LE, H5T_IEEE_F32LE}) {
      CsrRows bad = whole;
      bad.col_indices[later] = 100'000;
      write_file(path("c.h5"), bad, {H5T_STD_I32LE, data});
      expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("c.h5"), "/A", 0, bad.local_rows()); }),
                      {"c.h5", "/A/indices: " + row_later + "has column 100000, but the matrix has 100000 columns"});
      bad.col_indices[later] = -1;
      write_file(path("c.h5"), bad, {H5T_STD_I64LE, data});
      expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("c.h5"), "/A", 0, bad.local_rows()); }),
                      {"/A/indices: " + row_later + "has column -1"});
      // The first bad entry in file order is the one named, whatever its kind.
      bad.values[late] = std::numeric_limits<double>::infinity();
      write_file(path("v.h5"), bad, {H5T_STD_I32LE, data});
      expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("v.h5"), "/A", 0, bad.local_rows()); }),
                      {"v.h5", "/A/data: " + row_late + "holds inf"});
      bad.values[late] = std::numeric_limits<double>::quiet_NaN();
      write_file(path("v.h5"), bad, {H5T_STD_I32LE, data});
      expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("v.h5"), "/A", 0, bad.local_rows()); }),
                      {"/A/data: " + row_late + "holds nan"});
      // A rank whose rows end before the bad entries reads them fine.
      EXPECT_NO_THROW(read_hdf5_csr_rows(path("v.h5"), "/A", 0, row_of(whole, late)));
    }
  }

  fs::path dir_;
};

TEST_F(Hdf5CsrPieces, MatchTheWholeArrayReferenceInEveryStorage) {
  for (const Flaw flaw : {Flaw::none, Flaw::reversed, Flaw::repeat, Flaw::descent}) {
    const CsrRows whole = test_matrix(flaw);
    if (flaw != Flaw::none) {
      CsrRows canonical = whole;
      blockeigs::sort_and_sum_duplicates(canonical);
      ASSERT_NE(canonical.col_indices, whole.col_indices) << "the flaw must be there";
    }
    ASSERT_GT(whole.nnz(), 3 * kPiece);
    ASSERT_GT(whole.local_rows(), kPiece);
    for (const hid_t indices : {H5T_STD_I32LE, H5T_STD_I64LE, H5T_STD_U32BE})
      for (const hid_t data : {H5T_IEEE_F64LE, H5T_IEEE_F32LE, H5T_STD_I32LE})
        for (const hsize_t chunk : {hsize_t{0}, hsize_t{10007}}) {
          if (chunk > 0 && indices != H5T_STD_I32LE && data != H5T_IEEE_F64LE) continue;  // enough of those
          SCOPED_TRACE(::testing::Message() << "flaw " << static_cast<int>(flaw) << ", chunk " << chunk);
          const std::string file = path("m.h5");
          write_file(file, whole, {indices, data, chunk});
          at_thread_counts([&] {
            for (const auto& [begin, end] : ranges(whole))
              expect_same(read_hdf5_csr_rows(file, "/A", begin, end), reference(whole, begin, end));
          });
          EXPECT_EQ(read_hdf5_row_offsets(file, "/A"), whole.row_offsets);
        }
  }
}

TEST_F(Hdf5CsrPieces, CanonicalRowsComeBackAsStored) {
  const CsrRows whole = test_matrix(Flaw::none);
  write_file(path("m.h5"), whole, {});
  const CsrRows got = read_hdf5_csr_rows(path("m.h5"), "/A", 0, whole.local_rows());
  EXPECT_EQ(got.col_indices, whole.col_indices);
  EXPECT_EQ(got.values, whole.values);
}

TEST_F(Hdf5CsrPieces, BadEntriesInLaterPiecesNameTheirRow) {
  at_thread_counts([&] { bad_entries_name_their_row(); });
}

TEST_F(Hdf5CsrPieces, OffsetsFallingInALaterPieceNameTheirRow) {
  for (const std::int64_t row : {kPiece + 10, kPiece - 1}) {  // inside a piece, and across a boundary
    CsrRows bad = test_matrix(Flaw::none);
    bad.row_offsets[row + 1] = bad.row_offsets[row] - 1;
    write_file(path("m.h5"), bad, {});
    const std::string fall = "/A/indptr is not monotone at row " + std::to_string(row) + " (";
    expect_mentions(input_error_message([&] { read_hdf5_row_offsets(path("m.h5"), "/A"); }), {"m.h5", fall});
    expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("m.h5"), "/A", 5, bad.local_rows()); }),
                    {"m.h5", fall});
    EXPECT_NO_THROW(read_hdf5_csr_rows(path("m.h5"), "/A", 0, row));  // offsets up to the fall
  }
}

}  // namespace
