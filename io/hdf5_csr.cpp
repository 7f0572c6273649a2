#include "io/hdf5_csr.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/scalar.hpp"
#include "core/huge_pages.hpp"
#include "core/thread_share.hpp"
#include "io/hdf5_handle.hpp"

namespace blockeigs::io {
namespace {

// How a dataset's elements are stored, where they can be read without HDF5's conversion.
enum class Storage { int32, int64, float32, float64, complex64, complex128, other };

// The complex compounds in memory (h5py's layout), made once and left open:
// HDF5 closes them at its exit, which runs before static destructors would.
hid_t native_complex(bool single) {
  static const hid_t complex64 = complex_type(H5T_NATIVE_FLOAT).release();
  static const hid_t complex128 = complex_type(H5T_NATIVE_DOUBLE).release();
  return single ? complex64 : complex128;
}

Storage storage_of(hid_t type) {
  if (H5Tequal(type, H5T_NATIVE_INT32) > 0) return Storage::int32;
  if (H5Tequal(type, H5T_NATIVE_INT64) > 0) return Storage::int64;
  if (H5Tequal(type, H5T_NATIVE_FLOAT) > 0) return Storage::float32;
  if (H5Tequal(type, H5T_NATIVE_DOUBLE) > 0) return Storage::float64;
  if (H5Tequal(type, native_complex(true)) > 0) return Storage::complex64;
  if (H5Tequal(type, native_complex(false)) > 0) return Storage::complex128;
  return Storage::other;
}

struct Dataset {
  Id id;
  std::string name;  // full path inside the file, for messages
  std::int64_t size = 0;
  Storage storage = Storage::other;
  std::size_t complex_part = 0;  // 4 or 8 where it holds complex values (complex_part_bytes)
};

// Entries are read this many at a time into staging pieces that stay in L2
// while they are checked and appended (768 KiB for int32 + float64 entries).
constexpr std::int64_t kPieceEntries = hdf5_read_piece;

// A chunked (e.g. compressed) dataset keeps two of its chunks cached, so that
// a chunk straddling two pieces is decompressed once, not once per piece (a
// whole-range read holds one chunk at a time). Returns the access properties
// to reopen it with; invalid for other layouts.
Id chunk_cache_for(const Id& set, const Id& type) {
  const Id create(H5Dget_create_plist(set.get()), H5Pclose);
  hsize_t chunk = 0;
  if (!create.valid() || H5Pget_layout(create.get()) != H5D_CHUNKED || H5Pget_chunk(create.get(), 1, &chunk) != 1)
    return {};
  Id access(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  const std::size_t bytes = 2 * static_cast<std::size_t>(chunk) * H5Tget_size(type.get());
  if (access.valid())
    H5Pset_chunk_cache(access.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, std::max(bytes, std::size_t{1} << 20),
                       H5D_CHUNK_CACHE_W0_DEFAULT);
  return access;
}

Dataset open_dataset(const Id& group, const Where& where, const char* name, bool allow_float) {
  Dataset set;
  set.name = where.member(name);
  if (H5Lexists(group.get(), name, H5P_DEFAULT) <= 0) fail_input(where.path, ": no dataset ", set.name);
  set.id = Id(H5Dopen2(group.get(), name, H5P_DEFAULT), H5Dclose);
  if (!set.id.valid()) fail_input(where.path, ": ", set.name, " is not a dataset");

  const Id space(H5Dget_space(set.id.get()), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != 1) fail_input(where.path, ": ", set.name, " must be one-dimensional, but has ", rank, " dimensions");
  hsize_t extent = 0;
  H5Sget_simple_extent_dims(space.get(), &extent, nullptr);
  set.size = static_cast<std::int64_t>(extent);

  const Id type(H5Dget_type(set.id.get()), H5Tclose);
  const H5T_class_t type_class = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  set.complex_part = allow_float && type.valid() ? complex_part_bytes(type.get()) : 0;
  const bool ok = type_class == H5T_INTEGER || (allow_float && type_class == H5T_FLOAT) || set.complex_part > 0;
  if (!ok)
    fail_input(where.path, ": ", set.name, " must hold ",
               allow_float ? "integers, floating-point numbers or complex ones (a compound of r and i)" : "integers",
               ", but its type is something else");
  set.storage = storage_of(type.get());
  if (const Id access = chunk_cache_for(set.id, type); access.valid()) {
    Id reopened(H5Dopen2(group.get(), name, access.get()), H5Dclose);
    if (reopened.valid()) set.id = std::move(reopened);
  }
  return set;
}

// Reads elements [offset, offset + count) of a 1-D dataset, converted by
// HDF5 to the memory type where the file's differs (int16 -> int64, ...).
bool read_elements(const Dataset& set, hid_t memory_type, std::int64_t offset, std::int64_t count, void* out) {
  if (count == 0) return true;
  const Id file_space(H5Dget_space(set.id.get()), H5Sclose);
  const hsize_t start = static_cast<hsize_t>(offset), extent = static_cast<hsize_t>(count);
  const Id memory_space(H5Screate_simple(1, &extent, nullptr), H5Sclose);
  return file_space.valid() && memory_space.valid() &&
         H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &extent, nullptr) >= 0 &&
         H5Dread(set.id.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out) >= 0;
}

[[noreturn]] void fail_read(const Dataset& set, const Where& where, std::int64_t offset, std::int64_t count) {
  fail_input(where.path, ": ", set.name, ": cannot read entries [", offset, ", ", offset + count,
             ") (is the file damaged or truncated?)");
}

template <class T>
void read_range(const Dataset& set, const Where& where, hid_t memory_type, std::int64_t offset, std::int64_t count,
                T* out) {
  if (!read_elements(set, memory_type, offset, count, out)) fail_read(set, where, offset, count);
}

std::int64_t read_one_offset(const Dataset& indptr, const Where& where, std::int64_t index) {
  std::int64_t value = 0;
  read_range(indptr, where, H5T_NATIVE_INT64, index, 1, &value);
  return value;
}

std::array<std::int64_t, 2> read_shape(const Id& group, const Where& where) {
  const char* name = nullptr;
  for (const char* candidate : {"shape", "h5sparse_shape"})
    if (H5Aexists(group.get(), candidate) > 0) {
      name = candidate;
      break;
    }
  if (!name)
    fail_input(where.path, ": ", where.group, " has no shape attribute (expected 'shape' or 'h5sparse_shape')");

  const Id attribute(H5Aopen(group.get(), name, H5P_DEFAULT), H5Aclose);
  const Id space(attribute.valid() ? H5Aget_space(attribute.get()) : H5I_INVALID_HID, H5Sclose);
  const Id type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID, H5Tclose);
  const hssize_t count = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (count != 2 || !type.valid() || H5Tget_class(type.get()) != H5T_INTEGER)
    fail_input(where.path, ": attribute '", name, "' of ", where.group, " must hold two integers (rows, columns)");
  std::array<std::int64_t, 2> shape{};
  if (H5Aread(attribute.get(), H5T_NATIVE_INT64, shape.data()) < 0)
    fail_input(where.path, ": cannot read attribute '", name, "' of ", where.group);
  if (shape[0] < 0 || shape[1] < 0)
    fail_input(where.path, ": attribute '", name, "' of ", where.group, " is negative (", shape[0], ", ", shape[1],
               ")");
  return shape;
}

Id open_group(const Id& file, const Where& where) {
  // Check each link on the way so a missing parent reads as missing, not as an error.
  for (std::size_t slash = where.group.find('/', 1);; slash = where.group.find('/', slash + 1)) {
    const std::string prefix = where.group.substr(0, slash);
    if (prefix != "/" && H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0)
      fail_input(where.path, ": no group ", where.group);
    if (slash == std::string::npos) break;
  }
  Id group(H5Gopen2(file.get(), where.group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail_input(where.path, ": ", where.group, " is not a group");
  return group;
}

// An opened matrix whose datasets exist and agree with its shape.
struct OpenMatrix {
  Where where;
  Id file, group;
  Dataset indptr, indices, data;
  Hdf5CsrInfo info;
};

OpenMatrix open_matrix(const std::string& path, const std::string& group_name) {
  OpenMatrix m;
  m.where = {path, normalize_group(group_name)};
  const Where& where = m.where;
  m.file = open_file(path);
  m.group = open_group(m.file, where);

  if (auto format = read_string_attribute(m.group, "h5sparse_format", where.path, where.group);
      format && *format != "csr")
    fail_input(path, ": ", where.group, " holds a '", *format, "' matrix (h5sparse_format); only csr is supported");
  if (auto encoding = read_string_attribute(m.group, "encoding-type", where.path, where.group);
      encoding && *encoding != "csr_matrix")
    fail_input(path, ": ", where.group, " holds a '", *encoding, "' (encoding-type); only csr_matrix is supported");

  const auto shape = read_shape(m.group, where);
  m.indptr = open_dataset(m.group, where, "indptr", false);
  m.indices = open_dataset(m.group, where, "indices", false);
  m.data = open_dataset(m.group, where, "data", true);
  m.info = {shape[0], shape[1], m.data.size, m.data.complex_part > 0};

  if (m.indptr.size != shape[0] + 1)
    fail_input(path, ": shape says ", shape[0], " rows but ", m.indptr.name, " has ", m.indptr.size,
               " entries (expected ", shape[0] + 1, ")");
  if (m.indices.size != m.data.size)
    fail_input(path, ": ", m.indices.name, " has ", m.indices.size, " entries but ", m.data.name, " has ", m.data.size);
  if (const auto first = read_one_offset(m.indptr, where, 0); first != 0)
    fail_input(path, ": ", m.indptr.name, " starts at ", first, ", not 0");
  if (const auto last = read_one_offset(m.indptr, where, shape[0]); last != m.data.size)
    fail_input(path, ": ", m.indptr.name, " ends at ", last, " but ", m.data.name, " has ", m.data.size, " entries");
  return m;
}

// indptr[row_begin] and indptr[row_end], as stored.
struct OffsetRange {
  std::int64_t first = 0, last = 0;
};

// indptr[row_begin, row_end], rebased to start at 0, into `offsets` (empty),
// checked monotone piece by piece as it is read. The caller checks the range
// before it uses the offsets (rebasing wraps, without overflow, where it fails).
OffsetRange read_offsets(const OpenMatrix& m, std::int64_t row_begin, std::int64_t row_end,
                         std::vector<std::int64_t>& offsets) {
  const std::int64_t count = row_end - row_begin + 1;
  reserve_in_huge_pages(offsets, static_cast<std::size_t>(count));
  const auto piece = std::make_unique_for_overwrite<std::int64_t[]>(std::min(count, kPieceEntries));
  OffsetRange range;
  for (std::int64_t first = 0; first < count; first += kPieceEntries) {
    const std::int64_t n = std::min(kPieceEntries, count - first);
    if (!read_elements(m.indptr, H5T_NATIVE_INT64, row_begin + first, n, piece.get()))
      fail_read(m.indptr, m.where, row_begin, count);
    if (first == 0) range.first = range.last = piece[0];
    for (std::int64_t i = 0; i < n; range.last = piece[i++])
      if (piece[i] < range.last)
        fail_input(m.where.path, ": ", m.indptr.name, " is not monotone at row ", row_begin + first + i - 1, " (",
                   range.last, " then ", piece[i], ")");
    const std::size_t old_size = offsets.size();
    offsets.insert(offsets.end(), piece.get(), piece.get() + n);
    const auto base = static_cast<std::uint64_t>(range.first);
    if (base != 0)
      for (std::size_t i = old_size; i < offsets.size(); ++i)
        offsets[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(offsets[i]) - base);
  }
  return range;
}

// Whether every column lies in [0, cols): c and (cols - 1) - c are both
// non-negative exactly then, so one OR of their sign bits decides (vectorised).
template <class Index>
bool columns_in_range(const Index* col, std::int64_t n, std::int64_t cols) {
  using U = std::make_unsigned_t<Index>;
  const U last = static_cast<U>(std::min<std::int64_t>(cols - 1, std::numeric_limits<Index>::max()));
  U signs = 0;
  for (std::int64_t i = 0; i < n; ++i) signs |= static_cast<U>(col[i]) | (last - static_cast<U>(col[i]));
  return (signs >> (8 * sizeof(U) - 1)) == 0;
}

// Whether no value is infinite or NaN (all exponent bits set), vectorised;
// a complex value's two parts alike.
template <class Value>
bool all_finite(const Value* val, std::int64_t n) {
  if constexpr (is_complex_v<Value>) {
    return all_finite(reinterpret_cast<const real_t<Value>*>(val), 2 * n);
  } else {
    using U = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
    constexpr U exponent = static_cast<U>(sizeof(Value) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);
    U bad = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      U bits;
      std::memcpy(&bits, val + i, sizeof bits);
      bad |= (bits & exponent) == exponent;
    }
    return bad == 0;
  }
}

// Checks the entries of `rows` (offsets in place, entries arriving piece by
// piece) as the whole-array check did: entry by entry in order, its column in
// range, then its value finite; and finds the first row whose columns are not
// strictly ascending, from which sort_and_sum_duplicates must work.
template <class Rows>
class EntryCheck {
 public:
  // Entries from the start of local row `first_row` on (a thread's share starts at a row).
  EntryCheck(const OpenMatrix& m, const Rows& rows, std::int64_t first_row = 0) : m_(m), rows_(rows), row_(first_row) {}

  template <class Index, class Value>
  void check(std::int64_t first, std::int64_t n, const Index* col, const Value* val) {
    if (!valid(n, col, val)) report(first, n, col, val);
    track_order(first, n, col);
  }

  // Follows the columns' order through entries [first, first + n), the next piece of this check's entries.
  template <class Index>
  void track_order(std::int64_t first, std::int64_t n, const Index* col) {
    if (unsorted_ < 0) find_unsorted(first, n, col);
  }

  // Whether every column is in range and every value finite.
  template <class Index, class Value>
  bool valid(std::int64_t n, const Index* col, const Value* val) const {
    return columns_in_range(col, n, rows_.global_cols) && all_finite(val, n);
  }

  // The first row to canonicalise (local_rows() if none).
  std::int64_t unsorted_from() const { return unsorted_ < 0 ? rows_.local_rows() : unsorted_; }

  // Throws the InputError that names the first bad entry of a piece that is not valid().
  template <class Index, class Value>
  [[noreturn]] void report(std::int64_t first, std::int64_t n, const Index* col, const Value* val) const {
    check_each(first, n, col, val);
    throw Error("internal error: EntryCheck::report found no failing entry");
  }

 private:
  std::int64_t row_of(std::int64_t entry) const {
    const auto& offsets = rows_.row_offsets;
    return std::upper_bound(offsets.begin(), offsets.end(), entry) - offsets.begin() - 1;
  }

  template <class Index, class Value>
  void check_each(std::int64_t first, std::int64_t n, const Index* col, const Value* val) const {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t c = col[i];
      const Value v = val[i];
      const std::int64_t row = rows_.first_row + row_of(first + i);
      if (c < 0 || c >= rows_.global_cols)
        fail_input(m_.where.path, ": ", m_.indices.name, ": row ", row, " has column ", c, ", but the matrix has ",
                   rows_.global_cols, " columns");
      if (!all_finite(&v, 1))
        fail_input(m_.where.path, ": ", m_.data.name, ": row ", row, " holds ", v, " (column ", c, ")");
    }
  }

  // Counts the entries whose column does not exceed the one before (vectorised
  // for int32); only row starts may be such entries. Searches entry by entry
  // only where some other entry is.
  template <class Index>
  void find_unsorted(std::int64_t first, std::int64_t n, const Index* col) {
    const auto& offsets = rows_.row_offsets;
    const std::int64_t end = first + n;
    while (offsets[row_ + 1] <= first) ++row_;  // skips empty rows; row_ holds entry `first`
    std::int64_t descents = first > offsets[row_] && col[0] <= last_;
    for (std::int64_t i = 1; i < n; ++i) descents += col[i] <= col[i - 1];
    for (std::int64_t r = row_ + 1; offsets[r] < end; ++r)
      if (offsets[r + 1] > offsets[r]) descents -= col[offsets[r] - first] <= col[offsets[r] - first - 1];
    if (descents > 0) return locate_unsorted(first, n, col);
    last_ = col[n - 1];
  }

  template <class Index>
  void locate_unsorted(std::int64_t first, std::int64_t n, const Index* col) {
    const auto& offsets = rows_.row_offsets;
    const std::int64_t end = first + n;
    for (std::int64_t p = first; p < end;) {
      while (offsets[row_ + 1] <= p) ++row_;
      const std::int64_t stop = std::min(offsets[row_ + 1], end);
      if (p == offsets[row_]) last_ = col[p++ - first];
      for (; p < stop; ++p) {
        const std::int64_t c = col[p - first];
        if (c <= last_) {
          unsorted_ = row_;
          return;
        }
        last_ = c;
      }
    }
  }

  const OpenMatrix& m_;
  const Rows& rows_;
  std::int64_t row_;            // the row of the entry find_unsorted looks at
  std::int64_t last_ = 0;       // the column before it in its row
  std::int64_t unsorted_ = -1;  // the first row not strictly ascending, once found
};

// Memory types of the staging pieces: the file's own where it is native.
template <class T>
hid_t memory_type() {
  if constexpr (std::is_same_v<T, std::int32_t>)
    return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, float>)
    return H5T_NATIVE_FLOAT;
  else if constexpr (is_complex_v<T>)
    return native_complex(std::is_same_v<T, std::complex<float>>);
  else
    return H5T_NATIVE_DOUBLE;
}

