// RAII for HDF5 identifiers, shared by the HDF5 readers and writers.
#pragma once

#include <hdf5.h>

#include <utility>

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

// Our messages replace HDF5's own error stack printout.
inline void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

}  // namespace blockeigs::io
