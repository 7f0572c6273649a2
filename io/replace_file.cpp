#include "io/replace_file.hpp"

namespace blockeigs::io {

std::filesystem::path replaced_name(const std::filesystem::path& target) {
  std::filesystem::path aside = target;
  aside += ".replaced";
  return aside;
}

void replace_file(const std::filesystem::path& finished, const std::filesystem::path& target,
                  std::error_code& error) noexcept {
  namespace fs = std::filesystem;
  error.clear();
  std::error_code ignored;
  const fs::path aside = replaced_name(target);
  // Only a regular file moves aside; anything else (a directory) makes the
  // final rename fail as it would have.
  bool moved = false;
  if (fs::is_regular_file(fs::symlink_status(target, ignored))) {
    fs::remove(aside, ignored);  // a leftover of a run that was killed here
    fs::rename(target, aside, error);
    if (error) return;
    moved = true;
  }
  fs::rename(finished, target, error);
  if (error) {
    if (moved) fs::rename(aside, target, ignored);
    return;
  }
  if (moved) fs::remove(aside, ignored);
}

}  // namespace blockeigs::io
