// The HDF5 CSR writer (hdf5_csr.hpp): a whole matrix into a new or an
// existing file, through a temporary file that is renamed into place.
#include "io/hdf5_csr.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/scalar.hpp"
#include "core/csr_rows.hpp"
#include "io/hdf5_handle.hpp"
#include "io/replace_file.hpp"

namespace blockeigs::io {
namespace {

void write_dataset(const Id& group, const Where& where, const char* name, hid_t file_type, hid_t memory_type,
                   std::int64_t count, const void* values) {
  const hsize_t extent = static_cast<hsize_t>(count);
  const Id space(H5Screate_simple(1, &extent, nullptr), H5Sclose);
  const Id set(space.valid()
                   ? H5Dcreate2(group.get(), name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
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
template <class Rows>
void write_file(const std::string& temporary, const Where& where, const Rows& whole, bool fresh, ExistingFile mode) {
  silence_hdf5_errors();
  Id file(fresh ? H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                : H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT),
          H5Fclose);
  if (!file.valid())
    fail_input(where.path, ": cannot create ", temporary, " (does the directory exist, and may we write there?)");
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
      group = Id(H5Gcreate2(file.get(), where.group.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    }
    if (!group.valid()) fail_input(where.path, ": cannot create group ", where.group);

    // int32 column indices halve the file whenever they fit.
    const bool narrow = whole.global_cols <= std::int64_t{1} << 31;
    write_dataset(group, where, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64,
                  static_cast<std::int64_t>(whole.row_offsets.size()), whole.row_offsets.data());
    write_dataset(group, where, "indices", narrow ? H5T_STD_I32LE : H5T_STD_I64LE, H5T_NATIVE_INT64, whole.nnz(),
                  whole.col_indices.data());
    if constexpr (is_complex_v<typename decltype(Rows::values)::value_type>)
      write_dataset(group, where, "data", complex_type(H5T_IEEE_F64LE).get(), complex_type(H5T_NATIVE_DOUBLE).get(),
                    whole.nnz(), whole.values.data());
    else
      write_dataset(group, where, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, whole.nnz(), whole.values.data());

    const std::array<std::int64_t, 2> shape{whole.global_rows, whole.global_cols};
    const hsize_t two = 2;
    const Id space(H5Screate_simple(1, &two, nullptr), H5Sclose);
    const Id attribute(H5Acreate2(group.get(), "shape", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
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

namespace {

template <class Rows>
void write_rows(const std::string& path, const std::string& group, const Rows& whole, ExistingFile mode) {
  if (whole.first_row != 0 || whole.local_rows() != whole.global_rows)
    fail_input(path, ": write_hdf5_csr needs a whole matrix, got rows [", whole.first_row, ", ",
               whole.first_row + whole.local_rows(), ") of ", whole.global_rows);
  validate(whole, path);
  // An empty matrix may come without offsets; the file always has rows + 1.
  Rows padded;
  const Rows* source = &whole;
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
    std::error_code moved;
    replace_file(temporary, path, moved);
    if (moved) throw std::filesystem::filesystem_error("rename", temporary, path, moved);
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

}  // namespace

void write_hdf5_csr(const std::string& path, const std::string& group, const CsrRows& whole, ExistingFile mode) {
  write_rows(path, group, whole, mode);
}

void write_hdf5_csr(const std::string& path, const std::string& group, const ComplexCsrRows& whole, ExistingFile mode) {
  write_rows(path, group, whole, mode);
}

}  // namespace blockeigs::io
