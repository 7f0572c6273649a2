// RAII for HDF5 identifiers and the naming of groups, shared by the HDF5
// readers and writers.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace blockeigs::io {

// Owns one HDF5 identifier; the closing call depends on the kind of object.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { close(); }

  hid_t get() const { return id_; }
  // Gives up ownership: the caller (or HDF5's own shutdown) closes it.
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  bool valid() const { return id_ >= 0; }
  // Closing a file flushes it, so a writer must see this result.
  herr_t close() {
    herr_t status = 0;
    if (id_ >= 0) status = closer_(std::exchange(id_, H5I_INVALID_HID));
    return status;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// "/A", "A" and "/A/" all name the group /A; "/" is the root group.
inline std::string normalize_group(const std::string& group) {
  std::string name = group.starts_with('/') ? group : "/" + group;
  while (name.size() > 1 && name.ends_with('/')) name.pop_back();
  return name;
}

// File and group of one matrix, for messages.
struct Where {
  std::string path;
  std::string group;
  std::string member(std::string_view name) const { return (group == "/" ? group : group + "/") + std::string(name); }
};

// Our messages replace HDF5's own error stack printout.
inline void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

// Opens an existing file for reading, with the user's-terms messages for a
// missing file, a directory, a non-HDF5 or a truncated file.
inline Id open_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail_input(path, ": no such file");
  if (std::filesystem::is_directory(path, ec)) fail_input(path, ": is a directory, not a file");
  silence_hdf5_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) fail_input(path, ": not an HDF5 file (or truncated)");
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) fail_input(path, ": cannot open: not an HDF5 file (or truncated, or damaged)");
  return file;
}

// A scalar string attribute of `object` (the group or file `owner` of file
// `path`, for messages), fixed- or variable-length (h5py writes the latter);
// nullopt where it is missing.
inline std::optional<std::string> read_string_attribute(const Id& object, const char* name, const std::string& path,
                                                        const std::string& owner) {
  if (H5Aexists(object.get(), name) <= 0) return std::nullopt;
  const Id attribute(H5Aopen(object.get(), name, H5P_DEFAULT), H5Aclose);
  const Id type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID, H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING)
    fail_input(path, ": attribute '", name, "' of ", owner, " is not a string");

  std::string text;
  bool read_ok = false;
  if (H5Tis_variable_str(type.get()) > 0) {
    const Id memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    read_ok = H5Aread(attribute.get(), memory.get(), &value) >= 0;
    if (read_ok && value) text = value;
    if (value) H5free_memory(value);
  } else {
    text.resize(H5Tget_size(type.get()));
    read_ok = H5Aread(attribute.get(), type.get(), text.data()) >= 0;
    // Fixed-length strings are padded with NULs or spaces.
    while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  }
  if (!read_ok) fail_input(path, ": cannot read attribute '", name, "' of ", owner);
  return text;
}

// The byte offset in the file of a dataset's elements where they lie in the
// file itself, contiguous and allocated (read or written there without HDF5);
// -1 otherwise (chunked or compressed, external, not allocated).
inline std::int64_t contiguous_offset(hid_t dataset) {
  const Id create(H5Dget_create_plist(dataset), H5Pclose);
  if (!create.valid() || H5Pget_layout(create.get()) != H5D_CONTIGUOUS || H5Pget_external_count(create.get()) != 0)
    return -1;
  const haddr_t at = H5Dget_offset(dataset);
  return at == HADDR_UNDEF ? -1 : static_cast<std::int64_t>(at);
}

// Complex values as h5py and NumPy store them: a compound of two members of
// one floating-point type, `r` at offset 0 and `i` after it. `real` is
// H5T_NATIVE_FLOAT or H5T_NATIVE_DOUBLE (memory) or an IEEE type (file).
inline Id complex_type(hid_t real) {
  const std::size_t size = H5Tget_size(real);
  Id type(H5Tcreate(H5T_COMPOUND, 2 * size), H5Tclose);
  if (type.valid()) {
    H5Tinsert(type.get(), "r", 0, real);
    H5Tinsert(type.get(), "i", size, real);
  }
  return type;
}

// 4 or 8 (the bytes of a part) where `type` is such a compound, else 0.
inline std::size_t complex_part_bytes(hid_t type) {
  if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return 0;
  std::size_t part = 0;
  for (unsigned m = 0; m < 2; ++m) {
    char* name = H5Tget_member_name(type, m);
    const bool named = name && std::string(name) == (m == 0 ? "r" : "i");
    H5free_memory(name);
    const Id member(H5Tget_member_type(type, m), H5Tclose);
    if (!named || !member.valid() || H5Tget_class(member.get()) != H5T_FLOAT) return 0;
    const std::size_t bytes = H5Tget_size(member.get());
    if ((bytes != 4 && bytes != 8) || (m == 1 && bytes != part) || H5Tget_member_offset(type, m) != m * bytes) return 0;
    part = bytes;
  }
  return part;
}

}  // namespace blockeigs::io
