#include "apps/run/steps/account_lines.hpp"

#include <cstdio>

#include "core/checks.hpp"

namespace blockeigs::apps {

void print_setup(const RunAccount& account, MPI_Comm comm) {
  const RunTimes t = account.agreed(comm);
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::printf("%s", t.setup_line().c_str());
    std::fflush(stdout);
  }
}

void write_account(RunAccount& account, io::Hdf5Writer* writer, double copying, MPI_Comm comm) {
  account.lap(Phase::write);
  account.move(Phase::write, Phase::gather, copying);
  const RunTimes t = account.agreed(comm);
  if (writer) t.write_attributes(*writer);
}

RunTimes print_account_end(RunAccount& account, MPI_Comm comm) {
  account.lap(Phase::report);
  const RunTimes t = account.agreed(comm);
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == 0) std::printf("%s%s", t.output_line().c_str(), t.wall_line().c_str());
  return t;
}

}  // namespace blockeigs::apps