// Entries [base, base + nnz) into `rows` (offsets already read), piece by
// piece: read into staging, checked there while it is in cache, appended
// (widened) to the reserved arrays. Returns the first row to canonicalise.
template <class Index, class Value, class Rows>
std::int64_t read_entries(const OpenMatrix& m, std::int64_t base, Rows& rows) {
  const std::int64_t nnz = rows.row_offsets.back();
  reserve_in_huge_pages(rows.col_indices, static_cast<std::size_t>(nnz));
  reserve_in_huge_pages(rows.values, static_cast<std::size_t>(nnz));
  const std::int64_t size = std::min(nnz, kPieceEntries);
  const auto col = std::make_unique_for_overwrite<Index[]>(size);
  const auto val = std::make_unique_for_overwrite<Value[]>(size);
  EntryCheck check(m, rows);
  for (std::int64_t first = 0; first < nnz; first += kPieceEntries) {
    const std::int64_t n = std::min(kPieceEntries, nnz - first);
    if (!read_elements(m.indices, memory_type<Index>(), base + first, n, col.get()))
      fail_read(m.indices, m.where, base, nnz);
    if (!read_elements(m.data, memory_type<Value>(), base + first, n, val.get())) fail_read(m.data, m.where, base, nnz);
    check.check(first, n, col.get(), val.get());
    rows.col_indices.insert(rows.col_indices.end(), col.get(), col.get() + n);
    rows.values.insert(rows.values.end(), val.get(), val.get() + n);
  }
  return check.unsorted_from();
}

