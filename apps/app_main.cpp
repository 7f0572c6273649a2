#include "apps/app_main.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "apps/environment.hpp"
#include "apps/run/run_account.hpp"
#include "core/checks.hpp"
#include "dense/memory.hpp"
#include "config/run_config.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {

ConfigCommandLine parse_config_command_line(const std::vector<std::string>& args) {
  ConfigCommandLine line;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--set") {
      if (i + 1 >= args.size()) {
        line.problem = "--set needs KEY=VALUE";
        return line;
      }
      line.overrides.push_back(args[++i]);
    } else if (arg == "--dry-run") {
      line.dry_run = true;
    } else if (arg.starts_with("--set=")) {
      line.overrides.push_back(arg.substr(6));
    } else if (arg.starts_with("-") && arg.size() > 1) {
      line.problem = unknown_option(arg);
      return line;
    } else {
      files.push_back(arg);
    }
  }
  for (const std::string& assignment : line.overrides)
    if (const std::string problem = cfg::override_form_problem(assignment); !problem.empty()) {
      line.problem = "--set " + assignment + ": " + problem;
      return line;
    }
  if (files.size() != 1) {
    line.problem =
        files.empty() ? "expected one config file" : "expected one config file, got " + std::to_string(files.size());
    return line;
  }
  line.config = files.front();
  return line;
}

int run_mpi_app(int argc, char** argv, const AppInfo& info,
                const std::function<int(const std::string&, MPI_Comm, const std::vector<std::string>&, bool)>& body) {
  const double to_main = process_age();
  set_nccl_defaults();
  set_mpi_defaults();
  // The CUDA driver's initialisation (cuInit, behind the first device count:
  // tens of milliseconds) beside MPI_Init's; no context is made. The backend's
  // choice later finds it done, and so does the context's thread.
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  double driver_seconds = 0;
  std::thread driver([&] {
    (void)dense::cuda_device_count();
    driver_seconds = std::chrono::duration<double>(clock::now() - start).count();
  });
  const bool initialised = init_mpi(&argc, &argv);
  const double mpi_seconds = std::chrono::duration<double>(clock::now() - start).count();
  driver.join();
  record_startup_parts({to_main, mpi_seconds, driver_seconds});
  if (!initialised) return exit_error;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  if (!BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_rank(comm, &rank))) abort_mpi(comm, exit_error);

  const std::vector<std::string> args(argv + 1, argv + argc);
  const ConfigCommandLine line = parse_config_command_line(args);
  int code = exit_ok;
  if (const InfoRequest request = info_request(args); request != InfoRequest::none) {
    if (rank == 0) print_info(request, info.name, info.usage);
  } else if (!line.problem.empty()) {
    if (rank == 0) usage_error(info.name, line.problem);
    code = exit_usage;
  } else {
    try {
      code = body(line.config, comm, line.overrides, line.dry_run);
    } catch (const solver::AgreedError& e) {
      if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", info.name.c_str(), e.what());
      code = exit_error;
    } catch (const std::exception& e) {
      // Only this rank failed: the others may be inside a collective.
      std::fprintf(stderr, "%s: error on rank %d: %s\n", info.name.c_str(), rank, e.what());
      std::fflush(stderr);
      abort_mpi(comm, exit_error);
    }
  }
  std::fflush(stdout);
  finalize_mpi();
  return code;
}

}  // namespace blockeigs::apps
