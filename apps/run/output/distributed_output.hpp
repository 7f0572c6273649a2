// Writing a result file from all ranks: rank 0 creates it (under a temporary
// name) with the small datasets and room for the large blocks, the ranks then
// add their rows of the large blocks, all at once (through MPI-IO when HDF5 is
// parallel, else straight into each block's place in the file, io/hdf5_writer.hpp's RawRowsFile),
// and rank 0 moves it into place. Any failure is agreed on by every rank and
// leaves no file behind.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/hdf5_writer.hpp"
#include "solver/plan/memory_plan.hpp"

namespace blockeigs::apps {

// Rows that are not in memory as they are written go to the file in pieces
// of about this many bytes, through a staging buffer that each piece reuses
// (the memory plan counts it).
inline constexpr std::int64_t output_piece_bytes = solver::output_piece_bytes;

// A large block of a file: this rank's local_rows rows from first_row on,
// of global_rows, in fp64 [host]. Written from memory where `rows` points to
// them (row-major, compact: in `held`, or the caller's, the solver's own
// block, which must then outlive the write), else `copy_rows` puts them on
// the host a piece at a time.
struct DistributedBlock {
  std::string dataset;
  std::int64_t global_rows = 0;
  std::int64_t cols = 0;
  std::int64_t first_row = 0;   // this rank's
  std::int64_t local_rows = 0;  // this rank's
  const double* rows = nullptr;
  // Rows [begin, end) of this rank's into `out` (compact, row-major).
  std::function<void(std::int64_t begin, std::int64_t end, double* out)> copy_rows;
  // copy_rows is called for pieces p = 0, 1, ... of piece_rows rows ([p
  // piece_rows, (p + 1) piece_rows) within this rank's rows; 0: of about
  // output_piece_bytes. Where it moves rows between ranks
  // (collective_pieces > 0), every rank calls it collective_pieces times, in
  // order, with empty pieces past its rows.
  std::int64_t piece_rows = 0;
  std::int64_t collective_pieces = 0;
  std::shared_ptr<const void> held;  // copies of the block share it
  // The rows hold cols / 2 complex values as (real, imaginary) pairs: the
  // dataset is complex (h5py's complex128), of cols / 2 columns.
  bool complex = false;
  double seconds = 0;  // preparing the block before the write (the pieces' copies are timed as they go)
};

// A block that holds its rows.
DistributedBlock held_block(std::string dataset, std::int64_t global_rows, std::int64_t cols, std::int64_t first_row,
                            std::vector<double> rows);

// Where a file's time went, the most any rank spent (on every rank): for a run's account.
struct OutputTimes {
  double gather = 0;             // the rows to the host, to fp64, to the input's numbering (DistributedBlock)
  double write = 0;              // the file created, every rank's rows written, the file moved into place
  std::int64_t bytes = 0;        // the large blocks' bytes in the file
  double early = 0;              // writing the rows of an EarlyOutput, on its own thread beside the run
  std::int64_t early_bytes = 0;  // of `bytes`, those
  OutputTimes& operator+=(const OutputTimes& other) {
    gather += other.gather, write += other.write, bytes += other.bytes;
    early += other.early, early_bytes += other.early_bytes;
    return *this;
  }
};

// " (256.0 MiB of blocks: gathered in 0.012 s, written in 0.210 s)", for the line that names the file
// (and ", 128.0 MiB of them beside the solve in 0.061 s" where an EarlyOutput wrote some).
std::string describe(const OutputTimes& times);

// The shape of a large block of a result file.
struct BlockShape {
  std::string dataset;
  std::int64_t global_rows = 0, cols = 0;
};

// A result file begun before the run ends, for a block known early (block-cg's generated right-hand sides):
// rank 0 creates the file with room for every large block (`shapes`, `early`'s among them), and each rank
// writes its rows of `early` (held in memory) straight into their place on a thread of its own while the run
// goes on. write_distributed_output, given it, adds the rest to this file the same way, with serial or
// parallel HDF5 (whose MPI-IO the thread could not call). Collective.
class EarlyOutput {
 public:
  EarlyOutput(MPI_Comm comm, std::string path, std::vector<BlockShape> shapes, DistributedBlock early);
  EarlyOutput(const EarlyOutput&) = delete;
  EarlyOutput& operator=(const EarlyOutput&) = delete;
  // Waits for the thread; a file that write_distributed_output did not finish is removed.
  ~EarlyOutput();

  // For write_distributed_output: where a dataset of `shapes` starts in the file; the early block; waiting
  // for the thread and agreeing on its outcome (collective; the most seconds a rank's thread took); the file
  // finished and moved into place.
  std::int64_t offset_of(const std::string& dataset) const;
  const DistributedBlock& block() const { return early_; }
  double join(MPI_Comm comm);
  void finished() { finished_ = true; }

 private:
  std::string path_;
  int rank_ = 0;
  std::vector<BlockShape> shapes_;
  std::vector<std::int64_t> offsets_;
  DistributedBlock early_;
  std::thread thread_;
  std::exception_ptr error_;
  double seconds_ = 0;
  bool finished_ = false;
};

// `write_small` runs on rank 0 with the new file open. `write_last`, where
// given, runs on every rank once the blocks are written and before the file
// is moved into place, with the file open on rank 0 (null elsewhere) and the
// seconds this rank spent copying rows for the write: it may call collectives
// (the run's account of time, written as attributes).
// With `early`: the file it began, to which `blocks` (the other large blocks of its shapes) and the small
// datasets are added. Collective.
OutputTimes write_distributed_output(MPI_Comm comm, const std::string& path,
                                     const std::function<void(io::Hdf5Writer&)>& write_small,
                                     const std::vector<DistributedBlock>& blocks,
                                     const std::function<void(io::Hdf5Writer*, double)>& write_last = {},
                                     EarlyOutput* early = nullptr);

// Test-only: true makes write_distributed_output take serial HDF5's path (rows
// written straight into the file) even with parallel HDF5 (the tests cover
// both paths that way). Every rank sets the same.
void set_serial_output_for_tests(bool on);

}  // namespace blockeigs::apps
