#include "io/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/scalar.hpp"

namespace blockeigs::io {
namespace {

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// The whole file in memory. zlib reads plain files transparently, so one path
// serves .mtx and .mtx.gz alike.
std::string read_file_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail_input(path, ": no such file");
  if (std::filesystem::is_directory(path, ec)) fail_input(path, ": is a directory, not a file");
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail_input(path, ": cannot open: ", std::strerror(errno));
  gzbuffer(file.get(), 1 << 20);

  std::string text;
  constexpr std::size_t chunk = 4 << 20;
  for (;;) {
    const std::size_t old_size = text.size();
    text.resize(old_size + chunk);
    const int got = gzread(file.get(), text.data() + old_size, static_cast<unsigned>(chunk));
    if (got < 0) {
      int code = 0;
      fail_input(path, ": cannot read: ", gzerror(file.get(), &code));
    }
    text.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  // A truncated gzip stream reads as a short file; zlib reports it only here.
  int code = Z_OK;
  const char* message = gzerror(file.get(), &code);
  if (code != Z_OK && code != Z_STREAM_END)
    fail_input(path, ": compressed data is corrupt or truncated (", message, ")");
  return text;
}

// Walks the text line by line, keeping the 1-based line number for messages.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : rest_(text) {}

  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    const std::size_t end = rest_.find('\n');
    line = rest_.substr(0, end);
    rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number_;
    return true;
  }
  std::int64_t number() const { return number_; }

 private:
  std::string_view rest_;
  std::int64_t number_ = 0;
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Splits off the next whitespace-separated token; empty when the line is used up.
std::string_view next_token(std::string_view& rest) {
  std::size_t begin = 0;
  while (begin < rest.size() && is_blank(rest[begin])) ++begin;
  std::size_t end = begin;
  while (end < rest.size() && !is_blank(rest[end])) ++end;
  const std::string_view token = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return token;
}

bool is_skippable(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i == line.size() || line[i] == '%';
}

std::string lowercase(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool parse_integer(std::string_view token, std::int64_t& out) {
  if (token.empty()) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && end == token.data() + token.size();
}

// std::errc() on success; result_out_of_range for values like 1e999.
std::errc parse_real(std::string_view token, double& out) {
  if (token.size() > 1 && token.front() == '+') token.remove_prefix(1);  // from_chars rejects '+'
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  if (ec == std::errc() && end != token.data() + token.size()) return std::errc::invalid_argument;
  return token.empty() ? std::errc::invalid_argument : ec;
}

struct Header {
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
};

Header parse_banner(std::string_view line, const std::string& path) {
  std::string_view rest = line;
  if (lowercase(next_token(rest)) != "%%matrixmarket")
    fail_input(path,
               ": line 1: not a Matrix Market file (the first line must be "
               "'%%MatrixMarket matrix coordinate <field> <symmetry>')");
  const std::string object = lowercase(next_token(rest));
  const std::string format = lowercase(next_token(rest));
  const std::string field = lowercase(next_token(rest));
  const std::string symmetry = lowercase(next_token(rest));
  if (symmetry.empty())
    fail_input(path, ": line 1: incomplete banner '", line,
               "' (expected '%%MatrixMarket matrix coordinate <field> <symmetry>')");
  if (object != "matrix") fail_input(path, ": line 1: object '", object, "' is not supported (only 'matrix')");
  if (format == "array") fail_input(path, ": line 1: format 'array' (dense) is not supported (only 'coordinate')");
  if (format != "coordinate") fail_input(path, ": line 1: unknown format '", format, "' (expected 'coordinate')");

  Header header;
  if (field == "real" || field == "double")
    header.field = MatrixMarketField::real;
  else if (field == "complex")
    header.field = MatrixMarketField::complex;
  else if (field == "integer")
    header.field = MatrixMarketField::integer;
  else if (field == "pattern")
    header.field = MatrixMarketField::pattern;
  else
    fail_input(path, ": line 1: field '", field, "' is not supported (real, integer, pattern or complex)");
  if (symmetry == "general")
    header.symmetry = MatrixMarketSymmetry::general;
  else if (symmetry == "symmetric")
    header.symmetry = MatrixMarketSymmetry::symmetric;
  else if (symmetry == "hermitian")
    header.symmetry = MatrixMarketSymmetry::hermitian;
  else
    fail_input(path, ": line 1: symmetry '", symmetry, "' is not supported (general, symmetric or hermitian)");
  return header;
}

template <class T>
struct Triplets {
  std::vector<std::int64_t> rows, cols;
  std::vector<T> values;
};

// Buckets entries by row (a counting sort), then sorts within rows and sums
// duplicates.
template <class T>
CsrRowsOf<T> assemble(std::int64_t rows, std::int64_t cols, const Triplets<T>& entries) {
  CsrRowsOf<T> out;
  out.global_rows = rows;
  out.global_cols = cols;
  out.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (const std::int64_t r : entries.rows) ++out.row_offsets[r + 1];
  for (std::int64_t r = 0; r < rows; ++r) out.row_offsets[r + 1] += out.row_offsets[r];

  const std::size_t count = entries.rows.size();
  out.col_indices.resize(count);
  out.values.resize(count);
  std::vector<std::int64_t> next(out.row_offsets.begin(), out.row_offsets.end() - 1);
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t slot = next[entries.rows[k]]++;
    out.col_indices[slot] = entries.cols[k];
    out.values[slot] = entries.values[k];
  }
  sort_and_sum_duplicates(out);
  return out;
}

}  // namespace

