#include "apps/run/steps/run_paths.hpp"

#include <filesystem>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {
namespace {

void add_matrix(RunPaths& paths, const io::MatrixConfig& matrix, const std::string& section) {
  if (matrix.source == io::MatrixSource::hdf5) paths.reads.push_back({section + ".hdf5.file", matrix.file});
  if (matrix.source == io::MatrixSource::matrix_market)
    paths.reads.push_back({section + ".matrix_market.file", matrix.file});
}

// What both apps share: the matrix, the partition file, resume and the outputs.
RunPaths common_paths(const io::MatrixConfig& matrix, const cfg::ExecutionConfig& execution,
                      const cfg::OutputConfig& output, const std::string& resume) {
  RunPaths paths;
  add_matrix(paths, matrix, "matrix");
  paths.reads.push_back({"resume", resume});
  const std::string& partition = execution.partition_file;
  std::error_code error;
  if (!partition.empty()) {
    if (std::filesystem::exists(partition, error))
      paths.reads.push_back({"execution.partition_file", partition});
    else
      paths.writes.push_back({"execution.partition_file", partition});
  }
  paths.writes.push_back({"output.path", output.path});
  paths.writes.push_back({"output.checkpoint.path", output.checkpoint.path, "resume"});
  paths.writes.push_back({"output.stop_file", output.checkpoint.stop_file});
  return paths;
}

}  // namespace

RunPaths run_paths(const cfg::EigsConfig& config) {
  RunPaths paths = common_paths(config.matrix, config.execution, config.output, config.resume);
  if (config.matrix_b) add_matrix(paths, *config.matrix_b, "matrix_b");
  paths.reads.push_back({"eigensolver.start.file", config.eigensolver.start_file});
  paths.reads.push_back({"eigensolver.constraints.file", config.eigensolver.constraints_file});
  return paths;
}

RunPaths run_paths(const cfg::CgConfig& config) {
  RunPaths paths = common_paths(config.matrix, config.execution, config.output, config.resume);
  paths.reads.push_back({"block_cg.rhs.file", config.solver.rhs_file});
  return paths;
}

void check_inputs_not_outputs(const RunPaths& paths, MPI_Comm comm) {
  solver::collectively(comm, [&] {
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (rank != 0) return;
    if (const std::string clash = io::read_write_clash(paths.reads, paths.writes); !clash.empty()) fail_input(clash);
  });
}

}  // namespace blockeigs::apps
