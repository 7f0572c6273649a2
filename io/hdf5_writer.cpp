#include "io/hdf5_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.hpp"
#include "io/hdf5_handle.hpp"
#include "io/replace_file.hpp"

namespace blockeigs::io {
namespace {

void check(herr_t status, const std::string& path, const std::string& what) {
  if (status < 0) fail_input(path, ": could not ", what);
}

hid_t checked(hid_t id, const std::string& path, const std::string& what) {
  if (id < 0) fail_input(path, ": could not ", what);
  return id;
}

// Creates the parent groups of "/a/b/name" as needed.
hid_t link_properties() {
  hid_t properties = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(properties, 1);
  return properties;
}

}  // namespace

std::string temporary_output_name(const std::string& path) { return path + ".partial"; }

Hdf5Writer::Hdf5Writer(const std::string& path, bool create) : path_(path) {
  silence_hdf5_errors();
  const std::string file = temporary_output_name(path);
  // A leftover of a killed run is removed, not truncated: ext4 writes a
  // truncated and rewritten file to the disk at its close (auto_da_alloc).
  std::error_code ignored;
  if (create) std::filesystem::remove(file, ignored);
  file_ = create ? H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                 : H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file_ < 0) fail_input(path, ": cannot ", create ? "create" : "open", " the output file (", file, ")");
}

bool Hdf5Writer::parallel_io_available() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

Hdf5Writer::Hdf5Writer(const std::string& path, MPI_Comm comm) : path_(path), parallel_(true) {
  silence_hdf5_errors();
#ifdef H5_HAVE_PARALLEL
  const std::string file = temporary_output_name(path);
  Id access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL);
  file_ = H5Fopen(file.c_str(), H5F_ACC_RDWR, access.get());
  if (file_ < 0) fail_input(path, ": cannot open the output file for parallel writing (", file, ")");
#else
  (void)comm;
  throw Error("Hdf5Writer: this HDF5 library has no parallel I/O");
#endif
}

Hdf5Writer::~Hdf5Writer() {
  if (file_ >= 0) H5Fclose(file_);
}

void Hdf5Writer::close() {
  if (file_ >= 0) check(H5Fclose(static_cast<hid_t>(std::exchange(file_, -1))), path_, "close the output file");
}

void Hdf5Writer::write(const std::string& name, const std::vector<double>& values) {
  write_matrix(name, static_cast<std::int64_t>(values.size()), 1, values);
}

void Hdf5Writer::write(const std::string& name, const std::vector<std::int64_t>& values) {
  const hsize_t dims[1] = {values.size()};
  Id space(checked(H5Screate_simple(1, dims, nullptr), path_, "make a dataspace"), H5Sclose);
  Id lcpl(link_properties(), H5Pclose);
  Id set(checked(H5Dcreate2(file_, name.c_str(), H5T_STD_I64LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                 path_, "create " + name),
         H5Dclose);
  if (!values.empty())
    check(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), path_, "write " + name);
}

void Hdf5Writer::write_matrix(const std::string& name, std::int64_t rows, std::int64_t cols,
                              const std::vector<double>& values) {
  create_matrix(name, rows, cols);
  write_rows(name, 0, rows, cols, values.data());
}

void Hdf5Writer::create_matrix(const std::string& name, std::int64_t rows, std::int64_t cols, bool complex) {
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
  Id space(checked(H5Screate_simple(cols == 1 ? 1 : 2, dims, nullptr), path_, "make a dataspace"), H5Sclose);
  Id lcpl(link_properties(), H5Pclose);
  // Contiguous, its space allocated now (ranks that later write rows through
  // MPI-IO must not race to allocate it), never filled: the rows are written
  // once each, and a fill would write the whole dataset twice.
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
  Id type(complex ? complex_type(H5T_IEEE_F64LE) : Id(H5Tcopy(H5T_IEEE_F64LE), H5Tclose));
  Id set(checked(H5Dcreate2(file_, name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), path_,
                 "create " + name),
         H5Dclose);
}

void Hdf5Writer::write_rows(const std::string& name, std::int64_t first_row, std::int64_t rows, std::int64_t cols,
                            const double* data) {
  Rows open = open_rows(name);
  if (rows > 0 && open.cols_ != cols) fail_input(path_, ": ", name, " has ", open.cols_, " columns, not ", cols);
  open.write(first_row, rows, data);
}

Hdf5Writer::Rows Hdf5Writer::open_rows(const std::string& name) const { return Rows(*this, name); }

std::int64_t Hdf5Writer::matrix_offset(const std::string& name) const {
  Id set(checked(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), path_, "open " + name), H5Dclose);
  if (H5Dget_storage_size(set.get()) == 0)
    return 0;  // no rows or no columns (an empty window's pairs): nothing to write
  const std::int64_t at = contiguous_offset(set.get());
  if (at < 0) throw LibraryError(path_ + ": " + name + " has no contiguous space in the file to write rows into");
  return at;
}

struct Hdf5Writer::Rows::Handles {
  Id set, file_space, transfer, memory_type;  // memory_type: double, or a complex double's pair
  int dims = 2;
};

