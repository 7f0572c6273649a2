#include "apps/run/steps/solve_steps.hpp"

#include "apps/cli.hpp"
#include "apps/run/steps/account_lines.hpp"
#include "core/checks.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {

bool is_root(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank == 0;
}

void check_resume_budget(const std::string& resume, int iteration, const char* key, int max_iterations) {
  if (iteration >= max_iterations)
    solver::fail_input_everywhere("resume: ", resume, " was taken after iteration ", iteration, ", and ", key, " is ",
                                  max_iterations, ": raise it to go on");
}

void write_result(const std::string& path, const std::vector<DistributedBlock>& blocks,
                  const std::function<void(io::Hdf5Writer&)>& datasets, RunAccount& account, MPI_Comm comm,
                  EarlyOutput* early) {
  account.lap(Phase::gather);
  const OutputTimes written = write_distributed_output(
      comm, path, datasets, blocks,
      [&](io::Hdf5Writer* w, double copying) { write_account(account, w, copying, comm); }, early);
  account.lap(Phase::write);
  if (is_root(comm)) std::printf("wrote %s%s\n", path.c_str(), describe(written).c_str());
}

int finish_run(RunAccount& account, const CheckpointGuard& guard, bool converged, MPI_Comm comm) {
  print_account_end(account, comm);
  if (guard.signal() != 0) return exit_interrupted;
  return converged ? exit_ok : exit_not_converged;
}

}  // namespace blockeigs::apps
