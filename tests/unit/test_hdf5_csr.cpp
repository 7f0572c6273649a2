// HDF5 CSR reader and writer: round trips by row range, the storage types and
// foreign layouts (h5sparse, anndata) we accept, and a precise message for
// every kind of bad file. Odd files are built here with the HDF5 C API.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/expect_csr.hpp"
#include "core/error.hpp"
#include "tests/support/expect_error.hpp"
#include "core/csr_rows.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/hdf5_handle.hpp"
#include "tests/support/raw_hdf5.hpp"

namespace {

namespace fs = std::filesystem;
using blockeigs::CsrRows;
using blockeigs::InputError;
using blockeigs::io::read_hdf5_csr_info;
using blockeigs::io::read_hdf5_csr_rows;
using blockeigs::io::read_hdf5_row_offsets;
using blockeigs::io::write_hdf5_csr;

using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;
using blockeigs::test::raw_from;
using blockeigs::test::RawCsr;
using blockeigs::test::write_dataset;
using blockeigs::test::write_raw;
void expect_same(const CsrRows& got, const CsrRows& want) { blockeigs::test::expect_same_rows(got, want); }

// 6 x 9, rectangular, with empty rows at the start, middle and end.
CsrRows small_matrix() {
  CsrRows m;
  m.global_rows = 6;
  m.global_cols = 9;
  m.row_offsets = {0, 0, 3, 4, 4, 7, 7};
  m.col_indices = {0, 4, 8, 2, 1, 5, 6};
  m.values = {1.5, -2, 0.1, 4, 1e-300, -6, 7.25};
  return m;
}

class Hdf5Csr : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("blockeigs-h5-" + std::to_string(::getpid()) + "-" + test->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The file `raw` makes must be refused; returns the message, which names the file.
  std::string raw_error(const RawCsr& raw) {
    const std::string file = path("bad.h5");
    write_raw(file, "/A", raw);
    const std::string message = input_error_message([&] { read_hdf5_csr_rows(file, "/A", 0, raw.shape.at(0)); });
    expect_mentions(message, {"bad.h5"});
    return message;
  }

  fs::path dir_;
};

TEST_F(Hdf5Csr, RoundTripWholeMatrix) {
  const CsrRows m = small_matrix();
  const std::string file = path("m.h5");
  write_hdf5_csr(file, "/A", m);
  const auto info = read_hdf5_csr_info(file, "/A");
  EXPECT_EQ(info.rows, 6);
  EXPECT_EQ(info.cols, 9);
  EXPECT_EQ(info.nnz, 7);
  EXPECT_EQ(read_hdf5_row_offsets(file, "/A"), m.row_offsets);
  expect_same(read_hdf5_csr_rows(file, "/A", 0, 6), m);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1)
      << "the temporary file was left behind";
}

TEST_F(Hdf5Csr, RowRangesMatchSlices) {
  blockeigs::io::GeneratorSpec spec;
  spec.kind = blockeigs::io::GeneratorKind::random_spd;
  spec.n = 300;
  spec.nnz_per_row = 6;
  spec.seed = 11;
  const CsrRows m = blockeigs::io::generate_rows(spec, 0, spec.n);
  const std::string file = path("r.h5");
  write_hdf5_csr(file, "A", m);  // a relative group name means the same group
  const std::pair<std::int64_t, std::int64_t> ranges[] = {{0, 0},     {0, 1},     {0, 137},   {137, 137}, {137, 138},
                                                          {137, 299}, {297, 300}, {299, 300}, {300, 300}};
  for (const auto& [begin, end] : ranges) {
    SCOPED_TRACE(::testing::Message() << "rows [" << begin << ", " << end << ")");
    expect_same(read_hdf5_csr_rows(file, "/A", begin, end), blockeigs::slice_rows(m, begin, end));
  }
}

TEST_F(Hdf5Csr, RowRangeOutsideTheMatrix) {
  const std::string file = path("m.h5");
  write_hdf5_csr(file, "/A", small_matrix());
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(file, "/A", 4, 7); }),
                  {"m.h5", "rows [4, 7)", "6 rows"});
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(file, "/A", -1, 2); }), {"rows [-1, 2)"});
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(file, "/A", 3, 2); }), {"rows [3, 2)"});
}

