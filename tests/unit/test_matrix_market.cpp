// Matrix Market reader and writer: handwritten files for each field, symmetry
// and error, and every real matrix in the shared data folder checked against
// its INDEX.tsv entry.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "tests/support/expect_error.hpp"
#include "core/csr_rows.hpp"
#include "io/matrix_market.hpp"
#include "tests/support/test_matrices.hpp"

namespace {

namespace fs = std::filesystem;
using blockeigs::ComplexCsrRows;
using blockeigs::CsrRows;
using blockeigs::InputError;
using blockeigs::io::check_hermitian;
using blockeigs::io::ComplexMatrixMarketFile;
using blockeigs::io::MatrixMarketField;
using blockeigs::io::MatrixMarketSymmetry;
using blockeigs::io::read_complex_matrix_market;
using blockeigs::io::read_matrix_market;

using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;
class MatrixMarket : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("blockeigs-mm-" + std::to_string(::getpid()) + "-" + test->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_text(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string write_gzip(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(file);
    return path;
  }
  // The message of reading `text` as a file named `name`; it must mention the file.
  std::string read_error(const std::string& text, const std::string& name = "bad.mtx") const {
    const std::string path = write_text(name, text);
    const std::string message = input_error_message([&] { read_matrix_market(path); });
    expect_mentions(message, {name});
    return message;
  }

  fs::path dir_;
};

TEST_F(MatrixMarket, RealGeneralWithCommentsBlankLinesAndCrlf) {
  const auto path = write_text("a.mtx",
                               "%%MatrixMarket matrix coordinate real general\r\n"
                               "% a comment\r\n"
                               "\r\n"
                               "3 4 4\r\n"
                               "1 1 1.5\r\n"
                               "% a comment between entries\n"
                               "3 4 -2e-3\n"
                               "\n"
                               "  1\t4   +7\n"
                               "2 2 0.25\n");
  const auto file = read_matrix_market(path);
  EXPECT_EQ(file.field, MatrixMarketField::real);
  EXPECT_EQ(file.symmetry, MatrixMarketSymmetry::general);
  const CsrRows& m = file.matrix;
  EXPECT_EQ(m.global_rows, 3);
  EXPECT_EQ(m.global_cols, 4);
  EXPECT_EQ(m.first_row, 0);
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 3, 1, 3}));
  EXPECT_EQ(m.values, (std::vector<double>{1.5, 7, 0.25, -2e-3}));
}

TEST_F(MatrixMarket, IntegerSymmetricIsExpandedWithTheDiagonalOnce) {
  const auto path = write_text("s.mtx",
                               "%%MatrixMarket matrix coordinate integer symmetric\n"
                               "3 3 4\n"
                               "1 1 4\n"
                               "2 1 -1\n"
                               "3 2 -2\n"
                               "3 3 5\n");
  const auto file = read_matrix_market(path);
  EXPECT_EQ(file.field, MatrixMarketField::integer);
  EXPECT_EQ(file.symmetry, MatrixMarketSymmetry::symmetric);
  const CsrRows& m = file.matrix;
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 1, 0, 2, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{4, -1, -1, -2, -2, 5}));
}

TEST_F(MatrixMarket, SymmetricUpperTriangleEntryIsMirrored) {
  const auto path = write_text("u.mtx",
                               "%%MatrixMarket matrix coordinate real symmetric\n"
                               "2 2 1\n"
                               "1 2 3.5\n");
  const CsrRows m = read_matrix_market(path).matrix;
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(m.values, (std::vector<double>{3.5, 3.5}));
}

TEST_F(MatrixMarket, PatternEntriesAreOne) {
  const auto general = write_text("p.mtx",
                                  "%%MatrixMarket matrix coordinate pattern general\n"
                                  "2 3 2\n"
                                  "2 3\n"
                                  "1 2\n");
  const auto file = read_matrix_market(general);
  EXPECT_EQ(file.field, MatrixMarketField::pattern);
  EXPECT_EQ(file.matrix.col_indices, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(file.matrix.values, (std::vector<double>{1, 1}));

  const auto symmetric = write_text("ps.mtx",
                                    "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "3 3 2\n"
                                    "2 2\n"
                                    "3 1\n");
  const CsrRows m = read_matrix_market(symmetric).matrix;
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{2, 1, 0}));
  EXPECT_EQ(m.values, (std::vector<double>{1, 1, 1}));
}

