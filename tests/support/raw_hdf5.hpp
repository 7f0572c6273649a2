// HDF5 CSR files written field by field for the reader's tests (tests/unit),
// so that a test can make any one part wrong or store any type.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/csr_rows.hpp"

namespace blockeigs::test {

// A CSR group written field by field, so a test can make any one part wrong.
struct RawCsr {
  std::vector<std::int64_t> indptr, indices;
  std::vector<double> data;
  std::vector<std::int64_t> shape;  // empty: no shape attribute
  std::string shape_name = "shape";
  hid_t indptr_type = H5T_STD_I64LE, indices_type = H5T_STD_I32LE, data_type = H5T_IEEE_F64LE;
  std::vector<std::string> omit;                             // datasets left out
  std::vector<std::pair<std::string, std::string>> strings;  // string attributes of the group
  bool variable_length_strings = true;                       // as h5py writes them
};

inline RawCsr raw_from(const CsrRows& m) {
  RawCsr raw;
  raw.indptr = m.row_offsets;
  raw.indices = m.col_indices;
  raw.data = m.values;
  raw.shape = {m.global_rows, m.global_cols};
  return raw;
}

// A 1-D dataset of `count` values; chunk > 0 makes it chunked (that many
// elements a chunk) and deflated.
inline void write_dataset(hid_t group, const char* name, hid_t file_type, hid_t memory_type, std::size_t count,
                          const void* values, hsize_t chunk = 0) {
  const hsize_t extent = count;
  const hid_t space = H5Screate_simple(1, &extent, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  if (chunk > 0) {
    const hsize_t size = std::min<hsize_t>(chunk, std::max<hsize_t>(extent, 1));
    H5Pset_chunk(create, 1, &size);
    H5Pset_deflate(create, 1);
  }
  const hid_t set = H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, create, H5P_DEFAULT);
  ASSERT_GE(set, 0) << name;
  if (count > 0) {
    ASSERT_GE(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
  }
  H5Dclose(set);
  H5Pclose(create);
  H5Sclose(space);
}

inline void write_string_attribute(hid_t group, const std::string& name, const std::string& value,
                                   bool variable_length) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, variable_length ? H5T_VARIABLE : value.size());
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(group, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = value.c_str();
  if (variable_length) {
    H5Awrite(attribute, type, &text);
  } else {
    H5Awrite(attribute, type, text);
  }
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

inline void write_raw(const std::string& path, const std::string& group_name, const RawCsr& raw) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t links = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(links, 1);
  const hid_t group = H5Gcreate2(file, group_name.c_str(), links, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(links);
  ASSERT_GE(group, 0);
  auto wanted = [&](const char* name) { return std::find(raw.omit.begin(), raw.omit.end(), name) == raw.omit.end(); };
  if (wanted("indptr"))
    write_dataset(group, "indptr", raw.indptr_type, H5T_NATIVE_INT64, raw.indptr.size(), raw.indptr.data());
  if (wanted("indices"))
    write_dataset(group, "indices", raw.indices_type, H5T_NATIVE_INT64, raw.indices.size(), raw.indices.data());
  if (wanted("data")) write_dataset(group, "data", raw.data_type, H5T_NATIVE_DOUBLE, raw.data.size(), raw.data.data());
  if (!raw.shape.empty()) {
    const hsize_t extent = raw.shape.size();
    const hid_t space = H5Screate_simple(1, &extent, nullptr);
    const hid_t attribute = H5Acreate2(group, raw.shape_name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attribute, H5T_NATIVE_INT64, raw.shape.data());
    H5Aclose(attribute);
    H5Sclose(space);
  }
  for (const auto& [name, value] : raw.strings) write_string_attribute(group, name, value, raw.variable_length_strings);
  H5Gclose(group);
  H5Fclose(file);
}

}  // namespace blockeigs::test
