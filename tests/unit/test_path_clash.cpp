// Inputs are never outputs: files compared by identity (links, `./x` and `x`),
// written files and their temporaries against read ones, and written ones
// against each other.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "io/hdf5_writer.hpp"
#include "io/path_clash.hpp"

namespace blockeigs::io {
namespace {

namespace fs = std::filesystem;

class PathClash : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blockeigs_path_clash_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    std::ofstream(file("A.h5")) << "matrix";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(PathClash, SameFileByIdentity) {
  EXPECT_TRUE(same_file(file("A.h5"), file("A.h5")));
  EXPECT_TRUE(same_file(file("A.h5"), file("sub/../A.h5")));
  fs::create_hard_link(file("A.h5"), file("hard.h5"));
  fs::create_symlink(file("A.h5"), file("soft.h5"));
  EXPECT_TRUE(same_file(file("A.h5"), file("hard.h5")));
  EXPECT_TRUE(same_file(file("soft.h5"), file("A.h5")));
  std::ofstream(file("B.h5")) << "matrix";  // the same bytes, another file
  EXPECT_FALSE(same_file(file("A.h5"), file("B.h5")));
  EXPECT_FALSE(same_file(file("A.h5"), file("missing.h5")));
  // Two files not yet written: by their resolved paths.
  EXPECT_TRUE(same_file(file("new.h5"), file("sub/../new.h5")));
  EXPECT_FALSE(same_file(file("new.h5"), file("other.h5")));
}

TEST_F(PathClash, RelativeAndAbsoluteSpellings) {
  const fs::path here = fs::current_path();
  fs::current_path(dir_);
  EXPECT_TRUE(same_file("A.h5", "./A.h5"));
  EXPECT_TRUE(same_file("A.h5", file("A.h5")));
  EXPECT_TRUE(same_file("new.h5", "./sub/../new.h5"));
  fs::current_path(here);
}

TEST_F(PathClash, OutputOverAnInputIsRefusedNamingBothKeys) {
  const std::vector<KeyedPath> reads = {{"matrix.hdf5.file", file("A.h5")}, {"resume", ""}};
  const std::vector<KeyedPath> writes = {{"output.path", file("A.h5")}};
  const std::string clash = read_write_clash(reads, writes);
  EXPECT_NE(clash.find("output.path " + file("A.h5") + " is matrix.hdf5.file " + file("A.h5")), std::string::npos)
      << clash;
  EXPECT_NE(clash.find("would destroy the input"), std::string::npos) << clash;

  fs::create_hard_link(file("A.h5"), file("hard.h5"));
  const std::vector<KeyedPath> linked = {{"output.checkpoint.path", file("hard.h5")}};
  const std::string by_link = read_write_clash(reads, linked);
  EXPECT_NE(by_link.find("output.checkpoint.path " + file("hard.h5") + " is the same file as matrix.hdf5.file"),
            std::string::npos)
      << by_link;
}

TEST_F(PathClash, TemporaryOverAnInputIsRefused) {
  const std::string partial = temporary_output_name(file("out.h5"));
  std::ofstream(partial) << "start block";
  const std::vector<KeyedPath> reads = {{"eigensolver.start.file", partial}};
  const std::vector<KeyedPath> writes = {{"output.path", file("out.h5")}};
  const std::string clash = read_write_clash(reads, writes);
  EXPECT_NE(clash.find("is written through " + partial), std::string::npos) << clash;
  EXPECT_NE(clash.find("eigensolver.start.file"), std::string::npos) << clash;
}

TEST_F(PathClash, TwoOutputsInOneFileAreRefused) {
  const std::vector<KeyedPath> writes = {{"output.path", file("out.h5")},
                                         {"output.checkpoint.path", file("sub/../out.h5")}};
  const std::string clash = read_write_clash({}, writes);
  EXPECT_NE(clash.find("output.path " + file("out.h5") + " and output.checkpoint.path"), std::string::npos) << clash;
  EXPECT_NE(clash.find("are the same file"), std::string::npos) << clash;
}

TEST_F(PathClash, DistinctFilesAndTheResumedCheckpointPass) {
  std::ofstream(file("ck.h5")) << "checkpoint";
  const std::vector<KeyedPath> reads = {{"matrix.hdf5.file", file("A.h5")}, {"resume", file("ck.h5")}};
  const std::vector<KeyedPath> writes = {
      {"output.path", file("out.h5")}, {"output.checkpoint.path", file("ck.h5"), "resume"}, {"output.stop_file", ""}};
  EXPECT_EQ(read_write_clash(reads, writes), "");
  // The result over the checkpoint it resumed from is refused: only the checkpoint may replace it.
  const std::vector<KeyedPath> over_resume = {{"output.path", file("ck.h5")}};
  EXPECT_NE(read_write_clash(reads, over_resume).find("output.path " + file("ck.h5") + " is resume"),
            std::string::npos);
}

}  // namespace
}  // namespace blockeigs::io