std::optional<MatrixMarketSize> read_matrix_market_size(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) return std::nullopt;
  MatrixMarketSize size;
  size.file_bytes = static_cast<std::int64_t>(bytes);
  size.compressed = gzdirect(file.get()) == 0;
  std::string line(1 << 16, '\0');
  bool banner = true;
  try {
    while (gzgets(file.get(), line.data(), static_cast<int>(line.size()))) {
      std::string_view text(line.c_str());
      if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      if (banner) {
        const Header header = parse_banner(text, path);
        size.symmetric = header.symmetry != MatrixMarketSymmetry::general;
        size.complex = header.field == MatrixMarketField::complex;
        banner = false;
        continue;
      }
      if (is_skippable(text)) continue;
      const bool ok = parse_integer(next_token(text), size.rows) && parse_integer(next_token(text), size.cols) &&
                      parse_integer(next_token(text), size.entries);
      if (!ok || size.rows < 0 || size.cols < 0 || size.entries < 0) return std::nullopt;
      return size;
    }
  } catch (const InputError&) {
  }
  return std::nullopt;
}

namespace {

// The size line: the first line after the banner that is neither a comment
// nor blank, "rows columns entries".
struct SizeLine {
  std::int64_t rows = 0, cols = 0, declared = 0;
};

SizeLine read_size_line(LineReader& lines, const std::string& path) {
  std::string_view line;
  bool have_size = false;
  while (!have_size && lines.next(line)) have_size = !is_skippable(line);
  if (!have_size) fail_input(path, ": line ", lines.number(), ": the file ends before the size line");
  SizeLine size;
  std::string_view rest = line;
  const bool ok = parse_integer(next_token(rest), size.rows) && parse_integer(next_token(rest), size.cols) &&
                  parse_integer(next_token(rest), size.declared) && next_token(rest).empty();
  if (!ok || size.rows < 0 || size.cols < 0 || size.declared < 0)
    fail_input(path, ": line ", lines.number(), ": bad size line '", line,
               "' (expected three non-negative integers: rows columns entries)");
  return size;
}

// An entry's value token in the banner's field (pattern: none, 1).
double parse_value(const Header& header, std::string_view token, std::int64_t number, const std::string& path) {
  double value = 1.0;
  if (header.field == MatrixMarketField::real || header.field == MatrixMarketField::complex) {
    if (const std::errc ec = parse_real(token, value); ec == std::errc::result_out_of_range)
      fail_input(path, ": line ", number, ": value '", token, "' is out of range for a double");
    else if (ec != std::errc())
      fail_input(path, ": line ", number, ": value '", token, "' is not a number");
    if (!std::isfinite(value)) fail_input(path, ": line ", number, ": value '", token, "' is not finite");
  } else if (header.field == MatrixMarketField::integer) {
    std::int64_t integer = 0;
    if (!parse_integer(token, integer)) fail_input(path, ": line ", number, ": value '", token, "' is not an integer");
    value = static_cast<double>(integer);
  }
  return value;
}

// One entry line, "row column [value [imaginary part]]", checked against the size; 1-based indices.
struct Entry {
  std::int64_t row = 0, col = 0;
  double value = 1.0;
  double imag = 0.0;  // complex fields
};

Entry parse_entry(std::string_view line, std::int64_t number, const Header& header, const SizeLine& size,
                  const std::string& path) {
  const std::size_t tokens_per_entry = header.field == MatrixMarketField::pattern   ? 2
                                       : header.field == MatrixMarketField::complex ? 4
                                                                                    : 3;
  std::array<std::string_view, 4> tokens;
  std::size_t found = 0;
  std::string_view rest = line;
  for (std::string_view token = next_token(rest); !token.empty() && found < tokens.size(); token = next_token(rest))
    tokens[found++] = token;
  if (found != tokens_per_entry)
    fail_input(path, ": line ", number, ": expected ",
               tokens_per_entry == 2   ? "'row column'"
               : tokens_per_entry == 4 ? "'row column real imaginary'"
                                       : "'row column value'",
               ", got '", line, "'");
  Entry entry;
  if (!parse_integer(tokens[0], entry.row))
    fail_input(path, ": line ", number, ": row index '", tokens[0], "' is not an integer");
  if (!parse_integer(tokens[1], entry.col))
    fail_input(path, ": line ", number, ": column index '", tokens[1], "' is not an integer");
  if (entry.row < 1 || entry.row > size.rows)
    fail_input(path, ": line ", number, ": row ", entry.row, " is outside 1..", size.rows);
  if (entry.col < 1 || entry.col > size.cols)
    fail_input(path, ": line ", number, ": column ", entry.col, " is outside 1..", size.cols);
  entry.value = parse_value(header, tokens[2], number, path);
  if (header.field == MatrixMarketField::complex) entry.imag = parse_value(header, tokens[3], number, path);
  return entry;
}

}  // namespace

