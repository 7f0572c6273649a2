#include "io/raw_rows_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "io/hdf5_writer.hpp"

namespace blockeigs::io {

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

}  // namespace blockeigs::io
