#include "io/hdf5_csr.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "io/hdf5_handle.hpp"

namespace blockeigs::io {
namespace {

// "/A", "A" and "/A/" all name the group /A; "/" is the root group.
std::string normalize_group(const std::string& group) {
  std::string name = group.starts_with('/') ? group : "/" + group;
  while (name.size() > 1 && name.ends_with('/')) name.pop_back();
  return name;
}

// File and group of one matrix, for messages.
struct Where {
  std::string path;
  std::string group;
  std::string member(std::string_view name) const {
    return (group == "/" ? group : group + "/") + std::string(name);
  }
};

struct Dataset {
  Id id;
  std::string name;  // full path inside the file, for messages
  std::int64_t size = 0;
};

Dataset open_dataset(const Id& group, const Where& where, const char* name, bool allow_float) {
  Dataset set;
  set.name = where.member(name);
  if (H5Lexists(group.get(), name, H5P_DEFAULT) <= 0)
    fail_input(where.path, ": no dataset ", set.name);
  set.id = Id(H5Dopen2(group.get(), name, H5P_DEFAULT), H5Dclose);
  if (!set.id.valid()) fail_input(where.path, ": ", set.name, " is not a dataset");

  const Id space(H5Dget_space(set.id.get()), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != 1)
    fail_input(where.path, ": ", set.name, " must be one-dimensional, but has ", rank,
               " dimensions");
  hsize_t extent = 0;
  H5Sget_simple_extent_dims(space.get(), &extent, nullptr);
  set.size = static_cast<std::int64_t>(extent);

  const Id type(H5Dget_type(set.id.get()), H5Tclose);
  const H5T_class_t type_class = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  const bool ok = type_class == H5T_INTEGER || (allow_float && type_class == H5T_FLOAT);
  if (!ok)
    fail_input(where.path, ": ", set.name, " must hold ",
               allow_float ? "integers or floating-point numbers" : "integers",
               ", but its type is something else");
  return set;
}

// Reads elements [offset, offset + count) of a 1-D dataset, converted by
// HDF5 to the memory type (int32 -> int64, float32 -> double, ...).
template <class T>
void read_range(const Dataset& set, const Where& where, hid_t memory_type, std::int64_t offset,
                std::int64_t count, T* out) {
  if (count == 0) return;
  const Id file_space(H5Dget_space(set.id.get()), H5Sclose);
  const hsize_t start = static_cast<hsize_t>(offset), extent = static_cast<hsize_t>(count);
  const Id memory_space(H5Screate_simple(1, &extent, nullptr), H5Sclose);
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &extent, nullptr) < 0 ||
      H5Dread(set.id.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out) < 0)
    fail_input(where.path, ": ", set.name, ": cannot read entries [", offset, ", ",
               offset + count, ") (is the file damaged or truncated?)");
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
    fail_input(where.path, ": ", where.group,
               " has no shape attribute (expected 'shape' or 'h5sparse_shape')");

  const Id attribute(H5Aopen(group.get(), name, H5P_DEFAULT), H5Aclose);
  const Id space(attribute.valid() ? H5Aget_space(attribute.get()) : H5I_INVALID_HID, H5Sclose);
  const Id type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID, H5Tclose);
  const hssize_t count = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (count != 2 || !type.valid() || H5Tget_class(type.get()) != H5T_INTEGER)
    fail_input(where.path, ": attribute '", name, "' of ", where.group,
               " must hold two integers (rows, columns)");
  std::array<std::int64_t, 2> shape{};
  if (H5Aread(attribute.get(), H5T_NATIVE_INT64, shape.data()) < 0)
    fail_input(where.path, ": cannot read attribute '", name, "' of ", where.group);
  if (shape[0] < 0 || shape[1] < 0)
    fail_input(where.path, ": attribute '", name, "' of ", where.group, " is negative (",
               shape[0], ", ", shape[1], ")");
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

  if (auto format = read_string_attribute(m.group, "h5sparse_format", where.path, where.group); format && *format != "csr")
    fail_input(path, ": ", where.group, " holds a '", *format,
               "' matrix (h5sparse_format); only csr is supported");
  if (auto encoding = read_string_attribute(m.group, "encoding-type", where.path, where.group);
      encoding && *encoding != "csr_matrix")
    fail_input(path, ": ", where.group, " holds a '", *encoding,
               "' (encoding-type); only csr_matrix is supported");

  const auto shape = read_shape(m.group, where);
  m.indptr = open_dataset(m.group, where, "indptr", false);
  m.indices = open_dataset(m.group, where, "indices", false);
  m.data = open_dataset(m.group, where, "data", true);
  m.info = {shape[0], shape[1], m.data.size};

  if (m.indptr.size != shape[0] + 1)
    fail_input(path, ": shape says ", shape[0], " rows but ", m.indptr.name, " has ",
               m.indptr.size, " entries (expected ", shape[0] + 1, ")");
  if (m.indices.size != m.data.size)
    fail_input(path, ": ", m.indices.name, " has ", m.indices.size, " entries but ", m.data.name,
               " has ", m.data.size);
  if (const auto first = read_one_offset(m.indptr, where, 0); first != 0)
    fail_input(path, ": ", m.indptr.name, " starts at ", first, ", not 0");
  if (const auto last = read_one_offset(m.indptr, where, shape[0]); last != m.data.size)
    fail_input(path, ": ", m.indptr.name, " ends at ", last, " but ", m.data.name, " has ",
               m.data.size, " entries");
  return m;
}

