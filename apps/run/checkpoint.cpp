#include "apps/run/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "apps/run/output/distributed_output.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "apps/run/steps/host_rows.hpp"
#include "apps/run/steps/result_metadata.hpp"
#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {
namespace {

constexpr int kSignals[3] = {SIGTERM, SIGINT, SIGUSR1};
constexpr int kStopFile = 1 << 10;      // the stop file, in place of a signal's number (above every signal's)
constexpr double kStopFileEvery = 0.5;  // seconds between rank 0's looks for it (a stat on a shared file system)
volatile std::sig_atomic_t g_received = 0;

extern "C" void on_signal(int signo) {
  if (g_received != 0 && signo != SIGUSR1) {
    // The second one: the default action, as if we had no handler.
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  if (g_received == 0) g_received = signo;
}

const char* signal_name(int signo) {
  switch (signo) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case kStopFile: return "the stop file";
    default: return "a signal";
  }
}

}  // namespace

SignalWatch::SignalWatch() {
  g_received = 0;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;  // MPI and file calls go on; the run polls the flag
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &previous_[i]);
}

SignalWatch::~SignalWatch() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &previous_[i], nullptr);
}

int SignalWatch::received() { return g_received; }

std::string launcher_signal_note(const std::string& status_file) {
  std::ifstream in(status_file);
  std::string line, name, pid;
  unsigned long long blocked = 0;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.starts_with("Name:")) name = line.substr(line.find_first_not_of(" \t", 5));
    if (line.starts_with("Pid:")) pid = line.substr(line.find_first_not_of(" \t", 4));
    if (line.starts_with("SigBlk:")) {
      try {
        blocked = std::stoull(line.substr(7), nullptr, 16);
        found = true;
      } catch (const std::exception&) {
        return "";
      }
    }
  }
  // Open MPI's launchers only: they forward SIGUSR1 from their own mask; others (slurmstepd) take signals apart.
  static const char* const forwarders[] = {"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted"};
  const bool forwarder =
      std::any_of(std::begin(forwarders), std::end(forwarders), [&](const char* f) { return name == f; });
  if (!found || !forwarder || (blocked & (1ull << (SIGUSR1 - 1))) == 0) return "";
  return "note: " + name + " (pid " + pid + ") started these processes with SIGUSR1 blocked: `kill -USR1 " + pid +
         "` will not reach them. SIGTERM to the rank processes stops the run cleanly\n";
}

std::string launcher_signal_note() { return launcher_signal_note("/proc/" + std::to_string(::getppid()) + "/status"); }

CheckpointGuard::CheckpointGuard(const cfg::CheckpointConfig& config, std::string app, int first_iteration,
                                 std::string config_text, const solver::RowNumbering& numbering, MPI_Comm comm)
    : config_(config),
      app_(std::move(app)),
      config_text_(std::move(config_text)),
      first_iteration_(first_iteration),
      numbering_(numbering),
      comm_(comm),
      since_time_(MPI_Wtime()) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
  if (rank_ == 0) std::printf("%s", launcher_signal_note().c_str());
}

CheckpointStep CheckpointGuard::poll(int iteration) {
  // [0]: a signal on any rank; [1]: a checkpoint due by rank 0's count or clock.
  int flags[2] = {SignalWatch::received(), 0};
  if (rank_ == 0 && flags[0] == 0 && stop_file_appeared()) flags[0] = kStopFile;
  if (rank_ == 0 && !config_.path.empty())
    flags[1] = (config_.every_iterations > 0 && iteration - since_iteration_ >= config_.every_iterations) ||
               (config_.every_seconds > 0 && MPI_Wtime() - since_time_ >= config_.every_seconds);
  if (ranks_ > 1) BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm_));
  CheckpointStep step;
  step.write = (flags[0] != 0 || flags[1] != 0) && !config_.path.empty();
  step.stop = flags[0] != 0;
  if (step.stop) {
    signal_ = flags[0];
    stopped_at_ = first_iteration_ + iteration;
  }
  return step;
}

bool CheckpointGuard::stop_file_appeared() {
  if (config_.stop_file.empty() || MPI_Wtime() - stop_file_checked_ < kStopFileEvery) return false;
  stop_file_checked_ = MPI_Wtime();
  std::error_code error;
  if (!std::filesystem::exists(config_.stop_file, error)) return false;
  // Taken away, so that the run that goes on from the checkpoint is not stopped by it at once.
  std::filesystem::remove(config_.stop_file, error);
  return true;
}

void CheckpointGuard::write(int iteration, const std::vector<CheckpointBlock>& blocks,
                            const std::function<void(io::Hdf5Writer&)>& write_small) {
  const int total = first_iteration_ + iteration;
  since_iteration_ = iteration;
  try {
    std::vector<DistributedBlock> rows;
    for (const CheckpointBlock& b : blocks) {
      rows.push_back(block_in_input_order(b.dataset, b.local(), b.complex ? 2 * b.cols : b.cols, numbering_, comm_));
      rows.back().complex = b.complex;
    }
    times_ += write_distributed_output(
        comm_, config_.path,
        [&](io::Hdf5Writer& w) {
          w.attribute("/", "checkpoint_of", app_);
          w.attribute("/", "iteration", std::int64_t{total});
          w.write_string("/config", config_text_);
          if (write_small) write_small(w);
        },
        rows);
    ++checkpoints_;
    last_iteration_ = total;
  } catch (const solver::AgreedError& e) {
    if (rank_ == 0) std::fprintf(stderr, "warning: checkpoint not written at iteration %d: %s\n", total, e.what());
  }
  since_time_ = MPI_Wtime();
}

std::string CheckpointGuard::interruption_summary() const {
  if (signal_ == 0) return "";
  const std::string by = signal_ == kStopFile ? "the stop file " + config_.stop_file : signal_name(signal_);
  std::string line = "interrupted by " + by + " after iteration " + std::to_string(stopped_at_) + "; ";
  if (config_.path.empty()) return line + "no checkpoint (output.checkpoint is not set)";
  if (checkpoints_ == 0) return line + "no checkpoint could be written to " + config_.path;
  return line + "checkpoint " + config_.path + " (iteration " + std::to_string(last_iteration_) +
         "): go on with --set resume=" + config_.path;
}

ResumePoint read_resume_point(const std::string& path, const std::string& app, const solver::RowNumbering& numbering,
                              MPI_Comm comm, io::DenseValues values) {
  ResumePoint point;
  point.iteration = solver::collectively(comm, [&] {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) fail_input("resume: ", path, ": no such checkpoint file");
    const std::string of = io::read_root_string(path, "checkpoint_of");
    if (of != app) fail_input("resume: ", path, " is a checkpoint of ", of, ", not of ", app);
    const std::int64_t iteration = io::read_root_integer(path, "iteration");
    if (iteration < 0 || iteration > std::int64_t{1} << 30)
      fail_input("resume: ", path, ": iteration ", iteration, " is out of range");
    return static_cast<int>(iteration);
  });
  point.rows = read_dense_rows(path, "/X", numbering, comm, values);  // in the input's numbering, moved to their ranks
  return point;
}

}  // namespace blockeigs::apps