namespace {

// The whole file as rows of T: a symmetric file's other triangle as it is, a
// Hermitian one's conjugated (its diagonal must be real).
template <class T>
std::pair<Header, CsrRowsOf<T>> read_rows(const std::string& path) {
  const std::string text = read_file_text(path);
  LineReader lines(text);
  std::string_view line;
  if (!lines.next(line)) fail_input(path, ": the file is empty (no Matrix Market banner)");
  const Header header = parse_banner(line, path);
  if constexpr (!is_complex_v<T>) {
    if (header.field == MatrixMarketField::complex)
      fail_input(path, ": line 1: field 'complex' holds complex values, which a real matrix cannot take (their ",
                 "imaginary parts would be lost)");
  }
  const SizeLine size = read_size_line(lines, path);
  const bool mirrored = header.symmetry != MatrixMarketSymmetry::general;
  const bool conjugated = header.symmetry == MatrixMarketSymmetry::hermitian;
  if (mirrored && size.rows != size.cols)
    fail_input(path, ": line ", lines.number(), ": a ", conjugated ? "Hermitian" : "symmetric",
               " matrix must be square, but the size is ", size.rows, " x ", size.cols);

  Triplets<T> entries;
  // Every entry takes at least four characters ("1 1\n"), which bounds what a
  // lying size line can make us reserve.
  const auto expected =
      static_cast<std::size_t>(std::min<std::int64_t>(size.declared, static_cast<std::int64_t>(text.size() / 4 + 1)));
  const std::size_t capacity = mirrored ? 2 * expected : expected;
  entries.rows.reserve(capacity);
  entries.cols.reserve(capacity);
  entries.values.reserve(capacity);

  std::int64_t seen = 0;
  while (lines.next(line)) {
    if (is_skippable(line)) continue;
    const std::int64_t number = lines.number();
    if (seen == size.declared)
      fail_input(path, ": line ", number, ": more entries than the ", size.declared, " the size line declares");
    const Entry e = parse_entry(line, number, header, size, path);
    T value{};
    if constexpr (is_complex_v<T>)
      value = T(e.value, e.imag);
    else
      value = e.value;
    if (conjugated && e.row == e.col && e.imag != 0.0)
      fail_input(path, ": line ", number, ": diagonal entry (", e.row, ", ", e.col, ") has the imaginary part ", e.imag,
                 "; a Hermitian matrix's diagonal is real");
    entries.rows.push_back(e.row - 1);
    entries.cols.push_back(e.col - 1);
    entries.values.push_back(value);
    if (mirrored && e.row != e.col) {  // the other triangle, whichever one the file stores
      entries.rows.push_back(e.col - 1);
      entries.cols.push_back(e.row - 1);
      if constexpr (is_complex_v<T>)
        entries.values.push_back(conjugated ? std::conj(value) : value);
      else
        entries.values.push_back(value);
    }
    ++seen;
  }
  if (seen < size.declared)
    fail_input(path, ": line ", lines.number(), ": the file ends after ", seen, " entries, but the size line declares ",
               size.declared);
  return {header, assemble(size.rows, size.cols, entries)};
}

}  // namespace

