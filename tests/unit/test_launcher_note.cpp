// The header's note where the launcher blocks SIGUSR1: read from a /proc
// status file, the bit of SIGUSR1 alone, nothing where the file says nothing.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "apps/run/checkpoint.hpp"

namespace blockeigs::apps {
namespace {

std::string note_for(const std::string& status) {
  const auto path = std::filesystem::temp_directory_path() / "blockeigs_launcher_status";
  std::FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(status.c_str(), f);
  std::fclose(f);
  const std::string note = launcher_signal_note(path.string());
  std::filesystem::remove(path);
  return note;
}

std::string status_with(unsigned long long blocked) {
  char mask[32];
  std::snprintf(mask, sizeof mask, "%016llx", blocked);
  return std::string("Name:\tmpirun\nUmask:\t0022\nPid:\t4242\nPPid:\t1\nSigPnd:\t0000000000000000\nSigBlk:\t") + mask +
         "\nSigIgn:\t0000000000000004\n";
}

TEST(LauncherNote, NamesTheLauncherThatBlocksSigusr1) {
  const std::string note = note_for(status_with(1ull << (SIGUSR1 - 1)));
  EXPECT_NE(note.find("mpirun (pid 4242)"), std::string::npos) << note;
  EXPECT_NE(note.find("kill -USR1 4242"), std::string::npos) << note;
  EXPECT_EQ(note.back(), '\n');
  EXPECT_FALSE(note_for(status_with((1ull << (SIGUSR1 - 1)) | (1ull << (SIGTERM - 1)))).empty());
}

TEST(LauncherNote, SaysNothingOtherwise) {
  EXPECT_EQ(note_for(status_with(0)), "");
  EXPECT_EQ(note_for(status_with(1ull << (SIGUSR2 - 1))), "");
  EXPECT_EQ(note_for("Name:\tmpirun\nPid:\t1\n"), "");               // no SigBlk line
  EXPECT_EQ(note_for("Name:\tmpirun\nPid:\t1\nSigBlk:\tzz\n"), "");  // not hexadecimal
  EXPECT_EQ(launcher_signal_note("/nonexistent/status"), "");
  // Not an Open MPI launcher: slurmstepd takes its signals in a thread of its own.
  std::string stepd = status_with(1ull << (SIGUSR1 - 1));
  stepd.replace(stepd.find("mpirun"), 6, "slurmstepd");
  EXPECT_EQ(note_for(stepd), "");
}

}  // namespace
}  // namespace blockeigs::apps