TEST_F(MatrixMarket, DuplicatesAreSummedAndColumnsSorted) {
  const auto path = write_text("d.mtx",
                               "%%MatrixMarket matrix coordinate real general\n"
                               "2 3 5\n"
                               "1 3 1\n"
                               "1 1 2\n"
                               "1 3 10\n"
                               "2 2 4\n"
                               "1 2 8\n");
  const CsrRows m = read_matrix_market(path).matrix;
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 3, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(m.values, (std::vector<double>{2, 8, 11, 4}));
}

TEST_F(MatrixMarket, BannerWordsAreCaseInsensitiveAndEmptyMatricesRead) {
  const auto path = write_text("e.mtx", "%%MatrixMarket MATRIX Coordinate Real General\n5 4 0\n");
  const CsrRows m = read_matrix_market(path).matrix;
  EXPECT_EQ(m.global_rows, 5);
  EXPECT_EQ(m.global_cols, 4);
  EXPECT_EQ(m.row_offsets, std::vector<std::int64_t>(6, 0));
  EXPECT_EQ(m.nnz(), 0);
}

TEST_F(MatrixMarket, GzipAndPlainReadTheSame) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "4 4 5\n1 1 2\n2 1 -1\n2 2 2\n4 3 0.5\n4 4 3\n";
  const CsrRows plain = read_matrix_market(write_text("a.mtx", text)).matrix;
  const CsrRows packed = read_matrix_market(write_gzip("a.mtx.gz", text)).matrix;
  EXPECT_EQ(plain.nnz(), 7);  // 3 diagonal + 2 mirrored pairs
  EXPECT_EQ(packed.row_offsets, plain.row_offsets);
  EXPECT_EQ(packed.col_indices, plain.col_indices);
  EXPECT_EQ(packed.values, plain.values);
}

TEST_F(MatrixMarket, WriterRoundTripsExactly) {
  CsrRows m;
  m.global_rows = 3;
  m.global_cols = 5;
  m.row_offsets = {0, 2, 2, 5};
  m.col_indices = {1, 4, 0, 2, 3};
  m.values = {0.1, -1e-300, 1.0 / 3.0, 6.02214076e23, -7};
  for (const std::string name : {"w.mtx", "w.mtx.gz"}) {
    const std::string path = (dir_ / name).string();
    blockeigs::io::write_matrix_market(path, m);
    const auto back = read_matrix_market(path);
    EXPECT_EQ(back.symmetry, MatrixMarketSymmetry::general) << name;
    EXPECT_EQ(back.matrix.global_rows, 3) << name;
    EXPECT_EQ(back.matrix.global_cols, 5) << name;
    EXPECT_EQ(back.matrix.row_offsets, m.row_offsets) << name;
    EXPECT_EQ(back.matrix.col_indices, m.col_indices) << name;
    EXPECT_EQ(back.matrix.values, m.values) << name;  // bit-exact: shortest round-trip text
  }
  // The .gz name really is compressed: its first bytes are the gzip magic.
  std::ifstream packed(dir_ / "w.mtx.gz", std::ios::binary);
  EXPECT_EQ(packed.get(), 0x1f);
  EXPECT_EQ(packed.get(), 0x8b);
}

TEST_F(MatrixMarket, WriterReportsAnUnwritablePath) {
  CsrRows m;
  m.global_rows = m.global_cols = 1;
  m.row_offsets = {0, 0};
  const std::string path = (dir_ / "missing" / "w.mtx").string();
  expect_mentions(input_error_message([&] { blockeigs::io::write_matrix_market(path, m); }), {path, "cannot create"});
}

TEST_F(MatrixMarket, MissingFile) {
  const std::string path = (dir_ / "nope.mtx.gz").string();
  expect_mentions(input_error_message([&] { read_matrix_market(path); }), {path, "no such file"});
}

