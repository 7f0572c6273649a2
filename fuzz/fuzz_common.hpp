// Shared by the libFuzzer targets: a scratch file per process (the readers
// take paths) and the rule that a reader may refuse input only with our
// typed errors; anything else (a crash, a sanitizer report, another
// exception type escaping) is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace blockeigs::fuzz {

inline std::string scratch_path(const char* suffix) {
  const auto dir = std::filesystem::temp_directory_path();
  return (dir / ("blockeigs-fuzz-" + std::to_string(::getpid()) + suffix)).string();
}

inline void write_bytes(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

}  // namespace blockeigs::fuzz
