// What every MPI app shares: MPI start-up, --help and --version, one config
// argument, and the error policy of ARCHITECTURE.md section 4. An error all
// ranks agreed on is printed once by rank 0 and every rank exits with
// exit_error; any other exception aborts the whole job (MPI_Abort), so no
// rank is left waiting in a collective.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

namespace blockeigs::apps {

// Exit codes shared by block-eigs and block-cg.
inline constexpr int exit_ok = 0;
inline constexpr int exit_error = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_not_converged = 3;

struct AppInfo {
  std::string name;   // "block-eigs"
  std::string usage;  // full --help text
};

// Runs `body(config_path, comm)` on every rank and returns its exit code.
int run_mpi_app(int argc, char** argv, const AppInfo& info,
                const std::function<int(const std::string&, MPI_Comm)>& body);

}  // namespace blockeigs::apps
