// What every MPI app shares: MPI start-up, the command line (--help,
// --version, repeated --set KEY=VALUE, one config file), and the error policy
// of docs/architecture.md section 4. An error all ranks agreed on is printed
// once by rank 0 and every rank exits with exit_error; any other exception
// aborts the whole job (MPI_Abort), so no rank is left waiting in a
// collective.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "apps/cli.hpp"

namespace blockeigs::apps {

struct AppInfo {
  std::string name;   // "block-eigs"
  std::string usage;  // full --help text
};

// The command line of block-eigs and block-cg: [--set KEY=VALUE]... [--dry-run] CONFIG
// (options and the config in any order; "--set=KEY=VALUE" too). A --set not of
// the form KEY=VALUE is a bad command line, like an unknown option; its VALUE
// is checked later, with the file.
struct ConfigCommandLine {
  std::string config;
  std::vector<std::string> overrides;  // "KEY=VALUE", in order
  bool dry_run = false;                // --dry-run: print the plan, solve nothing
  std::string problem;                 // non-empty: a bad command line, why
};
ConfigCommandLine parse_config_command_line(const std::vector<std::string>& args);

// Runs `body(config_path, comm, overrides, dry_run)` on every rank and returns its exit code.
int run_mpi_app(int argc, char** argv, const AppInfo& info,
                const std::function<int(const std::string&, MPI_Comm, const std::vector<std::string>&, bool)>& body);

}  // namespace blockeigs::apps
