#include "apps/distributed_output.hpp"

#include "solver/collective.hpp"

namespace blockeigs::apps {

void write_distributed_output(MPI_Comm comm, const std::string& path,
                              const std::function<void(io::Hdf5Writer&)>& write_small,
                              const std::vector<DistributedBlock>& blocks) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  try {
    solver::collectively(comm, [&] {
      if (rank != 0) return;
      io::Hdf5Writer writer(path, true);
      write_small(writer);
      for (const DistributedBlock& block : blocks) writer.create_matrix(block.dataset, block.global_rows, block.cols);
      writer.close();
    });
    for (int turn = 0; turn < ranks; ++turn)
      solver::collectively(comm, [&] {
        if (rank != turn) return;
        io::Hdf5Writer writer(path, false);
        for (const DistributedBlock& block : blocks)
          writer.write_rows(block.dataset, block.first_row,
                            block.cols > 0 ? std::int64_t(block.local.size()) / block.cols : 0, block.cols,
                            block.local.data());
        writer.close();
      });
    solver::collectively(comm, [&] {
      if (rank == 0) io::commit_output(path);
    });
  } catch (...) {
    if (rank == 0) io::discard_output(path);
    throw;
  }
}

}  // namespace blockeigs::apps
