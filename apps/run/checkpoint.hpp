// Long runs: checkpoints (output.checkpoint), stopping cleanly on a signal,
// and going on from a checkpoint (resume: FILE). A checkpoint is an HDF5 file
// in the result files' conventions: /X (the block the solver iterates,
// global rows x columns, written by every rank; block CG adds its next search
// block /P), the root attributes
// `checkpoint_of` (the app) and `iteration`, the config's text and the
// provenance attributes. It is written under a temporary name and moved into
// place, so a kill mid-write leaves the previous one intact.
#pragma once

#include <mpi.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/run/output/distributed_output.hpp"
#include "config/run_config.hpp"
#include "io/hdf5_dense.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/operator/row_numbering.hpp"

namespace blockeigs::apps {

// SIGTERM, SIGINT and SIGUSR1 (what batch schedulers and Open MPI's mpirun
// send or forward before a time limit) handled for the object's lifetime:
// the first sets a flag that the run polls between iterations; a second
// SIGTERM or SIGINT ends the process the default way.
class SignalWatch {
 public:
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  static int received();  // the first signal's number since construction, 0 if none

 private:
  struct sigaction previous_[3];
};

// A note for the header where the Open MPI launcher that started this
// process (mpirun, orted) has SIGUSR1 blocked, so that `kill -USR1` to it never reaches the
// ranks (a mask it inherited from whatever started it); "" otherwise, and
// where /proc cannot tell. `status_file` is the launcher's /proc status.
std::string launcher_signal_note(const std::string& status_file);
std::string launcher_signal_note();  // of getppid()

// A block a checkpoint holds: this rank's rows in the operator's numbering
// (written in the input's).
struct CheckpointBlock {
  std::string dataset;  // "/X"
  std::int64_t cols = 0;
  std::function<std::vector<double>()> local;  // copied only when a checkpoint is written
  bool complex = false;  // `local` holds (real, imaginary) pairs: a complex dataset (h5py's complex128)
};

// Between a solver's iterations, on every rank: agrees (one small all-reduce
// where there are several ranks) whether any rank has seen a signal and, by
// rank 0's count and clock, whether a checkpoint is due. The caller writes
// the checkpoint when told to, and stops after a signal.
struct CheckpointStep {
  bool write = false;
  bool stop = false;
};

class CheckpointGuard {
 public:
  // `app` names the writer ("block-eigs"); `first_iteration`, the iteration
  // a resumed run went on from (its solver counts from 0 again); `config_text`
  // is stored in each checkpoint. Collective.
  CheckpointGuard(const cfg::CheckpointConfig& config, std::string app, int first_iteration, std::string config_text,
                  const solver::RowNumbering& numbering, MPI_Comm comm);

  // Collective; `iteration` is the solver's.
  CheckpointStep poll(int iteration);

  // Collective: the checkpoint after `iteration`; `write_small` adds the
  // run's own datasets and attributes on rank 0. One that cannot be written
  // (a full disk) costs the run nothing else: a warning, and the last one kept.
  void write(int iteration, const std::vector<CheckpointBlock>& blocks,
             const std::function<void(io::Hdf5Writer&)>& write_small = {});

  int signal() const { return signal_; }               // the signal (or the stop file) that stopped the run, 0 if none
  const OutputTimes& times() const { return times_; }  // of the checkpoints written so far, together
  int checkpoints() const { return checkpoints_; }     // written so far
  int last_checkpoint_iteration() const { return last_iteration_; }  // counted from the first run's start
  // A line for the summary: why the run stopped and where its checkpoint is
  // ("interrupted by SIGTERM after iteration 57; checkpoint ck.h5 (iteration 57)").
  std::string interruption_summary() const;

 private:
  cfg::CheckpointConfig config_;
  std::string app_, config_text_;
  int first_iteration_;
  const solver::RowNumbering& numbering_;  // the operator's rows to the input's
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  SignalWatch watch_;
  bool stop_file_appeared();  // rank 0: output.stop_file exists (looked for twice a second at most); removes it
  int signal_ = 0, checkpoints_ = 0, last_iteration_ = -1, stopped_at_ = -1;
  double stop_file_checked_ = -1e300;  // rank 0's clock at its last look for output.stop_file
  OutputTimes times_;
  int since_iteration_ = 0;  // the solver iteration the last checkpoint (or the start) was at
  double since_time_ = 0;    // rank 0's MPI_Wtime then
};

// Where a resumed run goes on from: the iteration its checkpoint was taken
// after, and this rank's rows of its block /X (in the operator's numbering).
struct ResumePoint {
  int iteration = 0;
  io::DenseRows rows;
};

// Reads checkpoint `path` for `app`: refused (InputError on every rank,
// naming the file and the key `resume`) when it is missing, not a checkpoint
// of `app`, or of another number of rows; `values`: whether its /X may be complex (a complex run's). Collective.
ResumePoint read_resume_point(const std::string& path, const std::string& app, const solver::RowNumbering& numbering,
                              MPI_Comm comm, io::DenseValues values = io::DenseValues::real_only);

}  // namespace blockeigs::apps
