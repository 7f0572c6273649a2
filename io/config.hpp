// YAML configs for block-eigs and block-cg, parsed into plain validated
// structs. YAML is parsed here and nowhere else. Unknown keys, wrong types
// and out-of-range values are InputErrors that name the file, the line and
// the key ("configs/x.yaml:7: eigensolver.tolerance must be positive, got -1").
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
#include "io/generators/generators.hpp"

namespace blockeigs::io {

enum class MatrixSource { generator, hdf5, matrix_market };

// The `matrix:` section, and `matrix_b:` (B of A x = lambda B x) in the same forms.

struct MatrixConfig {
  MatrixSource source = MatrixSource::generator;
  std::string file;          // hdf5 / matrix_market; relative paths are taken relative to the config file
  std::string group = "/A";  // hdf5
  GeneratorSpec generator;   // generator
};

// execution.halo: how halo rows travel between ranks (solver::HaloOptions).
struct HaloConfig {
  HaloTransport transport = HaloTransport::automatic;   // device blocks only; host blocks take MPI
  bool peer = true;                                     // false: automatic never takes CUDA IPC
  std::optional<bool> cuda_aware_mpi;                   // none (auto): as MPI says
  std::int64_t piece_bytes = default_halo_piece_bytes;  // staged MPI's pieces
};

struct ExecutionConfig {
  Backend backend = Backend::automatic;
  Algorithm spmm_algorithm = Algorithm::automatic;
  Precision spmm_precision = Precision::fp64;
  PartitionMethod partition = PartitionMethod::automatic;
  LocalOrder local_order = LocalOrder::automatic;
  // execution.partition_file: the rows' distribution read from it where it
  // exists (no partitioner, no local order), else computed and saved there.
  std::string partition_file;
  HaloConfig halo;
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
  bool monitor = true;    // monitor lines on rank 0
  int monitor_every = 1;  // a line every this many iterations (and the first and the last)
};

// eigensolver.preconditioner and block_cg.preconditioner: a name (none,
// jacobi, chebyshev) or a mapping {type: chebyshev, degree: 8, lower: 0.05,
// jacobi: true, precision: fp32} or {type: petsc, options: "-pc_type gamg"};
// the Chebyshev keys are those of solver::ChebyshevOptions.
struct PreconditionerConfig {
  std::string petsc_options;  // petsc: PETSc's options for the PC, "-pc_type gamg"
  PreconditionerKind kind = PreconditionerKind::none;
  int degree = 0;      // chebyshev: products per apply, 1..max_chebyshev_degree; 0: auto
  double lower = 0;    // chebyshev: the interval's lower end as a fraction of its upper, in (0, 1); 0: auto
  bool jacobi = true;  // chebyshev: the polynomial in D^{-1/2} A D^{-1/2}
  ChebyshevPrecision precision = ChebyshevPrecision::automatic;  // chebyshev: the polynomial's precision
};

enum class ConstraintsSource { none, constant, hdf5 };

// The enums below (SpectrumEnd, StoppingTest, PreconditionerKind,
// SearchPrecision) are core/enums.hpp's, the types the solvers take.
struct EigensolverConfig {
  int k = 8;           // eigenpairs wanted
  int block_size = 0;  // 0: chosen from k (k plus guard vectors)
  SpectrumEnd which = SpectrumEnd::smallest;
  double tolerance = 1e-6;
  StoppingTest test = StoppingTest::relative;
  int max_iterations = 1000;
  int stagnation_window = 2000;  // solver::LobpcgOptions::stagnation_window; 0: never
  PreconditionerConfig preconditioner;
  SearchPrecision search_precision = SearchPrecision::automatic;
  std::uint64_t seed = 1;
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

struct BlockCgConfig {
  RhsSource rhs = RhsSource::random;
  int columns = 16;      // random / known_solution
  std::string rhs_file;  // hdf5
  std::string rhs_dataset = "/B";
  bool rhs_output = true;  // random / known_solution: B written to the result file as /B
  double rtol = 1e-8;
  double atol = 0.0;
  int max_iterations = 10000;
  int stagnation_window = 2000;  // solver::BlockCgOptions::stagnation_window; 0: never
  PreconditionerConfig preconditioner;
  std::uint64_t seed = 1;
};

struct EigsConfig {
  std::string path;                    // the config file itself, for messages
  std::vector<std::string> overrides;  // the command line's --set KEY=VALUE, applied
  MatrixConfig matrix;
  std::optional<MatrixConfig> matrix_b;  // B of A x = lambda B x (symmetric positive definite); none: B = I
  EigensolverConfig eigensolver;
  ExecutionConfig execution;
  OutputConfig output;
  std::string resume;  // a checkpoint to go on from; empty: a fresh start
};

struct CgConfig {
  std::string path;
  std::vector<std::string> overrides;
  MatrixConfig matrix;
  BlockCgConfig solver;
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

}  // namespace blockeigs::io