// The byte offset in the file of a dataset's elements where they can be read
// without HDF5, as `expected` (contiguous_offset, of that native type); -1 otherwise.
std::int64_t raw_offset(const Dataset& set, Storage expected) {
  return set.storage == expected ? contiguous_offset(set.id.get()) : -1;
}

template <class T>
constexpr Storage storage_for() {
  if constexpr (std::is_same_v<T, std::int32_t>)
    return Storage::int32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return Storage::int64;
  else if constexpr (std::is_same_v<T, float>)
    return Storage::float32;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return Storage::complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return Storage::complex128;
  else
    return Storage::float64;
}

// `count` elements of T from element `first` of a dataset at byte `offset` of
// the open file; false on an error or a file that ends first.
template <class T>
bool read_raw(int fd, std::int64_t offset, std::int64_t first, std::int64_t count, T* out) {
  auto* to = reinterpret_cast<char*>(out);
  auto at = static_cast<off_t>(offset + first * static_cast<std::int64_t>(sizeof(T)));
  for (auto left = static_cast<std::size_t>(count) * sizeof(T); left > 0;) {
    const ssize_t got = ::pread(fd, to, left, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    to += got, at += got, left -= static_cast<std::size_t>(got);
  }
  return true;
}

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// read_entries on every thread, where both datasets can be read without
// HDF5 (which serialises its calls): each thread takes a contiguous share of
// the rows, reads its entries with pread into its own staging pieces, checks
// them there and widens them into place. The first bad entry in file order
// is named as read_entries names it. Returns the first row to canonicalise;
// nothing where the datasets need HDF5.
template <class Index, class Value, class Rows>
std::optional<std::int64_t> read_entries_in_parallel(const OpenMatrix& m, std::int64_t base, Rows& rows) {
  const std::int64_t at_col = raw_offset(m.indices, storage_for<Index>());
  const std::int64_t at_val = raw_offset(m.data, storage_for<Value>());
  if (at_col < 0 || at_val < 0) return std::nullopt;
  const FileDescriptor file{::open(m.where.path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return std::nullopt;
  const std::int64_t local_rows = rows.local_rows(), nnz = rows.row_offsets.back();
  resize_for_parallel_fill(rows.col_indices, static_cast<std::size_t>(nnz));
  resize_for_parallel_fill(rows.values, static_cast<std::size_t>(nnz));
  // The first row out of order, and the first piece (by its first entry) unread or holding a bad entry.
  std::int64_t unsorted = local_rows, unread_col = nnz, unread_val = nnz, bad = nnz;
#pragma omp parallel reduction(min : unsorted, unread_col, unread_val, bad)
  {
    const auto [first_row, last_row] = thread_share(local_rows);
    const std::int64_t begin = rows.row_offsets[first_row], end = rows.row_offsets[last_row];
    const std::int64_t size = std::min(end - begin, kPieceEntries);
    const auto col = std::make_unique_for_overwrite<Index[]>(static_cast<std::size_t>(size));
    const auto val = std::make_unique_for_overwrite<Value[]>(static_cast<std::size_t>(size));
    EntryCheck check(m, rows, first_row);
    for (std::int64_t first = begin; first < end; first += kPieceEntries) {
      const std::int64_t n = std::min(kPieceEntries, end - first);
      if (!read_raw(file.fd, at_col, base + first, n, col.get())) {
        unread_col = first;
        break;
      }
      if (!read_raw(file.fd, at_val, base + first, n, val.get())) {
        unread_val = first;
        break;
      }
      if (!check.valid(n, col.get(), val.get())) {
        bad = first;
        break;
      }
      check.track_order(first, n, col.get());
      std::copy(col.get(), col.get() + n, rows.col_indices.data() + first);
      std::copy(val.get(), val.get() + n, rows.values.data() + first);
    }
    unsorted = check.unsorted_from();
  }
  if (unread_col < nnz && unread_col <= bad) fail_read(m.indices, m.where, base, nnz);
  if (unread_val < nnz && unread_val <= bad) fail_read(m.data, m.where, base, nnz);
  if (bad < nnz) {
    // The first thread with a bad piece holds the first bad entry: name it.
    const std::int64_t n = std::min(kPieceEntries, nnz - bad);
    const auto col = std::make_unique_for_overwrite<Index[]>(static_cast<std::size_t>(n));
    const auto val = std::make_unique_for_overwrite<Value[]>(static_cast<std::size_t>(n));
    if (!read_raw(file.fd, at_col, base + bad, n, col.get())) fail_read(m.indices, m.where, base, nnz);
    if (!read_raw(file.fd, at_val, base + bad, n, val.get())) fail_read(m.data, m.where, base, nnz);
    EntryCheck(m, rows).report(bad, n, col.get(), val.get());
  }
  return unsorted;
}

template <class Index, class Value, class Rows>
std::int64_t read_entries_fastest(const OpenMatrix& m, std::int64_t base, Rows& rows) {
  if (const std::optional<std::int64_t> unsorted = read_entries_in_parallel<Index, Value>(m, base, rows))
    return *unsorted;
  return read_entries<Index, Value>(m, base, rows);
}

// Real values into real or complex rows (imaginary parts 0), complex ones into complex rows.
template <class Index, class Rows>
std::int64_t read_entries_as(const OpenMatrix& m, std::int64_t base, Rows& rows) {
  if constexpr (is_complex_v<typename decltype(Rows::values)::value_type>) {
    if (m.data.complex_part == 4) return read_entries_fastest<Index, std::complex<float>>(m, base, rows);
    if (m.data.complex_part == 8) return read_entries_fastest<Index, std::complex<double>>(m, base, rows);
  }
  return m.data.storage == Storage::float32 ? read_entries_fastest<Index, float>(m, base, rows)
                                            : read_entries_fastest<Index, double>(m, base, rows);
}

template <class Rows>
Rows read_rows(const std::string& path, const std::string& group, std::int64_t row_begin, std::int64_t row_end) {
  const OpenMatrix m = open_matrix(path, group);
  if constexpr (!is_complex_v<typename decltype(Rows::values)::value_type>) {
    if (m.data.complex_part > 0)
      fail_input(path, ": ", m.data.name, " holds complex values (a compound of r and i), which a real matrix ",
                 "cannot take (their imaginary parts would be lost)");
  }
  if (row_begin < 0 || row_begin > row_end || row_end > m.info.rows)
    fail_input(path, ": rows [", row_begin, ", ", row_end, ") are outside the matrix's ", m.info.rows, " rows");

  Rows rows;
  rows.global_rows = m.info.rows;
  rows.global_cols = m.info.cols;
  rows.first_row = row_begin;
  const OffsetRange range = read_offsets(m, row_begin, row_end, rows.row_offsets);
  if (range.first < 0 || range.last > m.info.nnz)
    fail_input(path, ": ", m.indptr.name, " holds offsets outside 0..", m.info.nnz, " in rows [", row_begin, ", ",
               row_end, ")");

  const std::int64_t base = range.first;
  const std::int64_t unsorted = m.indices.storage == Storage::int32 ? read_entries_as<std::int32_t>(m, base, rows)
                                                                    : read_entries_as<std::int64_t>(m, base, rows);
  sort_and_sum_duplicates(rows, unsorted);  // scipy allows unsorted and repeated columns
  return rows;
}

}  // namespace

Hdf5CsrInfo read_hdf5_csr_info(const std::string& path, const std::string& group) {
  return open_matrix(path, group).info;
}

std::vector<std::int64_t> read_hdf5_row_offsets(const std::string& path, const std::string& group) {
  const OpenMatrix m = open_matrix(path, group);
  std::vector<std::int64_t> offsets;
  read_offsets(m, 0, m.info.rows, offsets);  // with the end points checked, monotone bounds every entry
  return offsets;
}

CsrRows read_hdf5_csr_rows(const std::string& path, const std::string& group, std::int64_t row_begin,
                           std::int64_t row_end) {
  return read_rows<CsrRows>(path, group, row_begin, row_end);
}

ComplexCsrRows read_hdf5_complex_csr_rows(const std::string& path, const std::string& group, std::int64_t row_begin,
                                          std::int64_t row_end) {
  return read_rows<ComplexCsrRows>(path, group, row_begin, row_end);
}

}  // namespace blockeigs::io