TEST_F(MatrixMarket, EmptyFile) { expect_mentions(read_error(""), {"empty"}); }

TEST_F(MatrixMarket, BadBanner) {
  expect_mentions(read_error("3 3 1\n1 1 1\n"), {"line 1", "not a Matrix Market file"});
  expect_mentions(read_error("%%MatrixMarket matrix coordinate\n1 1 0\n"), {"line 1", "incomplete banner"});
  expect_mentions(read_error("%%MatrixMarket vector coordinate real general\n1 1 0\n"), {"line 1", "object 'vector'"});
  expect_mentions(read_error("%%MatrixMarket matrix sparse real general\n1 1 0\n"),
                  {"line 1", "unknown format 'sparse'"});
}

TEST_F(MatrixMarket, UnsupportedFormatFieldAndSymmetry) {
  expect_mentions(read_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"),
                  {"line 1", "'array'", "not supported"});
  expect_mentions(read_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"),
                  {"line 1", "field 'complex'", "real matrix cannot take", "imaginary parts"});
  expect_mentions(read_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 0\n"),
                  {"line 1", "symmetry 'skew-symmetric'", "not supported"});
  expect_mentions(read_error("%%MatrixMarket matrix coordinate real skew-hermitian\n2 2 0\n"),
                  {"line 1", "symmetry 'skew-hermitian'", "not supported"});
  expect_mentions(read_error("%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n"),
                  {"line 1", "field 'quaternion'", "real, integer, pattern or complex"});
}

// Complex files: a Hermitian file's other triangle conjugated, a general one
// as it is (and checked Hermitian by check_hermitian, which names the pair
// that differs), real fields with imaginary part 0; a Hermitian diagonal with
// an imaginary part refused with its line.
TEST_F(MatrixMarket, ComplexHermitianIsExpandedConjugated) {
  const std::string path = write_text("h.mtx",
                                      "%%MatrixMarket matrix coordinate complex hermitian\n3 3 4\n"
                                      "1 1 2 0\n2 1 1 -1\n3 2 0 2.5\n3 3 -1e-3 0\n");
  const ComplexMatrixMarketFile file = read_complex_matrix_market(path);
  EXPECT_EQ(file.field, MatrixMarketField::complex);
  EXPECT_EQ(file.symmetry, MatrixMarketSymmetry::hermitian);
  const ComplexCsrRows& m = file.matrix;
  using C = std::complex<double>;
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 1, 0, 2, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<C>{{2, 0}, {1, 1}, {1, -1}, {0, -2.5}, {0, 2.5}, {-1e-3, 0}}));
  EXPECT_NO_THROW(check_hermitian(m, path));
  // The same file read as real is refused, not truncated.
  expect_mentions(input_error_message([&] { read_matrix_market(path); }), {"h.mtx", "field 'complex'"});
  // A real symmetric file read as complex: imaginary parts 0.
  const std::string real =
      write_text("r.mtx", "%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 4\n2 1 -1\n");
  EXPECT_EQ(read_complex_matrix_market(real).matrix.values, (std::vector<C>{{4, 0}, {-1, 0}, {-1, 0}}));
  EXPECT_EQ(read_matrix_market(real).matrix.values, (std::vector<double>{4, -1, -1}));
}

