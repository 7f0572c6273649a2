// Rows written straight into the float64 datasets of a result file that
// Hdf5Writer made (create_matrix: contiguous, allocated; matrix_offset says
// where each starts), with pwrite: every rank its own rows, at once and a
// piece at a time as they are ready, where serial HDF5 takes one writer at a
// time. HDF5's own metadata is written by Hdf5Writer alone.
#pragma once

#include <cstdint>
#include <string>

namespace blockeigs::io {

class RawRowsFile {
 public:
  // Opens the temporary file of the output at `path` (temporary_output_name)
  // for writing; InputError naming `path` where it cannot.
  explicit RawRowsFile(const std::string& path);
  RawRowsFile(const RawRowsFile&) = delete;
  RawRowsFile& operator=(const RawRowsFile&) = delete;
  ~RawRowsFile();

  // `bytes` bytes of `data` at `offset` in the file; InputError naming the
  // path and the reason (a full disk, ...) where they cannot all be written.
  void write(std::int64_t offset, const void* data, std::int64_t bytes);
  void close();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace blockeigs::io
