// What a binary was built from and with, for --version and the provenance
// attributes of result files: the project version, the git commit (captured
// at build time; "unknown" outside a git checkout), and whether CUDA, PETSc
// and parallel HDF5 are in. Depends on nothing else in the project.
#pragma once

#include <string>
#include <string_view>

namespace blockeigs::apps {

std::string_view version();     // "0.2.0"
std::string_view git_commit();  // `git describe --always --dirty`, or "unknown"

// "block-eigs 0.2.0" and one line per build fact, ending in a newline:
//   commit  efa5380-dirty
//   CUDA    on (13.0.48)     | off
//   PETSc   on (PETSc 3.18.5, SLEPc 3.18.2) | off
//   HDF5    1.10.8, parallel (MPI-IO) | 1.10.8, serial
std::string version_text(std::string_view program);

}  // namespace blockeigs::apps
