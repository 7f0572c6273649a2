#include "apps/run/output/distributed_output.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/plan/memory_plan.hpp"
#include "dense/memory.hpp"

namespace blockeigs::apps {
namespace {

std::atomic<bool> serial_for_tests{false};

// The pieces copy_rows is called for: [p piece, (p + 1) piece) within the
// rank's rows, for p < count.
struct Pieces {
  std::int64_t rows = 1, count = 0;
  bool collective = false;
};

Pieces pieces_of(const DistributedBlock& block) {
  if (block.collective_pieces > 0) return {block.piece_rows, block.collective_pieces, true};
  const std::int64_t bytes_per_row = 8 * std::max<std::int64_t>(1, block.cols);
  const std::int64_t rows =
      block.piece_rows > 0 ? block.piece_rows : std::max<std::int64_t>(1, output_piece_bytes / bytes_per_row);
  return {rows, (block.local_rows + rows - 1) / rows, false};
}

// Calls `take(begin, end, rows)` for each piece of this rank's rows of a
// block written through copy_rows, the rows in a reused staging buffer
// (pinned where there is a GPU). An error in `take` during collective pieces
// waits for the last piece, so that no rank is left in an exchange. Returns
// the seconds spent in copy_rows.
double for_each_piece(const DistributedBlock& block,
                      const std::function<void(std::int64_t, std::int64_t, const double*)>& take) {
  const Pieces pieces = pieces_of(block);
  dense::PinnedBuffer<double> staging(static_cast<std::size_t>(std::min(pieces.rows, block.local_rows) * block.cols));
  double copying = 0;
  std::exception_ptr failed;
  for (std::int64_t p = 0; p < pieces.count; ++p) {
    const std::int64_t begin = std::min(block.local_rows, p * pieces.rows);
    const std::int64_t end = std::min(block.local_rows, begin + pieces.rows);
    const double start = MPI_Wtime();
    block.copy_rows(begin, end, staging.data());
    copying += MPI_Wtime() - start;
    if (failed || end == begin) continue;
    try {
      take(begin, end, staging.data());
    } catch (...) {
      if (!pieces.collective) throw;
      failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return copying;
}

// This rank's rows of `block` through parallel HDF5; returns the seconds spent copying them to the staging buffer.
double write_block(const io::Hdf5Writer& writer, const DistributedBlock& block) {
  io::Hdf5Writer::Rows file = writer.open_rows(block.dataset);  // on every rank: closing it is collective
  if (block.rows || !block.copy_rows) {
    file.write(block.first_row, block.local_rows, block.rows);
    return 0;
  }
  return for_each_piece(block, [&](std::int64_t begin, std::int64_t end, const double* rows) {
    file.write(block.first_row + begin, end - begin, rows);
  });
}

// The same straight into the dataset's place in the file, which starts at `offset`.
double write_block(io::RawRowsFile& file, std::int64_t offset, const DistributedBlock& block) {
  const std::int64_t row_bytes = 8 * block.cols;
  if (block.rows || !block.copy_rows) {
    file.write(offset + block.first_row * row_bytes, block.rows, block.local_rows * row_bytes);
    return 0;
  }
  return for_each_piece(block, [&](std::int64_t begin, std::int64_t end, const double* rows) {
    file.write(offset + (block.first_row + begin) * row_bytes, rows, (end - begin) * row_bytes);
  });
}

// Returns the seconds this rank spent copying rows to the staging buffer. With `early`, the file it began
// (its thread done first), to which the small datasets and `blocks` are added.
double write_files(MPI_Comm comm, const std::string& path, const std::function<void(io::Hdf5Writer&)>& write_small,
                   const std::vector<DistributedBlock>& blocks,
                   const std::function<void(io::Hdf5Writer*, double)>& write_last, EarlyOutput* early,
                   double& early_seconds) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (early) early_seconds = early->join(comm);
  std::vector<std::int64_t> offsets(blocks.size() + 1, 0);  // where each block starts in the file
  solver::collectively(comm, [&] {
    if (rank != 0) return;
    io::Hdf5Writer writer(path, !early);
    write_small(writer);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (!early)
        writer.create_matrix(blocks[b].dataset, blocks[b].global_rows,
                             blocks[b].complex ? blocks[b].cols / 2 : blocks[b].cols, blocks[b].complex);
      offsets[b] = early ? early->offset_of(blocks[b].dataset) : writer.matrix_offset(blocks[b].dataset);
    }
    writer.close();
  });
  double copying = 0;
  if (!early && io::Hdf5Writer::parallel_io_available() && !serial_for_tests) {
    // MPI-IO: every rank writes its rows at once.
    solver::collectively(comm, [&] {
      io::Hdf5Writer writer(path, comm);
      for (const DistributedBlock& block : blocks) copying += write_block(writer, block);
      writer.close();
    });
  } else {
    // Serial HDF5 (or an EarlyOutput) made the file: every rank writes its rows into their places at once, each
    // piece as it is ready.
    BLOCKEIGS_MPI_CHECK(MPI_Bcast(offsets.data(), static_cast<int>(offsets.size()), MPI_INT64_T, 0, comm));
    std::optional<io::RawRowsFile> file;
    solver::collectively(comm, [&] { file.emplace(path); });  // opened everywhere before any collective piece
    solver::collectively(comm, [&] {
      for (std::size_t b = 0; b < blocks.size(); ++b) copying += write_block(*file, offsets[b], blocks[b]);
      file->close();
    });
  }
  if (write_last) {
    std::optional<io::Hdf5Writer> writer;
    solver::collectively(comm, [&] {
      if (rank == 0) writer.emplace(path, false);
    });
    write_last(writer ? &*writer : nullptr, copying);
    solver::collectively(comm, [&] {
      if (writer) writer->close();
    });
  }
  solver::collectively(comm, [&] {
    if (rank == 0) io::commit_output(path);
  });
  return copying;
}

}  // namespace

DistributedBlock held_block(std::string dataset, std::int64_t global_rows, std::int64_t cols, std::int64_t first_row,
                            std::vector<double> rows) {
  auto held = std::make_shared<const std::vector<double>>(std::move(rows));
  DistributedBlock block;
  block.dataset = std::move(dataset);
  block.global_rows = global_rows;
  block.cols = cols;
  block.first_row = first_row;
  block.local_rows = cols > 0 ? static_cast<std::int64_t>(held->size()) / cols : 0;
  block.rows = held->data();
  block.held = std::move(held);
  return block;
}

std::string describe(const OutputTimes& times) {
  char text[240];
  int n = std::snprintf(text, sizeof text, " (%s of blocks: gathered in %.3f s, written in %.3f s",
                        solver::format_bytes(double(times.bytes)).c_str(), times.gather, times.write);
  if (times.early_bytes > 0)
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), ", %s of them beside the solve in %.3f s",
                       solver::format_bytes(double(times.early_bytes)).c_str(), times.early);
  std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), ")");
  return text;
}