TEST_F(Hdf5Csr, EmptyMatricesRoundTrip) {
  CsrRows none;  // 0 x 0, no offsets at all
  write_hdf5_csr(path("zero.h5"), "/A", none);
  EXPECT_EQ(read_hdf5_row_offsets(path("zero.h5"), "/A"), std::vector<std::int64_t>{0});
  EXPECT_EQ(read_hdf5_csr_rows(path("zero.h5"), "/A", 0, 0).nnz(), 0);

  CsrRows hollow;  // 3 x 4 without entries
  hollow.global_rows = 3;
  hollow.global_cols = 4;
  hollow.row_offsets = {0, 0, 0, 0};
  write_hdf5_csr(path("hollow.h5"), "/A", hollow);
  expect_same(read_hdf5_csr_rows(path("hollow.h5"), "/A", 0, 3), hollow);
}

TEST_F(Hdf5Csr, NestedAndRootGroups) {
  const CsrRows m = small_matrix();
  write_hdf5_csr(path("nested.h5"), "/results/matrices/K", m);
  expect_same(read_hdf5_csr_rows(path("nested.h5"), "/results/matrices/K/", 0, 6), m);
  write_hdf5_csr(path("root.h5"), "/", m);
  expect_same(read_hdf5_csr_rows(path("root.h5"), "/", 0, 6), m);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("nested.h5"), "/results/B"); }),
                  {"nested.h5", "no group /results/B"});
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("nested.h5"), "/x/y"); }), {"no group /x/y"});
}

TEST_F(Hdf5Csr, WriterNarrowsIndicesOnlyWhenTheyFit) {
  auto index_size = [](const std::string& file) {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(f, "/A/indices", H5P_DEFAULT);
    const hid_t type = H5Dget_type(set);
    const std::size_t size = H5Tget_size(type);
    H5Tclose(type);
    H5Dclose(set);
    H5Fclose(f);
    return size;
  };
  write_hdf5_csr(path("narrow.h5"), "/A", small_matrix());
  EXPECT_EQ(index_size(path("narrow.h5")), 4u);

  CsrRows wide;  // 2 x 3e9: columns past 2^31 need int64
  wide.global_rows = 2;
  wide.global_cols = 3'000'000'000;
  wide.row_offsets = {0, 1, 2};
  wide.col_indices = {2'999'999'999, 5};
  wide.values = {1, 2};
  write_hdf5_csr(path("wide.h5"), "/A", wide);
  EXPECT_EQ(index_size(path("wide.h5")), 8u);
  expect_same(read_hdf5_csr_rows(path("wide.h5"), "/A", 0, 2), wide);
}

TEST_F(Hdf5Csr, IndexAndValueStorageTypes) {
  const CsrRows m = small_matrix();
  // small_matrix's values change in float32; these survive it exactly.
  CsrRows exact = m;
  exact.values = {1.5, -2, 0.125, 4, 0.5, -6, 7.25};
  for (const hid_t indptr_type : {H5T_STD_I32LE, H5T_STD_I64LE, H5T_STD_U32BE})
    for (const hid_t indices_type : {H5T_STD_I32LE, H5T_STD_I64LE, H5T_STD_I16BE})
      for (const hid_t data_type : {H5T_IEEE_F64LE, H5T_IEEE_F32LE, H5T_STD_I32LE}) {
        RawCsr raw = raw_from(exact);
        if (data_type == H5T_STD_I32LE) raw.data = {1, -2, 3, 4, 5, -6, 7};
        raw.indptr_type = indptr_type;
        raw.indices_type = indices_type;
        raw.data_type = data_type;
        write_raw(path("t.h5"), "/A", raw);
        CsrRows want = exact;
        want.values = raw.data;
        expect_same(read_hdf5_csr_rows(path("t.h5"), "/A", 0, 6), want);
      }
}

TEST_F(Hdf5Csr, UnsortedAndRepeatedColumnsAreCanonicalised) {
  RawCsr raw;
  raw.indptr = {0, 4, 5};
  raw.indices = {3, 0, 3, 1, 2};
  raw.data = {1, 2, 10, 4, 5};
  raw.shape = {2, 4};
  write_raw(path("u.h5"), "/A", raw);
  const CsrRows m = read_hdf5_csr_rows(path("u.h5"), "/A", 0, 2);
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 3, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{2, 4, 11, 5}));
}

