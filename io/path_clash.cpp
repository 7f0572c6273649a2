#include "io/path_clash.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "core/error.hpp"
#include "io/hdf5_writer.hpp"
#include "io/replace_file.hpp"

namespace blockeigs::io {
namespace {

// The path as it will be opened: absolute, `.` and `..` gone, the links of its
// existing folders resolved.
std::filesystem::path resolved(const std::string& path) {
  std::error_code error;
  std::filesystem::path out = std::filesystem::weakly_canonical(std::filesystem::absolute(path, error), error);
  return error ? std::filesystem::path(path).lexically_normal() : out;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0;
  const bool b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  return resolved(a) == resolved(b);
}

std::vector<std::string> files_written_at(const std::string& path) {
  return {path, temporary_output_name(path), replaced_name(path).string()};
}

std::string read_write_clash(std::span<const KeyedPath> reads, std::span<const KeyedPath> writes) {
  for (const KeyedPath& w : writes) {
    if (w.path.empty()) continue;
    for (const std::string& file : files_written_at(w.path)) {
      for (const KeyedPath& r : reads) {
        if (r.path.empty() || (file == w.path && !w.may_replace.empty() && r.key == w.may_replace)) continue;
        if (!same_file(file, r.path)) continue;
        const std::string what = r.path == file ? "is " : "is the same file as ";
        if (file == w.path)
          return detail::concat(w.key, " ", w.path, " ", what, r.key, " ", r.path,
                                ", which the run reads: writing it would destroy the input (name another file for ",
                                w.key, ")");
        return detail::concat(w.key, " ", w.path, " is written through ", file, ", which ", what, r.key, " ", r.path,
                              ", a file the run reads (name another file for ", w.key, ")");
      }
    }
  }
  for (std::size_t i = 0; i < writes.size(); ++i) {
    for (std::size_t j = i + 1; j < writes.size(); ++j) {
      const KeyedPath& a = writes[i];
      const KeyedPath& b = writes[j];
      if (a.path.empty() || b.path.empty()) continue;
      for (const std::string& fa : files_written_at(a.path))
        for (const std::string& fb : files_written_at(b.path))
          if (same_file(fa, fb))
            return detail::concat(
                a.key, " ", a.path, " and ", b.key, " ", b.path,
                fa == a.path && fb == b.path ? " are the same file" : " write through the same file " + fa,
                ": each would write over the other (name two files)");
    }
  }
  return {};
}

}  // namespace blockeigs::io
