// The result writer: datasets and attributes read back with the HDF5 C API,
// row blocks assembled into one matrix, and the temporary-then-rename rule.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5_writer.hpp"
#include "io/replace_file.hpp"

namespace blockeigs::io {
namespace {

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "blockeigs_writer_test";
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::vector<double> read_doubles(hid_t file, const char* name) {
  hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(set, 0) << name;
  hid_t space = H5Dget_space(set);
  std::vector<double> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  H5Sclose(space);
  H5Dclose(set);
  return out;
}

TEST(Hdf5Writer, WritesAndCommits) {
  const std::string path = scratch("results.h5").string();
  std::filesystem::remove(path);
  {
    Hdf5Writer writer(path, true);
    writer.write("/eigenvalues", std::vector<double>{1.5, 2.5, 3.5});
    writer.write("/iterations", std::vector<std::int64_t>{7});
    writer.write_matrix("/history/residuals", 2, 3, {1, 2, 3, 4, 5, 6});
    writer.write_string("/config", "matrix: {}\n");
    writer.attribute("/", "app", std::string("block-eigs"));
    writer.attribute("/eigenvalues", "tolerance", 1e-6);
    writer.create_matrix("/eigenvectors", 5, 2);
    writer.close();
  }
  // Rows added in two blocks by reopening, as ranks do in turn.
  {
    Hdf5Writer writer(path, false);
    const double top[] = {1, 2, 3, 4};
    writer.write_rows("/eigenvectors", 0, 2, 2, top);
  }
  {
    Hdf5Writer writer(path, false);
    const double bottom[] = {5, 6, 7, 8, 9, 10};
    writer.write_rows("/eigenvectors", 2, 3, 2, bottom);
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // not there until committed
  commit_output(path);
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(temporary_output_name(path)));

  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(read_doubles(file, "/eigenvalues"), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_EQ(read_doubles(file, "/history/residuals"), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read_doubles(file, "/eigenvectors"), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  double tolerance = 0;
  hid_t attr = H5Aopen_by_name(file, "/eigenvalues", "tolerance", H5P_DEFAULT, H5P_DEFAULT);
  H5Aread(attr, H5T_NATIVE_DOUBLE, &tolerance);
  H5Aclose(attr);
  EXPECT_EQ(tolerance, 1e-6);
  H5Fclose(file);
}

// The large blocks: contiguous, unfilled (each row is written once), and
// written in pieces through one open dataset.
TEST(Hdf5Writer, MatricesAreContiguousAndWrittenInPieces) {
  const std::string path = scratch("pieces.h5").string();
  {
    Hdf5Writer writer(path, true);
    writer.create_matrix("/X", 5, 2);
    Hdf5Writer::Rows rows = writer.open_rows("/X");
    const double top[] = {1, 2, 3, 4, 5, 6}, bottom[] = {7, 8, 9, 10};
    rows.write(3, 2, bottom);
    rows.write(0, 3, top);
    rows.write(5, 0, nullptr);  // nothing
  }
  commit_output(path);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(read_doubles(file, "/X"), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  hid_t set = H5Dopen2(file, "/X", H5P_DEFAULT);
  hid_t properties = H5Dget_create_plist(set);
  EXPECT_EQ(H5Pget_layout(properties), H5D_CONTIGUOUS);
  EXPECT_EQ(H5Pget_nfilters(properties), 0);
  H5D_fill_time_t fill_time = H5D_FILL_TIME_ALLOC;
  H5Pget_fill_time(properties, &fill_time);
  EXPECT_EQ(fill_time, H5D_FILL_TIME_NEVER);
  H5Pclose(properties);
  H5Dclose(set);
  H5Fclose(file);
}

// A result over an older one: the older moves aside and goes only once the
// new one has its name; a stale temporary file is replaced, not reused.
TEST(Hdf5Writer, ReplacesAnOlderFile) {
  const std::string path = scratch("replaced.h5").string();
  std::filesystem::remove(replaced_name(path));
  for (const double value : {1.0, 2.0}) {
    Hdf5Writer writer(path, true);
    writer.write("/x", std::vector<double>{value});
    writer.close();
    commit_output(path);
  }
  // A leftover temporary file and a leftover of an interrupted replacement.
  for (const std::string& stale : {temporary_output_name(path), replaced_name(path).string()}) {
    std::FILE* f = std::fopen(stale.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not HDF5", f);
    std::fclose(f);
  }
  {
    Hdf5Writer writer(path, true);
    writer.write("/x", std::vector<double>{3.0});
  }
  commit_output(path);
  EXPECT_FALSE(std::filesystem::exists(temporary_output_name(path)));
  EXPECT_FALSE(std::filesystem::exists(replaced_name(path)));
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(read_doubles(file, "/x"), (std::vector<double>{3.0}));
  H5Fclose(file);
}

TEST(ReplaceFile, KeepsTheOlderFileWhereTheNewOneCannotGo) {
  const auto dir = scratch("replace_dir");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "target");  // a non-empty directory as the target
  std::filesystem::create_directories(dir / "target" / "inside");
  std::FILE* f = std::fopen((dir / "finished").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  std::error_code error;
  replace_file(dir / "finished", dir / "target", error);
  EXPECT_TRUE(error);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target" / "inside"));
  EXPECT_TRUE(std::filesystem::exists(dir / "finished"));
  // A missing source: the older regular file is put back.
  f = std::fopen((dir / "old").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("old", f);
  std::fclose(f);
  replace_file(dir / "missing", dir / "old", error);
  EXPECT_TRUE(error);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "old"));
  EXPECT_FALSE(std::filesystem::exists(replaced_name(dir / "old")));
  EXPECT_EQ(std::filesystem::file_size(dir / "old"), 3u);
  // No older file: a plain rename.
  replace_file(dir / "finished", dir / "fresh", error);
  EXPECT_FALSE(error) << error.message();
  EXPECT_TRUE(std::filesystem::exists(dir / "fresh"));
  std::filesystem::remove_all(dir);
}

TEST(Hdf5Writer, FailureLeavesNothing) {
  const std::string path = "/nonexistent-dir/results.h5";
  try {
    Hdf5Writer writer(path, true);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nonexistent-dir/results.h5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_output_writable(path), InputError);
  EXPECT_THROW(check_output_writable(scratch("").string()), InputError);  // a directory
  const std::string fine = scratch("probe.h5").string();
  check_output_writable(fine);
  EXPECT_FALSE(std::filesystem::exists(fine));
  EXPECT_FALSE(std::filesystem::exists(temporary_output_name(fine)));
  const std::string other = scratch("discarded.h5").string();
  {
    Hdf5Writer writer(other, true);
    writer.write("/x", std::vector<double>{1});
  }
  discard_output(other);
  EXPECT_FALSE(std::filesystem::exists(temporary_output_name(other)));
  EXPECT_FALSE(std::filesystem::exists(other));
}

}  // namespace
}  // namespace blockeigs::io

#include "io/hdf5_dense.hpp"

namespace blockeigs::io {
namespace {

TEST(Hdf5Dense, ReadsRowBlocksAndRejectsBadData) {
  const std::string path = scratch("dense.h5").string();
  std::filesystem::remove(path);
  {
    Hdf5Writer writer(path, true);
    writer.write_matrix("/B", 4, 2, {1, 2, 3, 4, 5, 6, 7, 8});
    writer.write_matrix("/bad", 2, 2, {1, NAN, 3, 4});
    writer.write("/flat", std::vector<double>{1, 2, 3});
    writer.write_matrix("/column", 3, 1, {7, 8, 9});  // stored as a vector
  }
  commit_output(path);
  const DenseRows middle = read_hdf5_dense_rows(path, "/B", 1, 3, 4);
  EXPECT_EQ(middle.global_rows, 4);
  EXPECT_EQ(middle.cols, 2);
  EXPECT_EQ(middle.values, (std::vector<double>{3, 4, 5, 6}));
  EXPECT_TRUE(read_hdf5_dense_rows(path, "/B", 4, 4).values.empty());

  auto message = [&](const char* dataset, std::int64_t expected) {
    try {
      read_hdf5_dense_rows(path, dataset, 0, 2, expected);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("/B", 5).find("has 4 rows, but the matrix has 5"), std::string::npos) << message("/B", 5);
  EXPECT_NE(message("/bad", -1).find("row 0 column 1 is nan"), std::string::npos) << message("/bad", -1);
  // A vector reads as one column, as the writer stores a one-column block.
  for (const char* vector : {"/flat", "/column"}) {
    const DenseRows column = read_hdf5_dense_rows(path, vector, 1, 3, 3);
    EXPECT_EQ(column.cols, 1) << vector;
    EXPECT_EQ(column.global_rows, 3) << vector;
    EXPECT_EQ(column.values.size(), 2u) << vector;
  }
  EXPECT_EQ(read_hdf5_dense_rows(path, "/column", 1, 3).values, (std::vector<double>{8, 9}));
  EXPECT_NE(message("/missing", -1).find("no dataset /missing"), std::string::npos);
  EXPECT_THROW(read_hdf5_dense_rows("/nonexistent.h5", "/B", 0, 1), InputError);
}

TEST(Hdf5Dense, ComplexBlocksWhereTheCallerTakesThem) {
  const std::string path = scratch("dense_complex.h5").string();
  std::filesystem::remove(path);
  {
    Hdf5Writer writer(path, true);
    writer.create_matrix("/Z", 3, 2, true);  // as the result files write complex blocks (h5py's layout)
    writer.write_rows("/Z", 0, 3, 2, std::vector<double>{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}.data());
    writer.create_matrix("/bad", 1, 1, true);
    writer.write_rows("/bad", 0, 1, 1, std::vector<double>{1, INFINITY}.data());
  }
  commit_output(path);
  const DenseRows rows = read_hdf5_dense_rows(path, "/Z", 1, 3, 3, DenseValues::real_or_complex);
  EXPECT_TRUE(rows.complex);
  EXPECT_EQ(rows.cols, 2);
  EXPECT_EQ(rows.doubles_per_row(), 4);
  EXPECT_EQ(rows.values, (std::vector<double>{3, -3, 4, -4, 5, -5, 6, -6}));
  auto message = [&](const char* dataset, DenseValues values) {
    try {
      read_hdf5_dense_rows(path, dataset, 0, 1, -1, values);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A real caller names the dataset; a non-finite part is named with its row, column and part.
  EXPECT_NE(message("/Z", DenseValues::real_only).find("/Z holds complex values, but the matrix is real"),
            std::string::npos);
  EXPECT_NE(message("/bad", DenseValues::real_or_complex).find("row 0 column 0 (imaginary part) is inf"),
            std::string::npos)
      << message("/bad", DenseValues::real_or_complex);
}

}  // namespace
}  // namespace blockeigs::io
