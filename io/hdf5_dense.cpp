#include "io/hdf5_dense.hpp"

#include <cmath>

#include "core/error.hpp"
#include "io/hdf5_handle.hpp"

namespace blockeigs::io {

DenseRows read_hdf5_dense_rows(const std::string& path, const std::string& dataset, std::int64_t row_begin,
                               std::int64_t row_end, std::int64_t expected_rows, DenseValues values) {
  const Id file = open_file(path);
  if (H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) <= 0) fail_input(path, ": no dataset ", dataset);
  const Id set(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail_input(path, ": ", dataset, " is not a dataset");

  const Id type(H5Dget_type(set.get()), H5Tclose);
  const bool complex = type.valid() && complex_part_bytes(type.get()) != 0;
  if (complex && values == DenseValues::real_only)
    fail_input(path, ": ", dataset, " holds complex values, but the matrix is real (a real block is needed here)");
  if (!type.valid() || (!complex && H5Tget_class(type.get()) != H5T_FLOAT))
    fail_input(path, ": ", dataset, " must hold floating-point numbers",
               values == DenseValues::real_only ? "" : " (or complex ones, a compound of r and i)");
  const Id space(H5Dget_space(set.get()), H5Sclose);
  // A vector is one column (the writer stores a one-column block so: a k = 1 result's eigenvectors).
  const int ndims = H5Sget_simple_extent_ndims(space.get());
  if (ndims != 1 && ndims != 2)
    fail_input(path, ": ", dataset, " must be two-dimensional (rows x columns) or a vector (one column)");
  hsize_t dims[2] = {0, 1};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  DenseRows out;
  out.complex = complex;
  out.global_rows = static_cast<std::int64_t>(dims[0]);
  out.cols = static_cast<std::int64_t>(dims[1]);
  if (expected_rows >= 0 && out.global_rows != expected_rows)
    fail_input(path, ": ", dataset, " has ", out.global_rows, " rows, but the matrix has ", expected_rows);
  if (out.cols < 1) fail_input(path, ": ", dataset, " has no columns");
  if (row_begin < 0 || row_end < row_begin || row_end > out.global_rows)
    fail_input(path, ": ", dataset, ": rows [", row_begin, ", ", row_end, ") are outside its ", out.global_rows,
               " rows");

  const std::int64_t rows = row_end - row_begin;
  out.values.resize(static_cast<std::size_t>(rows * out.doubles_per_row()));
  if (rows > 0) {
    const hsize_t start[2] = {static_cast<hsize_t>(row_begin), 0};
    const hsize_t count[2] = {static_cast<hsize_t>(rows), dims[1]};
    const Id memory(H5Screate_simple(ndims, count, nullptr), H5Sclose);
    const Id memory_type = complex ? complex_type(H5T_NATIVE_DOUBLE) : Id(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(set.get(), memory_type.get(), memory.get(), space.get(), H5P_DEFAULT, out.values.data()) < 0)
      fail_input(path, ": ", dataset, ": cannot read rows [", row_begin, ", ", row_end, ") (damaged or truncated?)");
  }
  const std::int64_t per_row = out.doubles_per_row();
  for (std::size_t e = 0; e < out.values.size(); ++e)
    if (!std::isfinite(out.values[e]))
      fail_input(path, ": ", dataset, ": row ", row_begin + std::int64_t(e) / per_row, " column ",
                 (std::int64_t(e) % per_row) / (complex ? 2 : 1),
                 complex ? (e % 2 == 0 ? " (real part)" : " (imaginary part)") : "", " is ", out.values[e],
                 " (values must be finite)");
  return out;
}

std::int64_t read_root_integer(const std::string& path, const std::string& name) {
  const Id file = open_file(path);
  if (H5Aexists(file.get(), name.c_str()) <= 0) fail_input(path, ": no attribute ", name, " at /");
  const Id attribute(H5Aopen(file.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  const Id type(H5Aget_type(attribute.get()), H5Tclose);
  const Id space(H5Aget_space(attribute.get()), H5Sclose);
  std::int64_t value = 0;
  if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.get()) != 1 ||
      H5Aread(attribute.get(), H5T_NATIVE_INT64, &value) < 0)
    fail_input(path, ": attribute ", name, " at / must be an integer");
  return value;
}

std::string read_root_string(const std::string& path, const std::string& name) {
  const Id file = open_file(path);
  const std::optional<std::string> value = read_string_attribute(file, name.c_str(), path, "/");
  if (!value) fail_input(path, ": no attribute ", name, " at /");
  return *value;
}

std::optional<std::string> read_root_string_if_present(const std::string& path, const std::string& name) {
  const Id file = open_file(path);
  return read_string_attribute(file, name.c_str(), path, "/");
}

}  // namespace blockeigs::io
