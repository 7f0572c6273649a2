#include "apps/run/run_account.hpp"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/checks.hpp"
#include "io/hdf5_writer.hpp"

namespace blockeigs::apps {
namespace {

struct PhaseName {
  std::string_view label, key;
};

constexpr std::array<PhaseName, kPhases> kNames{{
    {"start-up", "startup"},
    {"config", "config"},
    {"backend", "backend"},
    {"memory plan", "memory_plan"},
    {"reading", "read"},
    {"symmetry check", "symmetry"},
    {"partition", "partition"},
    {"moving rows", "move_rows"},
    {"local order", "local_order"},
    {"B", "matrix_b"},
    {"operator", "operator"},
    {"start block", "start_block"},
    {"preconditioner", "preconditioner"},
    {"solve", "solve"},
    {"checkpoints", "checkpoints"},
    {"gathering", "gather"},
    {"writing", "write"},
    {"report", "report"},
}};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

// The process's start time in /proc (clock ticks since boot) against the boot clock.
double process_age() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t name_end = stat.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(stat.substr(name_end + 2));
  std::string field;
  // Field 3 (the state) comes first here; the start time is field 22.
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return 0;
  const long hz = sysconf(_SC_CLK_TCK);
  timespec boot{};
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return 0;
  const double age = double(boot.tv_sec) + 1e-9 * double(boot.tv_nsec) - double(ticks) / double(hz);
  return age >= 0 && age < 86400 ? age : 0;
}

namespace {

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", s);
  return text;
}

StartupParts& recorded_startup() {
  static StartupParts parts;
  return parts;
}

// " (to main 0.050, MPI_Init 0.210, beside it the CUDA driver 0.080)" where they were measured.
std::string startup_parts_text(const StartupParts& parts) {
  if (parts.mpi_init <= 0) return {};
  std::string text = " (to main " + seconds_text(parts.to_main) + ", MPI_Init " + seconds_text(parts.mpi_init);
  if (parts.cuda_driver >= 0.0005) text += ", beside it the CUDA driver " + seconds_text(parts.cuda_driver);
  return text + ")";
}

// "name 0.123, name 0.456" over the phases in [first, last] that took a millisecond or more; the
// start-up's parts in parentheses after it.
std::string phase_list(const RunTimes& t, Phase first, Phase last) {
  std::string out;
  for (auto p = static_cast<std::size_t>(first); p <= static_cast<std::size_t>(last); ++p) {
    if (t.seconds[p] < 0.0005) continue;
    out += (out.empty() ? "" : ", ") + std::string(kNames[p].label) + " " + seconds_text(t.seconds[p]);
    if (p == static_cast<std::size_t>(Phase::startup)) out += startup_parts_text(t.startup_parts);
  }
  return out;
}

}  // namespace

void record_startup_parts(StartupParts parts) { recorded_startup() = parts; }

std::string_view phase_label(Phase phase) { return kNames[static_cast<std::size_t>(phase)].label; }
std::string_view phase_key(Phase phase) { return kNames[static_cast<std::size_t>(phase)].key; }
bool is_setup(Phase phase) { return phase <= Phase::preconditioner; }

double RunTimes::setup() const {
  double s = 0;
  for (std::size_t p = 0; p <= static_cast<std::size_t>(Phase::preconditioner); ++p) s += seconds[p];
  return s;
}

double RunTimes::output() const { return (*this)[Phase::gather] + (*this)[Phase::write]; }

double RunTimes::sum() const {
  double s = 0;
  for (double v : seconds) s += v;
  return s;
}

std::string RunTimes::setup_line() const {
  std::string line =
      "setup      " + seconds_text(setup()) + " s: " + phase_list(*this, Phase::startup, Phase::preconditioner);
  if (context > 0) line += "; beside the reading, the CUDA context " + seconds_text(context);
  return line + "\n";
}

std::string RunTimes::output_line() const {
  if (output() <= 0) return {};
  return "output     " + seconds_text(output()) + " s: " + phase_list(*this, Phase::gather, Phase::write) + "\n";
}

std::string RunTimes::wall_line() const {
  std::string line = "wall       " + seconds_text(wall) + " s from the process's start: setup " + seconds_text(setup());
  if ((*this)[Phase::solve] > 0) line += ", solve " + seconds_text((*this)[Phase::solve]);
  if ((*this)[Phase::checkpoints] > 0) line += ", checkpoints " + seconds_text((*this)[Phase::checkpoints]);
  if (output() > 0) line += ", output " + seconds_text(output());
  line += ", report " + seconds_text((*this)[Phase::report]);
  return line + "\n";
}

void RunTimes::write_attributes(io::Hdf5Writer& writer) const {
  writer.attribute("/", "time_wall", wall);
  writer.attribute("/", "time_setup", setup());
  for (std::size_t p = 0; p <= static_cast<std::size_t>(Phase::preconditioner); ++p)
    writer.attribute("/", "time_setup_" + std::string(kNames[p].key), seconds[p]);
  writer.attribute("/", "time_startup_to_main", startup_parts.to_main);
  writer.attribute("/", "time_startup_mpi_init", startup_parts.mpi_init);
  writer.attribute("/", "time_startup_cuda_driver", startup_parts.cuda_driver);
  writer.attribute("/", "time_context_beside_reading", context);
  writer.attribute("/", "time_solve_wall", (*this)[Phase::solve]);
  writer.attribute("/", "time_checkpoints", (*this)[Phase::checkpoints]);
  writer.attribute("/", "time_output_gather", (*this)[Phase::gather]);
  writer.attribute("/", "time_output_write", (*this)[Phase::write]);
  writer.attribute("/", "time_report", (*this)[Phase::report]);
}

RunAccount::RunAccount() : origin_(now() - process_age()), last_lap_(origin_) {}

void RunAccount::lap(Phase phase) {
  const double t = now();
  seconds_[static_cast<std::size_t>(phase)] += t - last_lap_;
  last_lap_ = t;
}

void RunAccount::move(Phase from, Phase to, double seconds) {
  seconds_[static_cast<std::size_t>(from)] -= seconds;
  seconds_[static_cast<std::size_t>(to)] += seconds;
}

double RunAccount::elapsed() const { return now() - origin_; }

RunTimes RunAccount::agreed(MPI_Comm comm) const {
  std::array<double, kPhases + 5> mine{};
  std::copy(seconds_.begin(), seconds_.end(), mine.begin());
  mine[kPhases] = elapsed();
  mine[kPhases + 1] = context_;
  mine[kPhases + 2] = recorded_startup().to_main;
  mine[kPhases + 3] = recorded_startup().mpi_init;
  mine[kPhases + 4] = recorded_startup().cuda_driver;
  std::array<double, kPhases + 5> most{};
  BLOCKEIGS_MPI_CHECK(
      MPI_Allreduce(mine.data(), most.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, comm));
  RunTimes t;
  std::copy(most.begin(), most.begin() + kPhases, t.seconds.begin());
  t.wall = most[kPhases];
  t.context = most[kPhases + 1];
  t.startup_parts = {most[kPhases + 2], most[kPhases + 3], most[kPhases + 4]};
  return t;
}

}  // namespace blockeigs::apps
