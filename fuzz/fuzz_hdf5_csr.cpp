// libFuzzer target: the HDF5 CSR reader on files written from the input.
// The bytes choose the layout (shape attribute and its name, the datasets
// present, their types and lengths) and the contents of indptr, indices and
// data; the target writes that file with HDF5's C API and reads it as a
// rank does (info, row offsets, then a row range). HDF5 itself is not the
// target: the file is always well-formed HDF5, its CSR contents are not.
// Refusals must be InputError.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_common.hpp"
#include "io/hdf5_csr.hpp"

namespace {

struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t u8() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  std::int64_t i64() {  // small values mostly, occasionally extreme
    const std::uint8_t tag = u8();
    if (tag < 200) return static_cast<std::int64_t>(tag % 40) - 4;
    std::int64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return v;
  }
  double f64() {
    const std::uint8_t tag = u8();
    if (tag < 230) return static_cast<double>(tag) - 100.0;
    double v = 0;
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | u8();
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
};

void write_set(hid_t group, const char* name, hid_t file_type, hid_t memory_type, const void* values, hsize_t count) {
  const hid_t space = H5Screate_simple(1, &count, nullptr);
  const hid_t set = H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (count) H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(set);
  H5Sclose(space);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  static const std::string path = blockeigs::fuzz::scratch_path(".h5");
  Bytes in{data, size};
  const std::uint8_t layout = in.u8();
  const std::int64_t rows = in.i64(), cols = in.i64();
  const std::size_t n_indptr = in.u8() % 64, n_indices = in.u8() % 128, n_data = in.u8() % 128;
  std::vector<std::int64_t> indptr(n_indptr), indices(n_indices);
  std::vector<double> values(n_data);
  for (auto& v : indptr) v = in.i64();
  for (auto& v : indices) v = in.i64();
  for (auto& v : values) v = in.f64();

  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) std::abort();
  const hid_t group = H5Gcreate2(file, "A", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (!(layout & 1)) {
    const std::int64_t shape[2] = {rows, cols};
    const hsize_t two = (layout & 2) ? 2 : 1 + (layout >> 7);  // sometimes a short or long shape
    const hid_t space = H5Screate_simple(1, &two, nullptr);
    const char* name = (layout & 4) ? "h5sparse_shape" : "shape";
    const hid_t attr = H5Acreate2(group, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    std::int64_t padded[3] = {shape[0], shape[1], 7};
    H5Awrite(attr, H5T_NATIVE_INT64, padded);
    H5Aclose(attr);
    H5Sclose(space);
  }
  if (!(layout & 8)) write_set(group, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, indptr.data(), n_indptr);
  if (!(layout & 16))
    write_set(group, "indices", (layout & 32) ? H5T_STD_I32LE : H5T_STD_I64LE, H5T_NATIVE_INT64, indices.data(),
              n_indices);
  if (layout != 0xff)
    write_set(group, "data", (layout & 64) ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), n_data);
  H5Gclose(group);
  H5Fclose(file);

  try {
    const auto info = blockeigs::io::read_hdf5_csr_info(path, "/A");
    const auto offsets = blockeigs::io::read_hdf5_row_offsets(path, "/A");
    const std::int64_t begin = info.rows > 0 ? static_cast<std::int64_t>(in.u8()) % info.rows : 0;
    (void)offsets;
    (void)blockeigs::io::read_hdf5_csr_rows(path, "/A", begin, info.rows);
  } catch (const blockeigs::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
