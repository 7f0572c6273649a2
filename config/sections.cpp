// The sections of a config that feed the solvers and the apps' runs, read
// straight into their types. docs/config.md is the user's reference to them;
// keep the two in step (tests/unit/config/test_config_defaults.cpp checks its
// defaults against the option structs). Typed reading and the key checks are
// io/config_yaml.cpp's.
#include "config/sections.hpp"

#include <array>

namespace blockeigs::cfg {
namespace {

using io::yaml::Field;
using io::yaml::Named;
using io::yaml::Value;
using io::yaml::Variant;
namespace yaml = io::yaml;

// Spellings of the enums come from core/enums.cpp; the order here is the messages'.
template <class Enum, std::size_t N>
std::array<Named<Enum>, N> spelled(const std::array<Enum, N>& values) {
  std::array<Named<Enum>, N> table;
  for (std::size_t i = 0; i < N; ++i) table[i] = {to_string(values[i]), values[i]};
  return table;
}

const auto kBackends = spelled(std::array{Backend::automatic, Backend::cpu, Backend::cuda});
const auto kAlgorithms = spelled(std::array{Algorithm::automatic, Algorithm::reference, Algorithm::row_split,
                                            Algorithm::merge_based, Algorithm::cusparse});
const auto kPrecisions = spelled(std::array{Precision::fp64, Precision::fp32});
const auto kMethods = spelled(
    std::array{solver::EigenMethod::automatic, solver::EigenMethod::lobpcg, solver::EigenMethod::chebyshev_filter});
const auto kSpectrumEnds = spelled(std::array{SpectrumEnd::smallest, SpectrumEnd::largest});
const auto kStoppingTests = spelled(std::array{StoppingTest::backward, StoppingTest::relative});
// An eigensolver's preconditioner may be auto (chosen by the end it wants); block CG's is named.
const auto kEigenPreconditioners =
    spelled(std::array{PreconditionerKind::automatic, PreconditionerKind::none, PreconditionerKind::jacobi,
                       PreconditionerKind::chebyshev, PreconditionerKind::petsc});
const auto kPreconditioners = spelled(std::array{PreconditionerKind::none, PreconditionerKind::jacobi,
                                                 PreconditionerKind::chebyshev, PreconditionerKind::petsc});
const auto kPartitions =
    spelled(std::array{PartitionMethod::automatic, PartitionMethod::contiguous, PartitionMethod::graph});
const auto kLocalOrders = spelled(std::array{LocalOrder::automatic, LocalOrder::none, LocalOrder::band});
const auto kWindowCounts = spelled(std::array{WindowCount::automatic, WindowCount::inertia, WindowCount::density});
const auto kSearchPrecisions =
    spelled(std::array{SearchPrecision::automatic, SearchPrecision::fp64, SearchPrecision::fp32});
const auto kHaloTransports = spelled(std::array{HaloTransport::automatic, HaloTransport::peer, HaloTransport::nccl,
                                                HaloTransport::mpi, HaloTransport::staged_mpi});
const auto kChebyshevPrecisions =
    spelled(std::array{ChebyshevPrecision::automatic, ChebyshevPrecision::fp32, ChebyshevPrecision::fp64});

// block_cg.rhs: `source` decides between a column count and a file.
const std::array<Variant<RhsSource>, 3> kRhsSources{{
    {"random", RhsSource::random, {}, {"columns", "output"}},
    {"hdf5", RhsSource::hdf5, {"file"}, {"dataset"}},
    {"known_solution", RhsSource::known_solution, {}, {"columns", "output"}},
}};

// preconditioner as a mapping: `type` decides which other keys it takes.
const std::array<Variant<PreconditionerKind>, 4> kPreconditionerTypes{{
    {"none", PreconditionerKind::none, {}},
    {"jacobi", PreconditionerKind::jacobi, {}},
    {"chebyshev", PreconditionerKind::chebyshev, {}, {"degree", "lower", "jacobi", "precision"}},
    {"petsc", PreconditionerKind::petsc, {"options"}},
}};

}  // namespace

// preconditioner: a name, or a mapping with `type` and that type's keys.
solver::PreconditionerOptions read_preconditioner(const Value& v, bool eigensolver) {
  solver::PreconditionerOptions config;
  solver::ChebyshevOptions& chebyshev = config.chebyshev;
  if (v.node().IsScalar()) {
    config.kind = eigensolver ? v.choice(kEigenPreconditioners) : v.choice(kPreconditioners);
    if (config.kind == PreconditionerKind::petsc)
      v.fail(" petsc needs its PETSc options: {type: petsc, options: \"-pc_type gamg\"}");
    return config;
  }
  std::vector<Field> fields{
      {.key = "type", .read = [](const Value&) {}},  // read by select_variant
      {.key = "degree",
       .read =
           [&](const Value& d) {
             chebyshev.degree = d.node().IsScalar() && d.node().Scalar() == "auto"
                                    ? 0
                                    : static_cast<int>(d.integer(1, max_chebyshev_degree));
           }},
      {.key = "lower",
       .read =
           [&](const Value& l) {
             if (l.node().IsScalar() && l.node().Scalar() == "auto") return void(chebyshev.lower = 0);
             chebyshev.lower = l.number();
             if (chebyshev.lower >= 1)
               l.fail(" must be below 1 (the interval [lower b, b] would be empty or inverted), got ",
                      l.node().Scalar());
             if (chebyshev.lower <= 0)
               l.fail(" must be positive (the interval [lower b, b] must not reach 0), got ", l.node().Scalar());
           }},
      {.key = "jacobi", .read = [&](const Value& j) { chebyshev.jacobi = j.boolean(); }},
      {.key = "precision", .read = [&](const Value& p) { chebyshev.precision = p.choice(kChebyshevPrecisions); }},
      {.key = "options", .read = [&](const Value& o) { config.petsc_options = o.string(); }},
  };
  if (!v.node().IsMap())
    v.fail(" must be ", eigensolver ? "auto, " : "",
           "none, jacobi, chebyshev or a mapping such as {type: chebyshev, degree: 8}, got a list");
  config.kind = yaml::select_variant<PreconditionerKind>(v, "type", kPreconditionerTypes, false, fields).value;
  yaml::read_mapping(v, fields);
  return config;
}

namespace {

// eigensolver.constraints: `constant`, or {file, dataset} of an HDF5 block.
void read_constraints(const Value& v, EigensolverSettings& config) {
  if (v.node().IsScalar()) {
    if (v.node().Scalar() != "constant")
      v.fail(" must be constant (the all-ones vector) or a mapping {file: F, dataset: D}, got '", v.node().Scalar(),
             "'");
    config.constraints = ConstraintsSource::constant;
    return;
  }
  if (!v.node().IsMap()) v.fail(" must be constant or a mapping {file: F, dataset: D}, got a list");
  config.constraints = ConstraintsSource::hdf5;
  yaml::read_mapping(
      v,
      {
          {.key = "file", .read = [&](const Value& f) { config.constraints_file = f.file_name(); }, .required = true},
          {.key = "dataset", .read = [&](const Value& d) { config.constraints_dataset = d.string(); }},
      });
}

// eigensolver.interval: [a, b], two finite numbers, a < b.
void read_interval(const Value& v, solver::WindowOptions& window) {
  if (!v.node().IsSequence() || v.node().size() != 2)
    v.fail(" must be a list of two numbers [a, b] (every eigenpair with a <= lambda <= b)");
  const double a = Value(v.doc(), v.node()[0], v.path() + "[0]", v.mark()).number();
  const double b = Value(v.doc(), v.node()[1], v.path() + "[1]", v.mark()).number();
  if (!(a < b)) v.fail(" must be [a, b] with a < b, got [", a, ", ", b, "]");
  window.lower = a;
  window.upper = b;
}

// What a window (eigensolver.interval) replaces or does not take.
void check_window(const Value& section, const EigensolverSettings& config, const std::optional<Value>& method,
                  const std::vector<Value>& pair_keys) {
  if (!pair_keys.empty())
    pair_keys.front().fail(" is not taken with eigensolver.interval, which asks for every pair in [a, b]: remove one");
  if (method && config.method != solver::EigenMethod::automatic)
    method->fail(
        " must be auto with eigensolver.interval (a window has its own method: polynomial-filtered "
        "subspace iteration on slices)");
  if (solver::names_a_preconditioner(config.preconditioner))
    section.member("preconditioner")
        .fail(" is not taken with eigensolver.interval (the window's filter is its acceleration): remove it");
  if (config.constraints != ConstraintsSource::none)
    section.member("constraints").fail(" is not taken with eigensolver.interval: remove one of them");
  if (!config.start_file.empty())
    section.member("start").fail(" is not taken with eigensolver.interval: remove one of them");
}

}  // namespace

EigensolverSettings read_eigensolver(const Value& section) {
  EigensolverSettings config;
  solver::LobpcgOptions& lobpcg = config.lobpcg;
  std::optional<Value> block_size;        // checked against k once both are known
  std::optional<Value> search_precision;  // and against the preconditioner
  std::optional<Value> method;            // against the preconditioner and the constraints
  std::optional<Value> interval;          // against k, which, the method and what a window does not take
  std::vector<Value> window_keys;         // slices, slice_groups, count, dos_*, window_degree: with interval
  std::vector<Value> pair_keys;           // k, which, block_size: not with interval
  const auto window_key = [&](const Value& v, int& field, std::int64_t min, std::int64_t max) {
    field = static_cast<int>(v.integer(min, max));
    window_keys.push_back(v);
  };
  yaml::read_mapping(
      section,
      {
          {.key = "method",
           .read =
               [&](const Value& v) {
                 config.method = v.choice(kMethods);
                 method = v;
               }},
          {.key = "k",
           .read =
               [&](const Value& v) {
                 lobpcg.k = v.integer<int>(1);
                 pair_keys.push_back(v);
               }},
          {.key = "interval",
           .read =
               [&](const Value& v) {
                 read_interval(v, config.window);
                 config.interval = true;
                 interval = v;
               }},
          {.key = "slices", .read = [&](const Value& v) { window_key(v, config.window.slices, 0, 4096); }},
          {.key = "slice_groups", .read = [&](const Value& v) { window_key(v, config.window.groups, 0, 4096); }},
          {.key = "count",
           .read =
               [&](const Value& v) {
                 config.count = v.choice(kWindowCounts);
                 window_keys.push_back(v);
               }},
          {.key = "dos_vectors", .read = [&](const Value& v) { window_key(v, config.window.dos_vectors, 2, 4096); }},
          {.key = "dos_degree", .read = [&](const Value& v) { window_key(v, config.window.dos_degree, 0, 100000); }},
          {.key = "window_degree",
           .read = [&](const Value& v) { window_key(v, config.window.filter_degree, 0, 100000); }},
          {.key = "filter_degree",
           .read = [&](const Value& v) { config.filter.first_degree = static_cast<int>(v.integer(0, 1000)); }},
          {.key = "filter_guard_degree_percent",
           .read = [&](const Value& v) { config.filter.guard_degree_percent = static_cast<int>(v.integer(0, 100)); }},
          {.key = "filter_max_degree",
           .read = [&](const Value& v) { config.filter.max_degree = static_cast<int>(v.integer(0, 1000)); }},
          {.key = "block_size",
           .read =
               [&](const Value& v) {
                 lobpcg.block_size = v.integer<int>(0);
                 block_size = v;
                 pair_keys.push_back(v);
               }},
          {.key = "which",
           .read =
               [&](const Value& v) {
                 lobpcg.which = v.choice(kSpectrumEnds);
                 pair_keys.push_back(v);
               }},
          {.key = "tolerance", .read = [&](const Value& v) { lobpcg.tolerance = v.positive_number(); }},
          {.key = "convergence_test", .read = [&](const Value& v) { lobpcg.test = v.choice(kStoppingTests); }},
          {.key = "max_iterations", .read = [&](const Value& v) { lobpcg.max_iterations = v.integer<int>(1); }},
          {.key = "stagnation_window", .read = [&](const Value& v) { lobpcg.stagnation_window = v.integer<int>(0); }},
          {.key = "recompute_interval",
           .read = [&](const Value& v) { lobpcg.tuning.recompute_interval = static_cast<int>(v.integer(0, 1000000)); }},
          {.key = "preconditioner",
           .read = [&](const Value& v) { config.preconditioner = read_preconditioner(v, true); }},
          {.key = "search_precision",
           .read =
               [&](const Value& v) {
                 lobpcg.search_precision = v.choice(kSearchPrecisions);
                 search_precision = v;
               }},
          {.key = "seed", .read = [&](const Value& v) { lobpcg.seed = v.integer<std::uint64_t>(); }},
          {.key = "constraints", .read = [&](const Value& v) { read_constraints(v, config); }},
          {.key = "start",
           .read =
               [&](const Value& v) {
                 yaml::read_mapping(
                     v, {
                            {.key = "file",
                             .read = [&](const Value& f) { config.start_file = f.file_name(); },
                             .required = true},
                            {.key = "dataset", .read = [&](const Value& d) { config.start_dataset = d.string(); }},
                        });
               }},
      });
  if (interval) check_window(section, config, method, pair_keys);
  if (!interval && !window_keys.empty())
    window_keys.front().fail(" is a window's (eigensolver.interval): give the interval, or remove it");
  if (method && config.method == solver::EigenMethod::chebyshev_filter) {
    if (solver::names_a_preconditioner(config.preconditioner))
      method->fail(
          " chebyshev_filter takes no preconditioner (the filter is its own acceleration): use method "
          "lobpcg, or preconditioner none");
    if (config.constraints != ConstraintsSource::none)
      method->fail(" chebyshev_filter takes no constraints (eigensolver.constraints): use method lobpcg (or auto)");
  }
  if (block_size && lobpcg.block_size != 0 && lobpcg.block_size < lobpcg.k)
    block_size->fail(" must be 0 (automatic) or at least k = ", lobpcg.k, ", got ", lobpcg.block_size);
  if (search_precision && !search_precision_allows_preconditioner(lobpcg.search_precision) &&
      solver::names_a_preconditioner(config.preconditioner))
    search_precision->fail(" ", search_precision_needs_no_preconditioner);
  return config;
}

namespace {

void read_rhs(const Value& section, BlockCgSettings& config) {
  std::vector<Field> fields{
      {.key = "source", .read = [](const Value&) {}},  // read by select_variant
      {.key = "columns", .read = [&](const Value& v) { config.columns = v.integer<int>(1); }},
      {.key = "file", .read = [&](const Value& v) { config.rhs_file = v.file_name(); }},
      {.key = "dataset", .read = [&](const Value& v) { config.rhs_dataset = v.string(); }},
      {.key = "output", .read = [&](const Value& v) { config.rhs_output = v.boolean(); }},
  };
  config.rhs = yaml::select_variant<RhsSource>(section, "source", kRhsSources, true, fields).value;
  yaml::read_mapping(section, fields);
}

}  // namespace

BlockCgSettings read_block_cg(const Value& section) {
  BlockCgSettings config;
  solver::BlockCgOptions& cg = config.cg;
  yaml::read_mapping(
      section,
      {
          {.key = "rhs", .read = [&](const Value& v) { read_rhs(v, config); }},
          {.key = "rtol", .read = [&](const Value& v) { cg.rtol = v.positive_number(); }},
          {.key = "atol", .read = [&](const Value& v) { cg.atol = v.non_negative_number(); }},
          {.key = "max_iterations", .read = [&](const Value& v) { cg.max_iterations = v.integer<int>(1); }},
          {.key = "stagnation_window", .read = [&](const Value& v) { cg.stagnation_window = v.integer<int>(0); }},
          {.key = "preconditioner",
           .read = [&](const Value& v) { config.preconditioner = read_preconditioner(v, false); }},
          {.key = "seed", .read = [&](const Value& v) { config.seed = v.integer<std::uint64_t>(); }},
      });
  return config;
}

namespace {

// execution.halo.cuda_aware_mpi: auto (none), true or false.
std::optional<bool> read_cuda_aware(const Value& v) {
  constexpr std::array<std::string_view, 3> names{"auto", "true", "false"};
  const std::size_t chosen = v.one_of(names);
  if (chosen == 0) return std::nullopt;
  return chosen == 1;
}

}  // namespace

solver::HaloOptions read_halo(const Value& section) {
  solver::HaloOptions config;
  yaml::read_mapping(
      section,
      {
          {.key = "transport", .read = [&](const Value& v) { config.transport = v.choice(kHaloTransports); }},
          {.key = "peer", .read = [&](const Value& v) { config.peer = v.boolean(); }},
          {.key = "cuda_aware_mpi", .read = [&](const Value& v) { config.cuda_aware_mpi = read_cuda_aware(v); }},
          {.key = "piece_bytes", .read = [&](const Value& v) { config.piece_bytes = v.integer<std::int64_t>(1); }},
      });
  return config;
}

ExecutionConfig read_execution(const Value& section) {
  ExecutionConfig config;
  yaml::read_mapping(
      section,
      {
          {.key = "backend", .read = [&](const Value& v) { config.backend = v.choice(kBackends); }},
          {.key = "spmm_algorithm", .read = [&](const Value& v) { config.spmm_algorithm = v.choice(kAlgorithms); }},
          {.key = "spmm_precision", .read = [&](const Value& v) { config.spmm_precision = v.choice(kPrecisions); }},
          {.key = "partition", .read = [&](const Value& v) { config.partition = v.choice(kPartitions); }},
          {.key = "local_order", .read = [&](const Value& v) { config.local_order = v.choice(kLocalOrders); }},
          {.key = "partition_file", .read = [&](const Value& v) { config.partition_file = v.file_name(); }},
          {.key = "halo", .read = [&](const Value& v) { config.halo = read_halo(v); }},
          {.key = "mpi_chunk_bytes",
           .read = [&](const Value& v) { config.mpi_chunk_bytes = v.integer<std::int64_t>(1); }},
          {.key = "memory_limit_bytes",
           .read = [&](const Value& v) { config.memory_limit_bytes = v.integer<std::int64_t>(0); }},
      });
  return config;
}

namespace {

CheckpointConfig read_checkpoint(const Value& section) {
  CheckpointConfig config;
  yaml::read_mapping(
      section,
      {
          {.key = "path", .read = [&](const Value& v) { config.path = v.string(); }, .required = true},
          {.key = "every_iterations", .read = [&](const Value& v) { config.every_iterations = v.integer<int>(1); }},
          {.key = "every_seconds", .read = [&](const Value& v) { config.every_seconds = v.positive_number(); }},
      });
  return config;
}

}  // namespace

OutputConfig read_output(const Value& section) {
  OutputConfig config;
  std::optional<Value> checkpoint;
  yaml::read_mapping(
      section, {
                   // Relative to the working directory, like any output path on a command line.
                   {.key = "path", .read = [&](const Value& v) { config.path = v.string(); }},
                   {.key = "monitor", .read = [&](const Value& v) { config.monitor = v.boolean(); }},
                   {.key = "eigenvectors", .read = [&](const Value& v) { config.eigenvectors = v.boolean(); }},
                   {.key = "monitor_every", .read = [&](const Value& v) { config.monitor_every = v.integer<int>(1); }},
                   {.key = "checkpoint",
                    .read =
                        [&](const Value& v) {
                          const std::string stop_file = config.checkpoint.stop_file;
                          config.checkpoint = read_checkpoint(v);
                          config.checkpoint.stop_file = stop_file;
                          checkpoint = v;
                        }},
                   // Relative to the working directory, like the other output paths.
                   {.key = "stop_file", .read = [&](const Value& v) { config.checkpoint.stop_file = v.string(); }},
               });
  if (checkpoint && !config.path.empty() && config.checkpoint.path == config.path)
    checkpoint->fail(".path is output.path too: a checkpoint needs a file of its own");
  return config;
}

}  // namespace blockeigs::cfg