void check_monotone(const std::vector<std::int64_t>& offsets, const OpenMatrix& m,
                    std::int64_t first_row) {
  for (std::size_t r = 0; r + 1 < offsets.size(); ++r)
    if (offsets[r + 1] < offsets[r])
      fail_input(m.where.path, ": ", m.indptr.name, " is not monotone at row ",
                 first_row + static_cast<std::int64_t>(r), " (", offsets[r], " then ",
                 offsets[r + 1], ")");
}

}  // namespace

Hdf5CsrInfo read_hdf5_csr_info(const std::string& path, const std::string& group) {
  return open_matrix(path, group).info;
}

std::vector<std::int64_t> read_hdf5_row_offsets(const std::string& path, const std::string& group) {
  const OpenMatrix m = open_matrix(path, group);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(m.info.rows + 1));
  read_range(m.indptr, m.where, H5T_NATIVE_INT64, 0, m.info.rows + 1, offsets.data());
  check_monotone(offsets, m, 0);  // with the end points checked, this bounds every entry
  return offsets;
}

CsrRows read_hdf5_csr_rows(const std::string& path, const std::string& group,
                           std::int64_t row_begin, std::int64_t row_end) {
  const OpenMatrix m = open_matrix(path, group);
  if (row_begin < 0 || row_begin > row_end || row_end > m.info.rows)
    fail_input(path, ": rows [", row_begin, ", ", row_end, ") are outside the matrix's ",
               m.info.rows, " rows");

  CsrRows rows;
  rows.global_rows = m.info.rows;
  rows.global_cols = m.info.cols;
  rows.first_row = row_begin;
  rows.row_offsets.resize(static_cast<std::size_t>(row_end - row_begin + 1));
  read_range(m.indptr, m.where, H5T_NATIVE_INT64, row_begin, row_end - row_begin + 1,
             rows.row_offsets.data());
  check_monotone(rows.row_offsets, m, row_begin);
  const std::int64_t base = rows.row_offsets.front(), stop = rows.row_offsets.back();
  if (base < 0 || stop > m.info.nnz)
    fail_input(path, ": ", m.indptr.name, " holds offsets outside 0..", m.info.nnz,
               " in rows [", row_begin, ", ", row_end, ")");
  for (auto& offset : rows.row_offsets) offset -= base;

  rows.col_indices.resize(static_cast<std::size_t>(stop - base));
  rows.values.resize(static_cast<std::size_t>(stop - base));
  read_range(m.indices, m.where, H5T_NATIVE_INT64, base, stop - base, rows.col_indices.data());
  read_range(m.data, m.where, H5T_NATIVE_DOUBLE, base, stop - base, rows.values.data());

  for (std::int64_t r = 0; r < rows.local_rows(); ++r)
    for (std::int64_t p = rows.row_offsets[r]; p < rows.row_offsets[r + 1]; ++p) {
      const std::int64_t col = rows.col_indices[p];
      if (col < 0 || col >= m.info.cols)
        fail_input(path, ": ", m.indices.name, ": row ", row_begin + r, " has column ", col,
                   ", but the matrix has ", m.info.cols, " columns");
      if (!std::isfinite(rows.values[p]))
        fail_input(path, ": ", m.data.name, ": row ", row_begin + r, " holds ", rows.values[p],
                   " (column ", col, ")");
    }
  sort_and_sum_duplicates(rows);  // scipy allows unsorted and repeated columns
  return rows;
}

