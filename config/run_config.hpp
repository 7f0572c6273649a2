// A run of block-eigs or block-cg as its YAML config describes it, read once:
// the solver sections straight into the solvers' own option types
// (solver::LobpcgOptions, BlockCgOptions, PreconditionerOptions with its
// ChebyshevOptions, HaloOptions), whose defaults are the only ones; beside
// them what the apps do around a solve (matrices, start blocks, output).
// Unknown keys, wrong types and out-of-range values are InputErrors that name
// the file, the line and the key ("configs/x.yaml:7: eigensolver.tolerance must
// be positive, got -1"). The same readers take Python's keywords (keywords.hpp).
//
// The full key reference is in docs/config.md; configs/ holds examples.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/enums.hpp"
#include "core/env_overrides.hpp"
#include "io/matrix_config.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/eigen_method.hpp"
#include "solver/window/window.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/halo/halo_transport.hpp"
#include "solver/precond/preconditioner_options.hpp"

namespace blockeigs::cfg {

struct ExecutionConfig {
  Backend backend = Backend::automatic;
  Algorithm spmm_algorithm = Algorithm::automatic;
  Precision spmm_precision = Precision::fp64;
  PartitionMethod partition = PartitionMethod::automatic;
  LocalOrder local_order = LocalOrder::automatic;
  // execution.partition_file: the rows' distribution read from it where it
  // exists (no partitioner, no local order), else computed and saved there.
  std::string partition_file;
  solver::HaloOptions halo;                                // execution.halo
  std::int64_t mpi_chunk_bytes = default_mpi_chunk_bytes;  // the largest MPI message (at most 1 GiB is used)
  std::optional<std::int64_t> memory_limit_bytes;          // caps each node's and GPU's memory; none: no cap
};

// output.checkpoint: the run's state written every so many iterations or
// seconds (whichever comes first; 0: not by that measure) and when a signal
// interrupts it.
struct CheckpointConfig {
  std::string path;  // empty: no checkpoints
  int every_iterations = 0;
  double every_seconds = 0;
  // output.stop_file: a file whose appearance stops the run as a signal would
  // (empty: none). Read from output, kept here beside what a stop writes.
  std::string stop_file;
};

struct OutputConfig {
  std::string path;  // HDF5 result file; empty: no file written
  CheckpointConfig checkpoint;
  bool eigenvectors = true;  // block-eigs: /eigenvectors written (false: the values, residuals and history only)
  bool monitor = true;       // monitor lines on rank 0
  int monitor_every = 1;     // a line every this many iterations (and the first and the last)
};

enum class ConstraintsSource { none, constant, hdf5 };

// eigensolver: LOBPCG's options as the solver takes them, and what the app
// gives it beside them.
struct EigensolverSettings {
  solver::EigenMethod method = solver::EigenMethod::automatic;  // LOBPCG or the Chebyshev filter (eigen_method.hpp)
  solver::LobpcgOptions lobpcg;  // k, block_size, which, tolerance, convergence_test, max_iterations, ...
  solver::FilterTuning filter;   // method chebyshev_filter: filter_degree, filter_max_degree
  // eigensolver.interval [a, b]: every pair in it (solver/window), in place of k and which; with the
  // window's keys slices, dos_vectors, dos_degree and window_degree.
  bool interval = false;
  solver::WindowOptions window;
  WindowCount count = WindowCount::automatic;  // eigensolver.count: how the window's eigenvalues are counted
  // auto by default: what the measurements say for the end wanted (solver::resolve_preconditioner).
  solver::PreconditionerOptions preconditioner{PreconditionerKind::automatic, solver::ChebyshevOptions{}, {}};
  std::string start_file;  // optional HDF5 file with a start block
  std::string start_dataset = "/X";
  // eigensolver.constraints: a block Y (rows x m) the eigenvectors are kept
  // B-orthogonal to: `constant` (the all-ones vector, the null space of a
  // graph Laplacian) or {file, dataset} (HDF5, the input's numbering).
  ConstraintsSource constraints = ConstraintsSource::none;
  std::string constraints_file;
  std::string constraints_dataset = "/Y";
};

enum class RhsSource { random, hdf5, known_solution };

// block_cg: block CG's options as the solver takes them, the preconditioner,
// and the right-hand sides the app makes or reads.
struct BlockCgSettings {
  solver::BlockCgOptions cg;  // rtol, atol, max_iterations, stagnation_window
  solver::PreconditionerOptions preconditioner;
  RhsSource rhs = RhsSource::random;
  int columns = 16;      // random / known_solution
  std::string rhs_file;  // hdf5
  std::string rhs_dataset = "/B";
  bool rhs_output = true;  // random / known_solution: B written to the result file as /B
  std::uint64_t seed = 1;  // random / known_solution
};

struct EigsConfig {
  std::string path;                    // the config file itself, for messages
  std::vector<std::string> overrides;  // the command line's --set KEY=VALUE, applied
  io::MatrixConfig matrix;
  std::optional<io::MatrixConfig> matrix_b;  // B of A x = lambda B x (symmetric positive definite); none: B = I
  EigensolverSettings eigensolver;
  ExecutionConfig execution;
  OutputConfig output;
  std::string resume;  // a checkpoint to go on from; empty: a fresh start
};

struct CgConfig {
  std::string path;
  std::vector<std::string> overrides;
  io::MatrixConfig matrix;
  BlockCgSettings solver;
  ExecutionConfig execution;
  OutputConfig output;
  std::string resume;  // a checkpoint to go on from; empty: a fresh start
};

// `overrides`: "KEY=VALUE" from the command line (--set), applied over the
// file in order before anything is read, so that each is checked like the
// file's own keys; a message about one names it ("--set eigensolver.k=0:
// eigensolver.k must be at least 1, got 0"). KEY is a dotted key path;
// VALUE is YAML (4, largest, {type: laplacian_1d, nx: 100}); sections the
// file lacks are made. `environment`: the environment's overrides
// (core/env_overrides.hpp), applied the same way after them (the environment
// wins); a message about one names the variable
// ("BLOCKEIGS_HALO_TRANSPORT=tcp: execution.halo.transport must be ...").
// Why `assignment` is not KEY=VALUE with KEY a dotted key path ("expected
// KEY=VALUE, e.g. --set eigensolver.k=4"); empty where it is. The apps refuse
// such a --set as a bad command line (exit 2) before reading the file.
std::string override_form_problem(std::string_view assignment);

EigsConfig read_eigs_config(const std::string& path, std::span<const std::string> overrides = {},
                            std::span<const env::KeyOverride> environment = {});
CgConfig read_cg_config(const std::string& path, std::span<const std::string> overrides = {},
                        std::span<const env::KeyOverride> environment = {});

// For tests and for configs embedded in a program: parse YAML text, naming
// `source` in messages as if it were the file.
EigsConfig parse_eigs_config(const std::string& yaml_text, const std::string& source,
                             std::span<const std::string> overrides = {},
                             std::span<const env::KeyOverride> environment = {});
CgConfig parse_cg_config(const std::string& yaml_text, const std::string& source,
                         std::span<const std::string> overrides = {},
                         std::span<const env::KeyOverride> environment = {});

// The execution section alone, for programs without a config file (the
// benchmarks): the defaults with the environment's overrides applied.
ExecutionConfig environment_execution_config(std::span<const env::KeyOverride> environment);

}  // namespace blockeigs::cfg
