// Where a run's wall-clock time went, from the process's start to the end of
// its output: every phase of set-up, the solve, checkpoints and the result
// file, each the maximum over ranks (PETSc's -log_view, for a whole run).
// The clock is lap-based: each lap gives the time since the previous one to
// a phase, so the phases cover the whole time and nothing is counted twice.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace blockeigs::io {
class Hdf5Writer;
}

namespace blockeigs::apps {

enum class Phase {
  // set-up
  startup,         // the process's start to the app's body: loading libraries, MPI_Init
  config,          // reading and checking the config, output paths
  backend,         // choosing and starting the backend (the CUDA context on a GPU)
  memory_plan,     // the memory plans and their checks
  read,            // reading or generating this rank's rows of A
  symmetry,        // checking A for symmetry
  partition,       // deciding on and computing a graph partition, or reading a saved one
  move_rows,       // moving and renumbering the rows to their ranks
  local_order,     // ordering each rank's rows
  matrix_b,        // B of A x = lambda B x: reading, checks, moving, its operator; the constraints
  operator_build,  // the distributed operator: local blocks, halo plan, upload to the device
  start_block,     // the start block or the right-hand sides
  preconditioner,  // the preconditioner's set-up
  // the solve
  solve,        // the solver's own time (its `solve time` line), less checkpoints
  checkpoints,  // writing checkpoints between iterations
  // after the solve
  gather,  // results to the host and into the input's numbering
  write,   // writing the result file
  report,  // the summary's tables and the collectives behind them
  count
};

inline constexpr std::size_t kPhases = static_cast<std::size_t>(Phase::count);

// A phase's name in the summary ("symmetry check") and in result files'
// attribute names ("symmetry").
std::string_view phase_label(Phase phase);
std::string_view phase_key(Phase phase);
bool is_setup(Phase phase);

// What the process's start-up held, as run_mpi_app measured it: the process's
// start to main (the launcher's part of the new process, exec, loading the
// libraries), MPI_Init and, on a thread beside it, the CUDA driver's start (0
// where none was measured).
struct StartupParts {
  double to_main = 0;
  double mpi_init = 0;
  double cuda_driver = 0;
};
// Recorded once by run_mpi_app; every later account reports it.
void record_startup_parts(StartupParts parts);
// Seconds since this process started (Linux: its start time in /proc; 0 where that cannot be read).
double process_age();

// Every phase's seconds and the wall, each the maximum over ranks.
struct RunTimes {
  std::array<double, kPhases> seconds{};
  double wall = 0;  // from the process's start (Linux: its start time in /proc; elsewhere the account's start)
  // The CUDA context's own time, on a thread of its own while the rows were
  // read (StartingContext): not a phase, as it overlaps them.
  double context = 0;
  StartupParts startup_parts;  // within the start-up phase

  double operator[](Phase phase) const { return seconds[static_cast<std::size_t>(phase)]; }
  double setup() const;   // startup .. preconditioner
  double output() const;  // gather and write
  double sum() const;     // all phases

  // "setup      1.234 s: start-up 0.310 (to main 0.090, MPI_Init 0.210, beside
  // it the CUDA driver 0.080), config 0.002, ..." (phases that took time; then
  // "; beside the reading, the CUDA context 0.312" where one was made)
  std::string setup_line() const;
  // "output     0.512 s: gathering 0.101, writing 0.411" (empty without output)
  std::string output_line() const;
  // "wall       3.456 s from the process's start: set-up 1.234, solve 1.700, ..."
  std::string wall_line() const;
  // time_wall, time_setup and time_setup_<phase>, time_startup_to_main, time_startup_mpi_init,
  // time_startup_cuda_driver, time_context_beside_reading, time_solve_wall, time_checkpoints,
  // time_output_gather, time_output_write, time_report: root attributes of a result file.
  void write_attributes(io::Hdf5Writer& writer) const;
};

class RunAccount {
 public:
  RunAccount();  // the clock runs from the process's start; the time until now is start-up

  // The time since the last lap (or the start) is `phase`'s.
  void lap(Phase phase);
  // Moves `seconds` already counted to `from` over to `to` (a part that a lap
  // held: the partitioner inside a partition step, checkpoints inside the solve).
  void move(Phase from, Phase to, double seconds);
  // The CUDA context's seconds on its own thread beside the reading (RunTimes::context).
  void context_beside_reading(double seconds) { context_ = seconds; }
  // Seconds since the process's start, on this rank.
  double elapsed() const;

  // Each phase's maximum over ranks; the wall is this rank's elapsed time
  // now, maximised too. Collective.
  RunTimes agreed(MPI_Comm comm) const;

 private:
  double origin_ = 0;    // MPI_Wtime() at the process's start
  double last_lap_ = 0;  // MPI_Wtime() at the last lap
  std::array<double, kPhases> seconds_{};
  double context_ = 0;
};

}  // namespace blockeigs::apps