TEST_F(Hdf5Csr, ReadsH5sparseLayout) {
  RawCsr raw = raw_from(small_matrix());
  raw.shape_name = "h5sparse_shape";
  raw.strings = {{"h5sparse_format", "csr"}};
  raw.variable_length_strings = false;  // exercise fixed-length strings as well
  raw.indices_type = H5T_STD_I64LE;
  write_raw(path("h5sparse.h5"), "/sparse/matrix", raw);
  expect_same(read_hdf5_csr_rows(path("h5sparse.h5"), "/sparse/matrix", 0, 6), small_matrix());

  raw.strings = {{"h5sparse_format", "csc"}};
  write_raw(path("csc.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("csc.h5"), "/A"); }),
                  {"csc.h5", "'csc'", "h5sparse_format", "only csr"});
}

TEST_F(Hdf5Csr, ReadsAnndataLayout) {
  RawCsr raw = raw_from(small_matrix());
  raw.strings = {{"encoding-type", "csr_matrix"}, {"encoding-version", "0.1.0"}};
  raw.data_type = H5T_IEEE_F64LE;
  write_raw(path("anndata.h5ad"), "/X", raw);
  expect_same(read_hdf5_csr_rows(path("anndata.h5ad"), "/X", 0, 6), small_matrix());

  raw.strings = {{"encoding-type", "csc_matrix"}, {"encoding-version", "0.1.0"}};
  write_raw(path("csc.h5ad"), "/X", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("csc.h5ad"), "/X"); }),
                  {"csc.h5ad", "'csc_matrix'", "encoding-type"});
}

TEST_F(Hdf5Csr, MissingFile) {
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("nope.h5"), "/A"); }), {"nope.h5", "no such file"});
}

TEST_F(Hdf5Csr, TruncatedFile) {
  blockeigs::io::GeneratorSpec spec;
  spec.kind = blockeigs::io::GeneratorKind::laplacian_2d;
  spec.nx = spec.ny = 60;
  spec.stencil = 5;
  const std::string file = path("cut.h5");
  write_hdf5_csr(file, "/A", blockeigs::io::generate_rows(spec, 0, 3600));
  fs::resize_file(file, fs::file_size(file) / 2);
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(file, "/A", 0, 3600); }), {"cut.h5", "truncated"});
}

TEST_F(Hdf5Csr, NotAnHdf5File) {
  std::ofstream(path("text.h5")) << "%%MatrixMarket matrix coordinate real general\n1 1 0\n";
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("text.h5"), "/A"); }),
                  {"text.h5", "not an HDF5 file"});
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(dir_.string(), "/A"); }), {"is a directory"});
}

TEST_F(Hdf5Csr, MissingDatasets) {
  for (const char* name : {"indptr", "indices", "data"}) {
    RawCsr raw = raw_from(small_matrix());
    raw.omit = {name};
    expect_mentions(raw_error(raw), {"no dataset /A/" + std::string(name)});
  }
}