TEST_F(MatrixMarket, ComplexGeneralIsCheckedHermitian) {
  const std::string ok = write_text("g.mtx",
                                    "%%MatrixMarket matrix coordinate complex general\n2 2 4\n"
                                    "1 1 3 0\n1 2 0.5 0.25\n2 1 0.5 -0.25\n2 2 1 0\n");
  EXPECT_NO_THROW(check_hermitian(read_complex_matrix_market(ok).matrix, ok));
  // (1, 2)'s partner is (1, 2) itself, not its conjugate; (2, 3) has none.
  const std::string bad = write_text("n.mtx",
                                     "%%MatrixMarket matrix coordinate complex general\n3 3 4\n"
                                     "1 1 3 0\n1 2 0.5 0.25\n2 1 0.5 0.25\n2 3 1 0\n");
  const ComplexCsrRows m = read_complex_matrix_market(bad).matrix;
  expect_mentions(input_error_message([&] { check_hermitian(m, bad); }),
                  {"n.mtx", "not Hermitian", "entry (1, 2) is (0.5,0.25)", "conjugate of (2, 1) is (0.5,-0.25)"});
  const std::string diagonal = write_text("d.mtx",
                                          "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n"
                                          "1 1 1 0\n2 2 1 0.5\n");
  expect_mentions(input_error_message([&] { read_complex_matrix_market(diagonal); }),
                  {"d.mtx", "line 4", "diagonal entry (2, 2)", "imaginary part 0.5"});
  const std::string short_line =
      write_text("s.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 2\n");
  expect_mentions(input_error_message([&] { read_complex_matrix_market(short_line); }),
                  {"s.mtx", "line 3", "'row column real imaginary'"});
}

TEST_F(MatrixMarket, BadOrMissingSizeLine) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n% c\n";
  expect_mentions(read_error(banner + "3 3\n"), {"line 3", "bad size line '3 3'"});
  expect_mentions(read_error(banner + "3 x 1\n1 1 1\n"), {"line 3", "bad size line"});
  expect_mentions(read_error(banner + "3 -3 1\n1 1 1\n"), {"line 3", "bad size line"});
  expect_mentions(read_error(banner + "3 3 1 7\n1 1 1\n"), {"line 3", "bad size line"});
  expect_mentions(read_error(banner + "\n"), {"line 3", "ends before the size line"});
}

TEST_F(MatrixMarket, SymmetricMustBeSquare) {
  expect_mentions(read_error("%%MatrixMarket matrix coordinate real symmetric\n4 5 1\n1 1 1\n"),
                  {"line 2", "must be square", "4 x 5"});
}

TEST_F(MatrixMarket, IndexOutOfRange) {
  const std::string head =
      "%%MatrixMarket matrix coordinate real general\n%\n%\n%\n%\n%\n%\n%\n%\n%\n9000 8000 3\n"
      "1 1 1\n";  // the size line is line 11, the first entry line 12
  expect_mentions(read_error(head + "9001 2 1\n1 1 1\n"), {"line 13: row 9001 is outside 1..9000"});
  expect_mentions(read_error(head + "2 8001 1\n1 1 1\n"), {"line 13: column 8001 is outside 1..8000"});
  expect_mentions(read_error(head + "0 1 1\n1 1 1\n"), {"line 13: row 0 is outside 1..9000"});
  expect_mentions(read_error(head + "-4 1 1\n1 1 1\n"), {"line 13: row -4 is outside"});
}

TEST_F(MatrixMarket, TooFewOrTooManyEntries) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 3 3\n";
  expect_mentions(read_error(head + "1 1 1\n2 2 2\n"), {"ends after 2 entries", "declares 3"});
  expect_mentions(read_error(head + "1 1 1\n2 2 2\n3 3 3\n% fine\n\n1 2 4\n"), {"line 8", "more entries than the 3"});
}

TEST_F(MatrixMarket, NonFiniteAndMalformedValues) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n";
  expect_mentions(read_error(head + "2 2 nan\n"), {"line 4", "'nan' is not finite"});
  expect_mentions(read_error(head + "2 2 -Inf\n"), {"line 4", "not finite"});
  expect_mentions(read_error(head + "2 2 1e999\n"), {"line 4", "'1e999' is out of range"});
  expect_mentions(read_error(head + "2 2 abc\n"), {"line 4", "'abc' is not a number"});
  expect_mentions(read_error(head + "2 2\n"), {"line 4", "expected 'row column value'"});
  expect_mentions(read_error(head + "2 2 1 1\n"), {"line 4", "expected 'row column value'"});
  expect_mentions(read_error(head + "2.5 2 1\n"), {"line 4", "row index '2.5'"});
  expect_mentions(read_error(head + "2 b 1\n"), {"line 4", "column index 'b'"});

  const std::string integer = "%%MatrixMarket matrix coordinate integer general\n3 3 1\n";
  expect_mentions(read_error(integer + "1 1 1.5\n"), {"line 3", "'1.5' is not an integer"});
  const std::string pattern = "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n";
  expect_mentions(read_error(pattern + "1 1 1\n"), {"line 3", "expected 'row column'"});
}

