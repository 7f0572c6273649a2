// Moving a finished file into place over an older one.
#pragma once

#include <filesystem>
#include <system_error>

namespace blockeigs::io {

// Renames `finished` to `target`. An existing regular file at `target` is
// first renamed aside (to target + ".replaced") and removed once the new one
// is in place: a rename over an existing file makes ext4 (auto_da_alloc)
// write the new file's data to the disk before it returns, at the disk's
// speed rather than the page cache's
// (docs/benchmarks/time-to-solution.md#replace-file). The old file stays whole
// until the new one has its name; on failure it is put back and `error` set.
void replace_file(const std::filesystem::path& finished, const std::filesystem::path& target,
                  std::error_code& error) noexcept;

// The name replace_file() keeps the older file under while it works.
std::filesystem::path replaced_name(const std::filesystem::path& target);

}  // namespace blockeigs::io