namespace {

void write_dataset(const Id& group, const Where& where, const char* name, hid_t file_type,
                   hid_t memory_type, std::int64_t count, const void* values) {
  const hsize_t extent = static_cast<hsize_t>(count);
  const Id space(H5Screate_simple(1, &extent, nullptr), H5Sclose);
  const Id set(space.valid() ? H5Dcreate2(group.get(), name, file_type, space.get(), H5P_DEFAULT,
                                          H5P_DEFAULT, H5P_DEFAULT)
                             : H5I_INVALID_HID,
               H5Dclose);
  if (!set.valid()) fail_input(where.path, ": cannot create dataset ", where.member(name));
  if (count > 0 && H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
    fail_input(where.path, ": cannot write dataset ", where.member(name));
}

constexpr std::array<const char*, 3> kCsrDatasets{"indptr", "indices", "data"};

// Whether `file` holds the matrix group of `where` (for the root group: any of its datasets).
bool holds(const Id& file, const Where& where) {
  if (where.group != "/") return H5Lexists(file.get(), where.group.c_str(), H5P_DEFAULT) > 0;
  for (const char* name : kCsrDatasets)
    if (H5Lexists(file.get(), name, H5P_DEFAULT) > 0) return true;
  return false;
}

// Removes the matrix group of `where` from `file` (the root's datasets and shape for "/").
void remove_matrix(const Id& file, const Where& where) {
  if (where.group != "/") {
    if (H5Ldelete(file.get(), where.group.c_str(), H5P_DEFAULT) < 0)
      fail_input(where.path, ": cannot remove the old ", where.group);
    return;
  }
  for (const char* name : kCsrDatasets)
    if (H5Lexists(file.get(), name, H5P_DEFAULT) > 0 && H5Ldelete(file.get(), name, H5P_DEFAULT) < 0)
      fail_input(where.path, ": cannot remove the old /", name);
  if (H5Aexists(file.get(), "shape") > 0) H5Adelete(file.get(), "shape");
}

Id open_existing(const std::string& path) {
  silence_hdf5_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0)
    fail_input(path, ": exists but is not an HDF5 file (remove it, or choose another output name)");
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) fail_input(path, ": cannot open it as an HDF5 file");
  return file;
}

// Writes the matrix into `temporary`: a new file, or (fresh == false) a copy
// of the existing one that the matrix is added to.
void write_file(const std::string& temporary, const Where& where, const CsrRows& whole, bool fresh,
                ExistingFile mode) {
  silence_hdf5_errors();
  Id file(fresh ? H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                : H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT),
          H5Fclose);
  if (!file.valid())
    fail_input(where.path, ": cannot create ", temporary,
               " (does the directory exist, and may we write there?)");
  if (!fresh && holds(file, where)) {
    if (mode != ExistingFile::replace_group) fail_input(where.path, ": already holds ", where.group);
    remove_matrix(file, where);
  }
  {
    Id group;
    if (where.group == "/") {
      group = Id(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose);
    } else {
      const Id links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
      H5Pset_create_intermediate_group(links.get(), 1);
      group = Id(H5Gcreate2(file.get(), where.group.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Gclose);
    }
    if (!group.valid()) fail_input(where.path, ": cannot create group ", where.group);

    // int32 column indices halve the file whenever they fit.
    const bool narrow = whole.global_cols <= std::int64_t{1} << 31;
    write_dataset(group, where, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64,
                  static_cast<std::int64_t>(whole.row_offsets.size()), whole.row_offsets.data());
    write_dataset(group, where, "indices", narrow ? H5T_STD_I32LE : H5T_STD_I64LE,
                  H5T_NATIVE_INT64, whole.nnz(), whole.col_indices.data());
    write_dataset(group, where, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, whole.nnz(),
                  whole.values.data());

    const std::array<std::int64_t, 2> shape{whole.global_rows, whole.global_cols};
    const hsize_t two = 2;
    const Id space(H5Screate_simple(1, &two, nullptr), H5Sclose);
    const Id attribute(H5Acreate2(group.get(), "shape", H5T_STD_I64LE, space.get(), H5P_DEFAULT,
                                  H5P_DEFAULT),
                       H5Aclose);
    if (!attribute.valid() || H5Awrite(attribute.get(), H5T_NATIVE_INT64, shape.data()) < 0)
      fail_input(where.path, ": cannot write attribute 'shape' of ", where.group);
  }
  if (file.close() < 0) fail_input(where.path, ": cannot finish writing ", temporary);
}

}  // namespace

bool hdf5_file_holds(const std::string& path, const std::string& group) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return false;
  return holds(open_existing(path), Where{path, normalize_group(group)});
}

void write_hdf5_csr(const std::string& path, const std::string& group, const CsrRows& whole,
                    ExistingFile mode) {
  if (whole.first_row != 0 || whole.local_rows() != whole.global_rows)
    fail_input(path, ": write_hdf5_csr needs a whole matrix, got rows [", whole.first_row, ", ",
               whole.first_row + whole.local_rows(), ") of ", whole.global_rows);
  validate(whole, path);
  // An empty matrix may come without offsets; the file always has rows + 1.
  CsrRows padded;
  const CsrRows* source = &whole;
  if (whole.row_offsets.empty()) {
    padded.global_cols = whole.global_cols;
    padded.row_offsets = {0};
    source = &padded;
  }

  const Where where{path, normalize_group(group)};
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  try {
    std::error_code error;
    const bool fresh = mode == ExistingFile::replace || !std::filesystem::exists(path, error);
    if (!fresh) {
      open_existing(path);  // refuses a file that is not HDF5 before copying it
      std::filesystem::copy_file(path, temporary, std::filesystem::copy_options::overwrite_existing);
    }
    write_file(temporary, where, *source, fresh, mode);
    std::filesystem::rename(temporary, path);
  } catch (const std::filesystem::filesystem_error& e) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    fail_input(path, ": cannot move the finished file into place: ", e.code().message());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw;
  }
}

}  // namespace blockeigs::io
