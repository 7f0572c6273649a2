// output.checkpoint and resume in both apps' configs: the keys, their
// defaults and ranges, and the combinations refused (a checkpoint on the
// result file; resume beside eigensolver.start), each naming file, line and key.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "config/run_config.hpp"

namespace blockeigs::cfg {
namespace {

using namespace blockeigs::io;

constexpr const char* kMatrix = "matrix: {generator: {type: laplacian_1d, nx: 10}}\n";

std::string eigs_error(const std::string& text) {
  try {
    parse_eigs_config(std::string(kMatrix) + text, "c.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

TEST(ConfigCheckpoint, ReadsEveryKey) {
  const EigsConfig c =
      parse_eigs_config(std::string(kMatrix) +
                            "output:\n  checkpoint: {path: ck.h5, every_iterations: 50, every_seconds: 600}\n"
                            "resume: old.h5\n",
                        "dir/c.yaml");
  EXPECT_EQ(c.output.checkpoint.path, "ck.h5");  // like output.path: relative to the working directory
  EXPECT_EQ(c.output.checkpoint.every_iterations, 50);
  EXPECT_EQ(c.output.checkpoint.every_seconds, 600);
  EXPECT_EQ(c.resume, "old.h5");
  const CgConfig cg =
      parse_cg_config(std::string(kMatrix) + "output: {checkpoint: {path: x.h5}}\nresume: x.h5\n", "c.yaml");
  EXPECT_EQ(cg.output.checkpoint.path, "x.h5");
  EXPECT_EQ(cg.output.checkpoint.every_iterations, 0);  // only on a signal
  EXPECT_EQ(cg.output.checkpoint.every_seconds, 0);
  EXPECT_EQ(cg.resume, "x.h5");
}

TEST(ConfigCheckpoint, DefaultsToNone) {
  const EigsConfig c = parse_eigs_config(kMatrix, "c.yaml");
  EXPECT_TRUE(c.output.checkpoint.path.empty());
  EXPECT_TRUE(c.resume.empty());
}

TEST(ConfigCheckpoint, BadValuesNameTheirKey) {
  EXPECT_NE(eigs_error("output:\n  checkpoint: {every_iterations: 5}\n")
                .find("c.yaml:3: missing required key output.checkpoint.path"),
            std::string::npos);
  EXPECT_NE(eigs_error("output:\n  checkpoint: {path: a.h5, every_iterations: 0}\n")
                .find("c.yaml:3: output.checkpoint.every_iterations"),
            std::string::npos);
  EXPECT_NE(eigs_error("output:\n  checkpoint: {path: a.h5, every_seconds: -1}\n")
                .find("c.yaml:3: output.checkpoint.every_seconds"),
            std::string::npos);
  EXPECT_NE(eigs_error("output:\n  checkpoint: {path: a.h5, every: 5}\n").find("output.checkpoint.every"),
            std::string::npos);
  EXPECT_NE(
      eigs_error("output:\n  checkpoint: {path: ''}\n").find("c.yaml:3: output.checkpoint.path must not be empty"),
      std::string::npos);
}

TEST(ConfigCheckpoint, RefusesACheckpointOnTheResultFile) {
  EXPECT_NE(eigs_error("output:\n  path: r.h5\n  checkpoint: {path: r.h5}\n")
                .find("c.yaml:4: output.checkpoint.path is output.path too"),
            std::string::npos);
}

TEST(ConfigCheckpoint, RefusesResumeBesideAStartBlock) {
  EXPECT_NE(eigs_error("eigensolver:\n  start: {file: s.h5}\nresume: ck.h5\n")
                .find("c.yaml:4: resume and eigensolver.start both give a start block"),
            std::string::npos);
}

}  // namespace
}  // namespace blockeigs::cfg
