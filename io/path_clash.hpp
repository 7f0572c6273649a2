// Inputs are never outputs: before a run writes anything, every file it will
// write (or remove) is compared with every file it reads, by identity (device
// and inode: a hard link, a symbolic link, `./x` and `x` are the same file),
// and the written ones with each other.
#pragma once

#include <span>
#include <vector>
#include <string>

namespace blockeigs::io {

// A path a run reads or writes, with the key or argument that named it
// ("matrix.hdf5.file", "output.path", "mtx2h5's output").
struct KeyedPath {
  std::string key;
  std::string path;
  // Written paths only: the key of a read this write may replace (a
  // checkpoint written over the checkpoint the run resumed from, which was
  // read whole before the first write). Empty: none.
  std::string may_replace = {};
};

// Whether `a` and `b` name one file: the same device and inode where both
// exist; else the same absolute path once the links in its existing folders
// are resolved (two outputs not yet written).
bool same_file(const std::string& a, const std::string& b);

// The files a write at `path` touches: the path itself, the temporary name a
// result is written under (temporary_output_name) and the name an older file
// is kept under while the new one moves in (replaced_name).
std::vector<std::string> files_written_at(const std::string& path);

// Why a run with these reads and writes must not start, naming both keys and
// both paths; empty where no written file (nor its temporaries) is a read file
// and no two written paths are one file. Empty paths are skipped.
std::string read_write_clash(std::span<const KeyedPath> reads, std::span<const KeyedPath> writes);

}  // namespace blockeigs::io