TEST_F(Hdf5Csr, IndptrNotMonotone) {
  RawCsr raw = raw_from(small_matrix());
  raw.indptr = {0, 0, 3, 4, 4, 3, 7};  // falls at row 4
  expect_mentions(raw_error(raw), {"/A/indptr is not monotone at row 4", "4 then 3"});
  write_raw(path("m.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_row_offsets(path("m.h5"), "/A"); }),
                  {"m.h5", "/A/indptr is not monotone at row 4"});
  // A rank whose rows lie before the fall reads them fine.
  EXPECT_EQ(read_hdf5_csr_rows(path("m.h5"), "/A", 0, 3).nnz(), 4);
}

TEST_F(Hdf5Csr, IndptrOffsetsOutsideTheData) {
  RawCsr raw = raw_from(small_matrix());
  raw.indptr = {0, 0, 3, 9, 4, 7, 7};  // row 2 reaches past nnz, then falls back
  write_raw(path("m.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(path("m.h5"), "/A", 1, 3); }),
                  {"m.h5", "/A/indptr holds offsets outside 0..7"});
}

TEST_F(Hdf5Csr, IndptrEndsAwayFromNnz) {
  RawCsr raw = raw_from(small_matrix());
  raw.indptr.back() = 5;
  expect_mentions(raw_error(raw), {"/A/indptr ends at 5 but /A/data has 7 entries"});
  raw = raw_from(small_matrix());
  raw.indptr.front() = 1;
  expect_mentions(raw_error(raw), {"/A/indptr starts at 1, not 0"});
}

TEST_F(Hdf5Csr, IndicesAndDataLengthsDiffer) {
  RawCsr raw = raw_from(small_matrix());
  raw.indices.push_back(0);
  expect_mentions(raw_error(raw), {"/A/indices has 8 entries but /A/data has 7"});
}

TEST_F(Hdf5Csr, ColumnOutOfRange) {
  RawCsr raw;  // 20 x 8000, one entry per row; row 17 points past the last column
  for (std::int64_t r = 0; r <= 20; ++r) raw.indptr.push_back(r);
  for (std::int64_t r = 0; r < 20; ++r) raw.indices.push_back(r == 17 ? 9000 : r);
  raw.data.assign(20, 1.0);
  raw.shape = {20, 8000};
  expect_mentions(raw_error(raw), {"/A/indices: row 17 has column 9000, but the matrix has 8000 columns"});
  raw.indices[17] = -3;
  expect_mentions(raw_error(raw), {"/A/indices: row 17 has column -3"});
}

TEST_F(Hdf5Csr, NonFiniteValues) {
  RawCsr raw = raw_from(small_matrix());
  raw.data[3] = std::numeric_limits<double>::quiet_NaN();  // row 2
  expect_mentions(raw_error(raw), {"/A/data: row 2 holds nan"});
  raw.data[3] = 0;
  raw.data[5] = -std::numeric_limits<double>::infinity();  // row 4
  expect_mentions(raw_error(raw), {"/A/data: row 4 holds -inf"});
  raw.data_type = H5T_IEEE_F32LE;  // float32 has its own infinity
  raw.data[5] = std::numeric_limits<double>::infinity();
  expect_mentions(raw_error(raw), {"/A/data: row 4 holds inf"});
}

TEST_F(Hdf5Csr, ShapeDisagreesWithTheData) {
  RawCsr raw = raw_from(small_matrix());
  raw.shape = {10, 9};
  write_raw(path("bad.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("bad.h5"), "/A"); }),
                  {"bad.h5", "shape says 10 rows but /A/indptr has 7 entries"});
  raw.shape = {6, 9, 1};
  write_raw(path("bad.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("bad.h5"), "/A"); }),
                  {"bad.h5", "'shape'", "two integers"});
  raw.shape = {6, -9};
  write_raw(path("bad.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("bad.h5"), "/A"); }), {"bad.h5", "negative"});
}

TEST_F(Hdf5Csr, MissingShapeAttribute) {
  RawCsr raw = raw_from(small_matrix());
  raw.shape.clear();
  write_raw(path("bad.h5"), "/A", raw);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("bad.h5"), "/A"); }),
                  {"bad.h5", "/A has no shape attribute", "'shape'", "'h5sparse_shape'"});
}

TEST_F(Hdf5Csr, WrongDatasetTypeOrRank) {
  RawCsr raw = raw_from(small_matrix());
  raw.indptr_type = H5T_IEEE_F64LE;
  expect_mentions(raw_error(raw), {"/A/indptr must hold integers"});

  write_raw(path("bad.h5"), "/A", raw_from(small_matrix()));
  const hid_t file = H5Fopen(path("bad.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(file, "/A/data", H5P_DEFAULT);
  const hsize_t dims[2] = {7, 1};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t set = H5Dcreate2(file, "/A/data", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dclose(set);
  H5Sclose(space);
  H5Fclose(file);
  expect_mentions(input_error_message([&] { read_hdf5_csr_info(path("bad.h5"), "/A"); }),
                  {"bad.h5", "/A/data must be one-dimensional"});
}

TEST_F(Hdf5Csr, FailedWriteLeavesNothingBehind) {
  const CsrRows m = small_matrix();
  // The target folder does not exist.
  const std::string missing = (dir_ / "no-such-folder" / "m.h5").string();
  expect_mentions(input_error_message([&] { write_hdf5_csr(missing, "/A", m); }), {"m.h5", "cannot create"});
  EXPECT_FALSE(fs::exists(dir_ / "no-such-folder"));

  // The target is a folder, so the final rename fails after the file was written.
  fs::create_directory(dir_ / "taken.h5");
  expect_mentions(input_error_message([&] { write_hdf5_csr(path("taken.h5"), "/A", m); }),
                  {"taken.h5", "cannot move the finished file into place"});

  // The matrix itself is invalid.
  CsrRows broken = m;
  broken.col_indices[2] = 9;
  expect_mentions(input_error_message([&] { write_hdf5_csr(path("broken.h5"), "/A", broken); }),
                  {"broken.h5", "row 1 has column 9"});

  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"taken.h5"}) << "a temporary or partial file was left";
  EXPECT_TRUE(fs::is_empty(dir_ / "taken.h5"));
}

TEST_F(Hdf5Csr, WriterRefusesPartialMatrices) {
  const CsrRows part = blockeigs::slice_rows(small_matrix(), 2, 5);
  expect_mentions(input_error_message([&] { write_hdf5_csr(path("p.h5"), "/A", part); }),
                  {"p.h5", "whole matrix", "[2, 5)"});
  EXPECT_FALSE(fs::exists(path("p.h5")));
}

}  // namespace

namespace {

using blockeigs::ComplexCsrRows;
using blockeigs::io::read_hdf5_complex_csr_rows;
using Complex = std::complex<double>;

ComplexCsrRows small_complex_matrix() {
  const CsrRows real = small_matrix();
  ComplexCsrRows m;
  m.global_rows = real.global_rows;
  m.global_cols = real.global_cols;
  m.row_offsets = real.row_offsets;
  m.col_indices = real.col_indices;
  for (std::size_t k = 0; k < real.values.size(); ++k) m.values.push_back({real.values[k], 0.5 - double(k)});
  return m;
}

// Adds /A/data to a file whose other parts write_raw wrote: a compound of r
// and i of `part` (as h5py writes complex64 or complex128) from `values`.
void add_complex_data(const std::string& file, hid_t part, const std::vector<Complex>& values) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t group = H5Gopen2(f, "/A", H5P_DEFAULT);
  const blockeigs::io::Id file_type = blockeigs::io::complex_type(part);
  const blockeigs::io::Id memory_type = blockeigs::io::complex_type(H5T_NATIVE_DOUBLE);
  write_dataset(group, "data", file_type.get(), memory_type.get(), values.size(), values.data());
  H5Gclose(group);
  H5Fclose(f);
}

// Complex data in h5py's layout: written and read back exactly, by rows too;
// the real reader refuses it (naming the dataset) rather than drop the
// imaginary parts; a real file read as complex has imaginary parts 0;
// complex64 is widened; a NaN imaginary part is named with its row.
TEST_F(Hdf5Csr, ComplexValuesInH5pyLayout) {
  const ComplexCsrRows m = small_complex_matrix();
  const std::string file = path("complex.h5");
  write_hdf5_csr(file, "/A", m);
  EXPECT_TRUE(read_hdf5_csr_info(file, "/A").complex);
  const ComplexCsrRows back = read_hdf5_complex_csr_rows(file, "/A", 0, m.global_rows);
  EXPECT_EQ(back.row_offsets, m.row_offsets);
  EXPECT_EQ(back.col_indices, m.col_indices);
  EXPECT_EQ(back.values, m.values);
  const ComplexCsrRows part = read_hdf5_complex_csr_rows(file, "/A", 2, 5);
  EXPECT_EQ(part.values, blockeigs::slice_rows(m, 2, 5).values);
  {  // the stored type is h5py's complex128: members r and i, float64
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(f, "/A/data", H5P_DEFAULT);
    const hid_t type = H5Dget_type(set);
    EXPECT_EQ(blockeigs::io::complex_part_bytes(type), 8u);
    H5Tclose(type);
    H5Dclose(set);
    H5Fclose(f);
  }
  expect_mentions(input_error_message([&] { read_hdf5_csr_rows(file, "/A", 0, m.global_rows); }),
                  {"complex.h5", "/A/data", "complex values", "imaginary parts"});

  const std::string real = path("real.h5");
  write_hdf5_csr(real, "/A", small_matrix());
  EXPECT_FALSE(read_hdf5_csr_info(real, "/A").complex);
  const ComplexCsrRows widened = read_hdf5_complex_csr_rows(real, "/A", 0, 6);
  for (std::size_t k = 0; k < widened.values.size(); ++k)
    EXPECT_EQ(widened.values[k], Complex(small_matrix().values[k], 0.0)) << k;

  RawCsr raw = raw_from(small_matrix());
  raw.omit = {"data"};
  const std::string single = path("complex64.h5");
  write_raw(single, "/A", raw);
  add_complex_data(single, H5T_IEEE_F32LE, m.values);
  const ComplexCsrRows narrow = read_hdf5_complex_csr_rows(single, "/A", 0, 6);
  for (std::size_t k = 0; k < m.values.size(); ++k)
    EXPECT_EQ(narrow.values[k], Complex(std::complex<float>(m.values[k]))) << k;

  std::vector<Complex> bad = m.values;
  bad[3] = {4.0, std::numeric_limits<double>::quiet_NaN()};
  const std::string nan = path("nan.h5");
  write_raw(nan, "/A", raw);
  add_complex_data(nan, H5T_IEEE_F64LE, bad);
  expect_mentions(input_error_message([&] { read_hdf5_complex_csr_rows(nan, "/A", 0, 6); }),
                  {"nan.h5", "/A/data", "row 2", "nan"});
}

}  // namespace