TEST_F(MatrixMarket, TruncatedGzip) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n200 200 200\n";
  for (int i = 1; i <= 200; ++i) text += std::to_string(i) + " " + std::to_string(i) + " 1.25\n";
  const std::string path = write_gzip("t.mtx.gz", text);
  fs::resize_file(path, fs::file_size(path) / 2);
  expect_mentions(input_error_message([&] { read_matrix_market(path); }), {path, "corrupt or truncated"});
}

// ---- every real matrix in the shared data folder ---------------------------

struct IndexEntry {
  std::int64_t rows = 0, cols = 0, nnz_full = 0;
  std::string symmetry, field;
};

std::map<std::string, IndexEntry> read_index(const std::string& path) {
  std::map<std::string, IndexEntry> index;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header: name group rows cols nnz_stored nnz_full symmetry field ...
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, group, nnz_stored;
    IndexEntry e;
    std::getline(fields, name, '\t');
    std::getline(fields, group, '\t');
    fields >> e.rows >> e.cols >> nnz_stored >> e.nnz_full >> e.symmetry >> e.field;
    if (!name.empty()) index[name] = e;
  }
  return index;
}

bool is_symmetric(const CsrRows& m) {
  for (std::int64_t r = 0; r < m.local_rows(); ++r)
    for (std::int64_t p = m.row_offsets[r]; p < m.row_offsets[r + 1]; ++p) {
      const std::int64_t c = m.col_indices[p];
      const auto begin = m.col_indices.begin() + m.row_offsets[c];
      const auto end = m.col_indices.begin() + m.row_offsets[c + 1];
      const auto mirror = std::lower_bound(begin, end, r);
      if (mirror == end || *mirror != r || m.values[mirror - m.col_indices.begin()] != m.values[p]) return false;
    }
  return true;
}

TEST(MatrixMarketData, EveryMatrixMatchesTheIndex) {
  const auto names = blockeigs::test::data_matrix_names();
  if (names.empty()) GTEST_SKIP() << "no matrices in the data folder ('" << blockeigs::test::data_dir() << "')";
  const auto index = read_index(blockeigs::test::data_dir() + "/INDEX.tsv");
  ASSERT_FALSE(index.empty()) << "INDEX.tsv is missing or empty";
  EXPECT_EQ(names.size(), index.size()) << "INDEX.tsv and the .mtx.gz files disagree";

  const auto start = std::chrono::steady_clock::now();
  std::int64_t total_nnz = 0;
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto entry = index.find(name);
    ASSERT_NE(entry, index.end()) << name << " is not in INDEX.tsv";
    const auto path = blockeigs::test::data_dir() + "/" + name + ".mtx.gz";
    const auto file = read_matrix_market(path);
    const IndexEntry& want = entry->second;
    EXPECT_EQ(file.matrix.global_rows, want.rows);
    EXPECT_EQ(file.matrix.global_cols, want.cols);
    EXPECT_EQ(file.matrix.nnz(), want.nnz_full);
    EXPECT_EQ(file.symmetry == MatrixMarketSymmetry::symmetric ? "symmetric" : "general", want.symmetry);
    const char* field = file.field == MatrixMarketField::real      ? "real"
                        : file.field == MatrixMarketField::integer ? "integer"
                                                                   : "pattern";
    EXPECT_EQ(field, want.field);
    EXPECT_NO_THROW(blockeigs::validate(file.matrix, path));
    if (file.symmetry == MatrixMarketSymmetry::symmetric) {
      EXPECT_TRUE(is_symmetric(file.matrix));
    }
    total_nnz += file.matrix.nnz();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("read %zu matrices, %lld nonzeros, in %.2f s\n", names.size(), static_cast<long long>(total_nnz),
              seconds);
}

}  // namespace