MatrixMarketFile read_matrix_market(const std::string& path) {
  auto [header, rows] = read_rows<double>(path);
  MatrixMarketFile file;
  file.field = header.field;
  file.symmetry = header.symmetry;
  file.matrix = std::move(rows);
  return file;
}

ComplexMatrixMarketFile read_complex_matrix_market(const std::string& path) {
  auto [header, rows] = read_rows<std::complex<double>>(path);
  ComplexMatrixMarketFile file;
  file.field = header.field;
  file.symmetry = header.symmetry;
  file.matrix = std::move(rows);
  return file;
}

void check_hermitian(const ComplexCsrRows& whole, const std::string& source) {
  if (whole.first_row != 0 || whole.local_rows() != whole.global_rows || whole.global_rows != whole.global_cols)
    fail_input(source, ": check_hermitian needs a whole square matrix");
  double largest = 0.0;
  for (const std::complex<double>& v : whole.values) largest = std::max(largest, std::abs(v));
  const double tolerance = 1e-12 * largest;
  // (i, j) against (j, i): each row's columns ascend, so the partner is a binary search away.
  for (std::int64_t i = 0; i < whole.global_rows; ++i)
    for (std::int64_t p = whole.row_offsets[i]; p < whole.row_offsets[i + 1]; ++p) {
      const std::int64_t j = whole.col_indices[p];
      const auto begin = whole.col_indices.begin() + whole.row_offsets[j];
      const auto end = whole.col_indices.begin() + whole.row_offsets[j + 1];
      const auto at = std::lower_bound(begin, end, i);
      const std::complex<double> partner =
          at != end && *at == i ? whole.values[static_cast<std::size_t>(at - whole.col_indices.begin())] : 0.0;
      if (std::abs(whole.values[p] - std::conj(partner)) > tolerance)
        fail_input(source, ": the matrix is not Hermitian: entry (", i + 1, ", ", j + 1, ") is ", whole.values[p],
                   " but the conjugate of (", j + 1, ", ", i + 1, ") is ", std::conj(partner),
                   " (1-based; A must equal its conjugate transpose)");
    }
}

void write_matrix_market(const std::string& path, const CsrRows& whole) {
  if (whole.first_row != 0 || whole.local_rows() != whole.global_rows)
    fail_input(path, ": write_matrix_market needs a whole matrix, got rows [", whole.first_row, ", ",
               whole.first_row + whole.local_rows(), ") of ", whole.global_rows);
  // "T" asks zlib for a plain (transparent) file; a .gz name gets compression.
  const bool compress = path.ends_with(".gz");
  GzFile file(gzopen(path.c_str(), compress ? "wb6" : "wbT"));
  if (!file) fail_input(path, ": cannot create: ", std::strerror(errno));

  std::string buffer;
  buffer.reserve(1 << 20);
  auto flush = [&] {
    if (!buffer.empty() && gzwrite(file.get(), buffer.data(), static_cast<unsigned>(buffer.size())) <= 0) {
      int code = 0;
      fail_input(path, ": cannot write: ", gzerror(file.get(), &code));
    }
    buffer.clear();
  };
  auto append_number = [&](auto number) {
    char digits[32];
    const auto result = std::to_chars(digits, digits + sizeof digits, number);
    buffer.append(digits, result.ptr);
  };

  buffer += "%%MatrixMarket matrix coordinate real general\n";
  append_number(whole.global_rows);
  buffer += ' ';
  append_number(whole.global_cols);
  buffer += ' ';
  append_number(whole.nnz());
  buffer += '\n';
  for (std::int64_t r = 0; r < whole.local_rows(); ++r) {
    for (std::int64_t p = whole.row_offsets[r]; p < whole.row_offsets[r + 1]; ++p) {
      append_number(r + 1);
      buffer += ' ';
      append_number(whole.col_indices[p] + 1);
      buffer += ' ';
      append_number(whole.values[p]);  // shortest text that reads back to the same double
      buffer += '\n';
    }
    if (buffer.size() > (1 << 20) - 256) flush();
  }
  flush();
  if (gzclose(file.release()) != Z_OK) fail_input(path, ": cannot finish writing the file");
}

}  // namespace blockeigs::io
