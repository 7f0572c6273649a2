#include "apps/app_main.hpp"

#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "solver/operator/collective.hpp"

namespace blockeigs::apps {

int run_mpi_app(int argc, char** argv, const AppInfo& info,
                const std::function<int(const std::string&, MPI_Comm)>& body) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);

  std::vector<std::string_view> args(argv + 1, argv + argc);
  int code = exit_ok;
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    if (rank == 0) std::printf("%s", info.usage.c_str());
  } else if (args.size() == 1 && args[0] == "--version") {
    if (rank == 0) std::printf("%s %s\n", info.name.c_str(), BLOCKEIGS_VERSION);
  } else if (args.size() != 1 || args[0].starts_with("-")) {
    if (rank == 0) std::fprintf(stderr, "%s: expected one config file\n\n%s", info.name.c_str(), info.usage.c_str());
    code = exit_usage;
  } else {
    try {
      code = body(std::string(args[0]), comm);
    } catch (const solver::AgreedError& e) {
      if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", info.name.c_str(), e.what());
      code = exit_error;
    } catch (const std::exception& e) {
      // Only this rank failed: the others may be inside a collective.
      std::fprintf(stderr, "%s: error on rank %d: %s\n", info.name.c_str(), rank, e.what());
      std::fflush(stderr);
      MPI_Abort(comm, exit_error);
    }
  }
  std::fflush(stdout);
  MPI_Finalize();
  return code;
}

}  // namespace blockeigs::apps