Hdf5Writer::Rows::Rows(const Hdf5Writer& writer, const std::string& name)
    : path_(writer.path_), name_(name), handles_(std::make_unique<Handles>()) {
  Handles& h = *handles_;
  h.set = Id(checked(H5Dopen2(writer.file_, name.c_str(), H5P_DEFAULT), path_, "open " + name), H5Dclose);
  h.file_space = Id(checked(H5Dget_space(h.set.get()), path_, "read the shape of " + name), H5Sclose);
  h.dims = H5Sget_simple_extent_ndims(h.file_space.get());
  hsize_t dims[2] = {0, 1};
  H5Sget_simple_extent_dims(h.file_space.get(), dims, nullptr);
  cols_ = h.dims == 2 ? static_cast<std::int64_t>(dims[1]) : 1;
  Id file_type(checked(H5Dget_type(h.set.get()), path_, "read the type of " + name), H5Tclose);
  h.memory_type = H5Tget_class(file_type.get()) == H5T_COMPOUND ? complex_type(H5T_NATIVE_DOUBLE)
                                                                : Id(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
  h.transfer = Id(checked(H5Pcreate(H5P_DATASET_XFER), path_, "make transfer properties"), H5Pclose);
  // Each rank writes its own contiguous rows: independent MPI-IO writes (a
  // collective one would only add its two-phase exchange).
#ifdef H5_HAVE_PARALLEL
  if (writer.parallel_) H5Pset_dxpl_mpio(h.transfer.get(), H5FD_MPIO_INDEPENDENT);
#endif
}

Hdf5Writer::Rows::Rows(Rows&&) noexcept = default;
Hdf5Writer::Rows::~Rows() = default;

void Hdf5Writer::Rows::write(std::int64_t first_row, std::int64_t rows, const double* data) {
  if (rows == 0 || cols_ == 0) return;
  const Handles& h = *handles_;
  const hsize_t start[2] = {static_cast<hsize_t>(first_row), 0};
  const hsize_t count[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols_)};
  check(H5Sselect_hyperslab(h.file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), path_,
        "select rows of " + name_);
  Id memory(checked(H5Screate_simple(h.dims, count, nullptr), path_, "make a dataspace"), H5Sclose);
  check(H5Dwrite(h.set.get(), h.memory_type.get(), memory.get(), h.file_space.get(), h.transfer.get(), data), path_,
        "write " + name_);
}

void Hdf5Writer::write_string(const std::string& name, const std::string& text) {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(1, text.size()));
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id lcpl(link_properties(), H5Pclose);
  Id set(checked(H5Dcreate2(file_, name.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), path_,
                 "create " + name),
         H5Dclose);
  check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.c_str()), path_, "write " + name);
}

void Hdf5Writer::scalar_attribute(const std::string& object, const std::string& name, std::int64_t file_type,
                                  std::int64_t memory_type, const void* value) {
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(checked(H5Acreate_by_name(file_, object.c_str(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
                  path_, "create attribute " + name),
          H5Aclose);
  check(H5Awrite(attr.get(), memory_type, value), path_, "write attribute " + name);
}

void Hdf5Writer::attribute(const std::string& object, const std::string& name, const std::string& value) {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(1, value.size()));
  scalar_attribute(object, name, type.get(), type.get(), value.c_str());
}

void Hdf5Writer::attribute(const std::string& object, const std::string& name, double value) {
  scalar_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void Hdf5Writer::attribute(const std::string& object, const std::string& name, std::int64_t value) {
  scalar_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

// A boolean as h5py writes one: an int8 enum {FALSE = 0, TRUE = 1}.
void Hdf5Writer::attribute(const std::string& object, const std::string& name, bool value) {
  Id type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
  const std::int8_t no = 0, yes = 1;
  H5Tenum_insert(type.get(), "FALSE", &no);
  H5Tenum_insert(type.get(), "TRUE", &yes);
  const std::int8_t stored = value ? yes : no;
  scalar_attribute(object, name, type.get(), type.get(), &stored);
}

// The datasets are H5T_IEEE_F64LE: the host's doubles are their bytes as they are.
static_assert(std::endian::native == std::endian::little, "raw row writes assume a little-endian host");

RawRowsFile::RawRowsFile(const std::string& path) : path_(path) {
  const std::string file = temporary_output_name(path);
  fd_ = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) fail_input(path, ": cannot open the output file to write rows (", file, "): ", std::strerror(errno));
}

RawRowsFile::~RawRowsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RawRowsFile::write(std::int64_t offset, const void* data, std::int64_t bytes) {
  const auto* from = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t wrote = ::pwrite(fd_, from, static_cast<std::size_t>(bytes), static_cast<off_t>(offset));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0)
      fail_input(path_, ": could not write the output's rows: ", wrote < 0 ? std::strerror(errno) : "nothing written");
    from += wrote;
    offset += wrote;
    bytes -= wrote;
  }
}

void RawRowsFile::close() {
  if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0)
    fail_input(path_, ": could not finish writing the output's rows: ", std::strerror(errno));
}

void check_output_writable(const std::string& path, const std::string& key) {
  if (std::filesystem::is_directory(path)) fail_input(key, " ", path, " is a directory, not a file name");
  { Hdf5Writer probe(path, true); }
  discard_output(path);
}

void commit_output(const std::string& path) {
  std::error_code error;
  replace_file(temporary_output_name(path), path, error);
  if (error) fail_input(path, ": cannot move the finished output into place: ", error.message());
}

void discard_output(const std::string& path) noexcept {
  std::error_code ignored;
  std::filesystem::remove(temporary_output_name(path), ignored);
}

}  // namespace blockeigs::io
