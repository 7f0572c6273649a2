// A small HDF5 writer for solver results: one-dimensional and row-major
// two-dimensional datasets, string and numeric attributes, and matrices
// written a row block at a time (each rank its own rows: through MPI-IO with
// parallel HDF5; with serial HDF5, straight into the place matrix_offset gives,
// RawRowsFile below). Files are created under a temporary name and moved into
// place by commit_output(), so a failed run leaves no half-written result.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blockeigs::io {

// The temporary name a result file is written under before commit_output.
std::string temporary_output_name(const std::string& path);

class Hdf5Writer {
 public:
  // create == true: a new file (replacing any old one at that name);
  // false: open an existing file to add rows.
  Hdf5Writer(const std::string& path, bool create);
  // Every rank of `comm` opens the existing file for writing rows through
  // MPI-IO (opening and closing it, and open_rows, are then collective; each
  // rank writes its rows on its own). Only when parallel_io_available().
  Hdf5Writer(const std::string& path, MPI_Comm comm);
  static bool parallel_io_available();
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;
  ~Hdf5Writer();

  void write(const std::string& name, const std::vector<double>& values);
  void write(const std::string& name, const std::vector<std::int64_t>& values);
  // rows x cols, row-major.
  void write_matrix(const std::string& name, std::int64_t rows, std::int64_t cols, const std::vector<double>& values);
  void write_string(const std::string& name, const std::string& text);
  // Scalar attributes of their own HDF5 type: a string, float64, int64, or a
  // boolean as HDF5 has none: an int8 enum {FALSE = 0, TRUE = 1}, which h5py
  // reads as numpy.bool_ (h5py's own convention).
  void attribute(const std::string& object, const std::string& name, const std::string& value);
  void attribute(const std::string& object, const std::string& name, const char* value) {
    attribute(object, name, std::string(value));
  }
  void attribute(const std::string& object, const std::string& name, double value);
  void attribute(const std::string& object, const std::string& name, std::int64_t value);
  void attribute(const std::string& object, const std::string& name, bool value);

  // A rows x cols float64 dataset to be filled by write_rows or open_rows:
  // contiguous in the file (no chunks, no filters, no fill values: every row
  // is written once), its space allocated now.
  // `complex`: of complex values as h5py writes complex128 (a compound of r
  // and i), `cols` of them a row; rows are then written as pairs of doubles.
  void create_matrix(const std::string& name, std::int64_t rows, std::int64_t cols, bool complex = false);
  // Rows [first_row, first_row + rows) of a dataset made by create_matrix;
  // `data` row-major with leading dimension cols. Collective with a parallel
  // writer (open_rows), also where a rank has no rows.
  void write_rows(const std::string& name, std::int64_t first_row, std::int64_t rows, std::int64_t cols,
                  const double* data);

  // A dataset made by create_matrix, open for writing rows in pieces. With a
  // parallel writer, open_rows and the Rows' end are collective and write
  // is not (each rank writes its own rows, in as many pieces as it likes).
  class Rows {
   public:
    Rows(Rows&&) noexcept;
    Rows(const Rows&) = delete;
    Rows& operator=(const Rows&) = delete;
    ~Rows();
    // `rows` rows from first_row on: `data` row-major, compact, straight from memory to the file.
    void write(std::int64_t first_row, std::int64_t rows, const double* data);

   private:
    friend class Hdf5Writer;
    struct Handles;  // the dataset, its dataspace and the transfer properties
    Rows(const Hdf5Writer& writer, const std::string& name);
    std::string path_, name_;
    std::unique_ptr<Handles> handles_;
    std::int64_t cols_ = 0;
  };
  Rows open_rows(const std::string& name) const;

  // Where a dataset made by create_matrix starts in the file: its rows in
  // order, float64 little-endian, for RawRowsFile.
  std::int64_t matrix_offset(const std::string& name) const;

  void close();

 private:
  // A scalar attribute of `file_type` holding *value, given in `memory_type`.
  void scalar_attribute(const std::string& object, const std::string& name, std::int64_t file_type,
                        std::int64_t memory_type, const void* value);
  std::string path_;
  long long file_ = -1;  // hid_t
  bool parallel_ = false;
};

// Rows written straight into the float64 datasets of a result file that
// Hdf5Writer made (create_matrix: contiguous, allocated; matrix_offset says
// where each starts), with pwrite: every rank its own rows, at once and a
// piece at a time as they are ready, where serial HDF5 takes one writer at a
// time. HDF5's own metadata is written by Hdf5Writer alone.
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

// Fails early (InputError naming the path) when the output cannot be created,
// so that a long solve does not end in an error: creates and removes the
// temporary file. `key` names the path's config key in messages.
void check_output_writable(const std::string& path, const std::string& key = "output.path");

// Moves the finished temporary file onto `path`.
void commit_output(const std::string& path);
// Removes the temporary file, if any (after a failure).
void discard_output(const std::string& path) noexcept;

}  // namespace blockeigs::io
