#include "apps/build_info.hpp"

#include "blockeigs_commit.hpp"  // generated at build time by cmake/git_commit.cmake

namespace blockeigs::apps {

std::string_view version() { return BLOCKEIGS_VERSION; }

std::string_view git_commit() { return BLOCKEIGS_GIT_COMMIT; }

std::string version_text(std::string_view program) {
  std::string text;
  text.append(program).append(" ").append(version()).append("\n");
  text.append("commit  ").append(git_commit()).append("\n");
  const std::string_view cuda = BLOCKEIGS_BUILD_CUDA, petsc = BLOCKEIGS_BUILD_PETSC;
  text.append("CUDA    ").append(cuda.empty() ? "off" : "on (" + std::string(cuda) + ")").append("\n");
  text.append("PETSc   ").append(petsc.empty() ? "off" : "on (" + std::string(petsc) + ")").append("\n");
  text.append("HDF5    ").append(BLOCKEIGS_BUILD_HDF5).append("\n");
  return text;
}

}  // namespace blockeigs::apps