EarlyOutput::EarlyOutput(MPI_Comm comm, std::string path, std::vector<BlockShape> shapes, DistributedBlock early)
    : path_(std::move(path)), shapes_(std::move(shapes)), offsets_(shapes_.size(), 0), early_(std::move(early)) {
  BLOCKEIGS_ASSERT(early_.rows || early_.local_rows == 0);  // in memory: no collective pieces on the thread
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  try {
    solver::collectively(comm, [&] {
      if (rank_ != 0) return;
      io::Hdf5Writer writer(path_, true);
      for (std::size_t i = 0; i < shapes_.size(); ++i) {
        writer.create_matrix(shapes_[i].dataset, shapes_[i].global_rows, shapes_[i].cols);
        offsets_[i] = writer.matrix_offset(shapes_[i].dataset);
      }
      writer.close();
    });
  } catch (...) {
    if (rank_ == 0) io::discard_output(path_);
    throw;
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(offsets_.data(), static_cast<int>(offsets_.size()), MPI_INT64_T, 0, comm));
  const std::int64_t offset = offset_of(early_.dataset);
  thread_ = std::thread([this, offset] {  // no MPI call on it: the apps ask MPI for one thread's calls
    const auto start = std::chrono::steady_clock::now();
    try {
      io::RawRowsFile file(path_);
      write_block(file, offset, early_);
      file.close();
    } catch (...) {
      error_ = std::current_exception();
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

EarlyOutput::~EarlyOutput() {
  if (thread_.joinable()) thread_.join();
  if (!finished_ && rank_ == 0) io::discard_output(path_);
}

std::int64_t EarlyOutput::offset_of(const std::string& dataset) const {
  for (std::size_t i = 0; i < shapes_.size(); ++i)
    if (shapes_[i].dataset == dataset) return offsets_[i];
  throw LibraryError("EarlyOutput: " + path_ + " was begun without a dataset " + dataset);
}

double EarlyOutput::join(MPI_Comm comm) {
  if (thread_.joinable()) thread_.join();
  solver::agree_on_error(comm, error_);
  return seconds_;
}

OutputTimes write_distributed_output(MPI_Comm comm, const std::string& path,
                                     const std::function<void(io::Hdf5Writer&)>& write_small,
                                     const std::vector<DistributedBlock>& blocks,
                                     const std::function<void(io::Hdf5Writer*, double)>& write_last,
                                     EarlyOutput* early) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const double start = MPI_Wtime();
  double copying = 0, early_seconds = 0;
  try {
    copying = write_files(comm, path, write_small, blocks, write_last, early, early_seconds);
    if (early) early->finished();
  } catch (...) {
    if (rank == 0) io::discard_output(path);
    throw;
  }
  double seconds[3] = {copying, MPI_Wtime() - start - copying, early_seconds};
  for (const DistributedBlock& block : blocks) seconds[0] += block.seconds;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, seconds, 3, MPI_DOUBLE, MPI_MAX, comm));
  OutputTimes times{seconds[0], seconds[1], 0};
  for (const DistributedBlock& block : blocks) times.bytes += 8 * block.global_rows * block.cols;
  if (early) {
    times.early = seconds[2];
    times.early_bytes = 8 * early->block().global_rows * early->block().cols;
    times.bytes += times.early_bytes;
  }
  return times;
}

void set_serial_output_for_tests(bool on) { serial_for_tests = on; }

}  // namespace blockeigs::apps
