// The config schema: which sections and keys each app reads, their types,
// ranges and defaults. docs/config.md is the user's reference to it; keep
// the two in step. Typed reading and the key checks are in config_yaml.cpp.
#include "io/config.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>

#include "io/config_yaml.hpp"

namespace blockeigs::io {
namespace {

namespace fs = std::filesystem;
using yaml::Document;
using yaml::Field;
using yaml::Named;
using yaml::Value;
using yaml::Variant;

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
const auto kSpectrumEnds = spelled(std::array{SpectrumEnd::smallest, SpectrumEnd::largest});
const auto kStoppingTests = spelled(std::array{StoppingTest::backward, StoppingTest::relative});
const auto kPreconditioners = spelled(std::array{PreconditionerKind::none, PreconditionerKind::jacobi,
                                                 PreconditionerKind::chebyshev, PreconditionerKind::petsc});
const auto kPartitions =
    spelled(std::array{PartitionMethod::automatic, PartitionMethod::contiguous, PartitionMethod::graph});
const auto kLocalOrders = spelled(std::array{LocalOrder::automatic, LocalOrder::none, LocalOrder::band});
const auto kSearchPrecisions =
    spelled(std::array{SearchPrecision::automatic, SearchPrecision::fp64, SearchPrecision::fp32});
const auto kHaloTransports = spelled(std::array{HaloTransport::automatic, HaloTransport::peer, HaloTransport::nccl,
                                                HaloTransport::mpi, HaloTransport::staged_mpi});
const auto kChebyshevPrecisions =
    spelled(std::array{ChebyshevPrecision::automatic, ChebyshevPrecision::fp32, ChebyshevPrecision::fp64});

// matrix.generator: `type` decides which sizes are needed.
const std::array<Variant<GeneratorKind>, 8> kGeneratorTypes{{
    {"laplacian_1d", GeneratorKind::laplacian_1d, {"nx"}, {"stencil", "renumber"}},
    {"laplacian_2d", GeneratorKind::laplacian_2d, {"nx", "ny"}, {"stencil", "renumber"}},
    {"laplacian_3d", GeneratorKind::laplacian_3d, {"nx", "ny", "nz"}, {"stencil", "renumber"}},
    {"random_spd", GeneratorKind::random_spd, {"n"}, {"nnz_per_row", "seed", "renumber"}},
    {"fem_p1_1d", GeneratorKind::fem_p1_1d, {"nx", "part"}, {"renumber"}},
    {"fem_p1_2d", GeneratorKind::fem_p1_2d, {"nx", "ny", "part"}, {"renumber"}},
    {"fem_p1_3d", GeneratorKind::fem_p1_3d, {"nx", "ny", "nz", "part"}, {"renumber"}},
    {"graph_laplacian", GeneratorKind::graph_laplacian, {"graph", "n"}, {"renumber"}},
}};

const std::array<Named<FemPart>, 2> kFemParts{{{"stiffness", FemPart::stiffness}, {"mass", FemPart::mass}}};
const std::array<Named<GraphKind>, 2> kGraphs{{{"path", GraphKind::path}, {"cycle", GraphKind::cycle}}};

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

// The point stencil of each grid dimension when `stencil` is not given.
int default_stencil(GeneratorKind kind) {
  switch (kind) {
    case GeneratorKind::laplacian_1d: return 3;
    case GeneratorKind::laplacian_2d: return 5;
    default: return 7;
  }
}

// matrix.generator.renumber: a mapping whose one key, `seed`, is required.
void read_renumber(const Value& section, GeneratorSpec& spec) {
  spec.renumber = true;
  yaml::read_mapping(section, {{.key = "seed",
                                .read = [&](const Value& v) { spec.renumber_seed = v.integer<std::uint64_t>(); },
                                .required = true}});
}

GeneratorSpec read_generator(const Value& section) {
  GeneratorSpec spec;
  std::vector<Field> fields{
      {.key = "type", .read = [](const Value&) {}},  // read by select_variant
      {.key = "nx", .read = [&](const Value& v) { spec.nx = v.integer<std::int64_t>(1); }},
      {.key = "ny", .read = [&](const Value& v) { spec.ny = v.integer<std::int64_t>(1); }},
      {.key = "nz", .read = [&](const Value& v) { spec.nz = v.integer<std::int64_t>(1); }},
      {.key = "stencil", .read = [&](const Value& v) { spec.stencil = v.integer<int>(1); }},
      {.key = "n", .read = [&](const Value& v) { spec.n = v.integer<std::int64_t>(1); }},
      {.key = "nnz_per_row", .read = [&](const Value& v) { spec.nnz_per_row = v.integer<std::int64_t>(0); }},
      {.key = "seed", .read = [&](const Value& v) { spec.seed = v.integer<std::uint64_t>(); }},
      {.key = "renumber", .read = [&](const Value& v) { read_renumber(v, spec); }},
      {.key = "part", .read = [&](const Value& v) { spec.part = v.choice(kFemParts); }},
      {.key = "graph", .read = [&](const Value& v) { spec.graph = v.choice(kGraphs); }},
  };
  spec.kind = yaml::select_variant<GeneratorKind>(section, "type", kGeneratorTypes, false, fields).value;
  spec.stencil = default_stencil(spec.kind);
  yaml::read_mapping(section, fields);
  validate(spec, section.location());
  return spec;
}

// The file of an hdf5 or matrix_market source, and the group where one applies.
void read_matrix_file(const Value& section, MatrixConfig& matrix, bool has_group) {
  std::vector<Field> fields{
      {.key = "file", .read = [&](const Value& v) { matrix.file = v.file_name(); }, .required = true},
  };
  if (has_group) fields.push_back({.key = "group", .read = [&](const Value& v) { matrix.group = v.string(); }});
  yaml::read_mapping(section, fields);
}

MatrixConfig read_matrix(const Value& section) {
  constexpr std::array<std::string_view, 3> sources{"generator", "hdf5", "matrix_market"};
  std::vector<std::string_view> given;
  for (std::string_view source : sources)
    if (section.has(source)) given.push_back(source);
  if (given.size() > 1) section.fail(" takes exactly one source, got ", given[0], " and ", given[1]);

  MatrixConfig matrix;
  yaml::read_mapping(section, {
                                  {.key = "generator",
                                   .read =
                                       [&](const Value& v) {
                                         matrix.source = MatrixSource::generator;
                                         matrix.generator = read_generator(v);
                                       }},
                                  {.key = "hdf5",
                                   .read =
                                       [&](const Value& v) {
                                         matrix.source = MatrixSource::hdf5;
                                         read_matrix_file(v, matrix, true);
                                       }},
                                  {.key = "matrix_market",
                                   .read =
                                       [&](const Value& v) {
                                         matrix.source = MatrixSource::matrix_market;
                                         read_matrix_file(v, matrix, false);
                                       }},
                              });
  if (given.empty()) section.fail(" needs a source: ", yaml::join_or(sources));
  return matrix;
}

// preconditioner: a name, or a mapping with `type` and that type's keys.
PreconditionerConfig read_preconditioner(const Value& v) {
  PreconditionerConfig config;
  if (v.node().IsScalar()) {
    config.kind = v.choice(kPreconditioners);
    if (config.kind == PreconditionerKind::petsc)
      v.fail(" petsc needs its PETSc options: {type: petsc, options: \"-pc_type gamg\"}");
    return config;
  }
  std::vector<Field> fields{
      {.key = "type", .read = [](const Value&) {}},  // read by select_variant
      {.key = "degree",
       .read =
           [&](const Value& d) {
             config.degree = d.node().IsScalar() && d.node().Scalar() == "auto"
                                 ? 0
                                 : static_cast<int>(d.integer(1, max_chebyshev_degree));
           }},
      {.key = "lower",
       .read =
           [&](const Value& l) {
             if (l.node().IsScalar() && l.node().Scalar() == "auto") return void(config.lower = 0);
             config.lower = l.number();
             if (config.lower >= 1)
               l.fail(" must be below 1 (the interval [lower b, b] would be empty or inverted), got ",
                      l.node().Scalar());
             if (config.lower <= 0)
               l.fail(" must be positive (the interval [lower b, b] must not reach 0), got ", l.node().Scalar());
           }},
      {.key = "jacobi", .read = [&](const Value& j) { config.jacobi = j.boolean(); }},
      {.key = "precision", .read = [&](const Value& p) { config.precision = p.choice(kChebyshevPrecisions); }},
      {.key = "options", .read = [&](const Value& o) { config.petsc_options = o.string(); }},
  };
  if (!v.node().IsMap())
    v.fail(" must be none, jacobi, chebyshev or a mapping such as {type: chebyshev, degree: 8}, got a list");
  config.kind = yaml::select_variant<PreconditionerKind>(v, "type", kPreconditionerTypes, false, fields).value;
  yaml::read_mapping(v, fields);
  return config;
}

// eigensolver.constraints: `constant`, or {file, dataset} of an HDF5 block.
void read_constraints(const Value& v, EigensolverConfig& config) {
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

EigensolverConfig read_eigensolver(const Value& section) {
  EigensolverConfig config;
  std::optional<Value> block_size;        // checked against k once both are known
  std::optional<Value> search_precision;  // and against the preconditioner
  yaml::read_mapping(
      section,
      {
          {.key = "k", .read = [&](const Value& v) { config.k = v.integer<int>(1); }},
          {.key = "block_size",
           .read =
               [&](const Value& v) {
                 config.block_size = v.integer<int>(0);
                 block_size = v;
               }},
          {.key = "which", .read = [&](const Value& v) { config.which = v.choice(kSpectrumEnds); }},
          {.key = "tolerance", .read = [&](const Value& v) { config.tolerance = v.positive_number(); }},
          {.key = "convergence_test", .read = [&](const Value& v) { config.test = v.choice(kStoppingTests); }},
          {.key = "max_iterations", .read = [&](const Value& v) { config.max_iterations = v.integer<int>(1); }},
          {.key = "stagnation_window", .read = [&](const Value& v) { config.stagnation_window = v.integer<int>(0); }},
          {.key = "preconditioner", .read = [&](const Value& v) { config.preconditioner = read_preconditioner(v); }},
          {.key = "search_precision",
           .read =
               [&](const Value& v) {
                 config.search_precision = v.choice(kSearchPrecisions);
                 search_precision = v;
               }},
          {.key = "seed", .read = [&](const Value& v) { config.seed = v.integer<std::uint64_t>(); }},
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
  if (block_size && config.block_size != 0 && config.block_size < config.k)
    block_size->fail(" must be 0 (automatic) or at least k = ", config.k, ", got ", config.block_size);
  if (search_precision && !search_precision_allows_preconditioner(config.search_precision) &&
      config.preconditioner.kind != PreconditionerKind::none)
    search_precision->fail(" ", search_precision_needs_no_preconditioner);
  return config;
}

void read_rhs(const Value& section, BlockCgConfig& config) {
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

BlockCgConfig read_block_cg(const Value& section) {
  BlockCgConfig config;
  yaml::read_mapping(
      section,
      {
          {.key = "rhs", .read = [&](const Value& v) { read_rhs(v, config); }},
          {.key = "rtol", .read = [&](const Value& v) { config.rtol = v.positive_number(); }},
          {.key = "atol", .read = [&](const Value& v) { config.atol = v.non_negative_number(); }},
          {.key = "max_iterations", .read = [&](const Value& v) { config.max_iterations = v.integer<int>(1); }},
          {.key = "stagnation_window", .read = [&](const Value& v) { config.stagnation_window = v.integer<int>(0); }},
          {.key = "preconditioner", .read = [&](const Value& v) { config.preconditioner = read_preconditioner(v); }},
          {.key = "seed", .read = [&](const Value& v) { config.seed = v.integer<std::uint64_t>(); }},
      });
  return config;
}

// execution.halo.cuda_aware_mpi: auto (none), true or false.
std::optional<bool> read_cuda_aware(const Value& v) {
  constexpr std::array<std::string_view, 3> names{"auto", "true", "false"};
  const std::size_t chosen = v.one_of(names);
  if (chosen == 0) return std::nullopt;
  return chosen == 1;
}

HaloConfig read_halo(const Value& section) {
  HaloConfig config;
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

OutputConfig read_output(const Value& section) {
  OutputConfig config;
  std::optional<Value> checkpoint;
  yaml::read_mapping(
      section, {
                   // Relative to the working directory, like any output path on a command line.
                   {.key = "path", .read = [&](const Value& v) { config.path = v.string(); }},
                   {.key = "monitor", .read = [&](const Value& v) { config.monitor = v.boolean(); }},
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

// What overrides the file: the command line's --set KEY=VALUE, then the environment's.
struct Overrides {
  std::span<const std::string> command_line;
  std::span<const env::KeyOverride> environment;
};

void apply_overrides(YAML::Node& root, Document& doc, const Overrides& overrides) {
  for (const std::string& assignment : overrides.command_line) yaml::apply_override(root, assignment, doc);
  for (const env::KeyOverride& o : overrides.environment) yaml::apply_override(root, o.assignment, doc, o.origin);
}

// The whole document as a Value, checked to be a mapping of sections, with
// the overrides applied over it (recorded in `doc`).
Value top_level(const std::string& text, Document& doc, const Overrides& overrides) {
  YAML::Node root = yaml::load(text, doc);
  const YAML::Mark start = root.Mark();
  if (!root.IsMap())
    yaml::fail_at(doc, start, "the top level must be a mapping of sections, got ",
                  root.IsSequence() ? "a list" : detail::concat("'", root.Scalar(), "'"));
  apply_overrides(root, doc, overrides);
  return Value(doc, root, "", start);
}

EigsConfig parse_eigs(const std::string& text, Document doc, const Overrides& overrides) {
  EigsConfig config;
  std::optional<Value> resume;  // checked against eigensolver.start
  config.path = doc.source;
  config.overrides.assign(overrides.command_line.begin(), overrides.command_line.end());
  yaml::read_mapping(
      top_level(text, doc, overrides),
      {
          {.key = "matrix", .read = [&](const Value& v) { config.matrix = read_matrix(v); }, .required = true},
          {.key = "matrix_b", .read = [&](const Value& v) { config.matrix_b = read_matrix(v); }},
          {.key = "eigensolver", .read = [&](const Value& v) { config.eigensolver = read_eigensolver(v); }},
          {.key = "execution", .read = [&](const Value& v) { config.execution = read_execution(v); }},
          {.key = "output", .read = [&](const Value& v) { config.output = read_output(v); }},
          {.key = "resume",
           .read =
               [&](const Value& v) {
                 config.resume = v.string();
                 resume = v;
               }},
          {.key = "block_cg", .note = "block_cg is read by block-cg, not block-eigs"},
      });
  if (resume && !config.eigensolver.start_file.empty())
    resume->fail(" and eigensolver.start both give a start block: keep one");
  return config;
}

CgConfig parse_cg(const std::string& text, Document doc, const Overrides& overrides) {
  CgConfig config;
  config.path = doc.source;
  config.overrides.assign(overrides.command_line.begin(), overrides.command_line.end());
  yaml::read_mapping(
      top_level(text, doc, overrides),
      {
          {.key = "matrix", .read = [&](const Value& v) { config.matrix = read_matrix(v); }, .required = true},
          {.key = "block_cg", .read = [&](const Value& v) { config.solver = read_block_cg(v); }},
          {.key = "execution", .read = [&](const Value& v) { config.execution = read_execution(v); }},
          {.key = "output", .read = [&](const Value& v) { config.output = read_output(v); }},
          // Relative to the working directory, like output.checkpoint.path.
          {.key = "resume", .read = [&](const Value& v) { config.resume = v.string(); }},
          {.key = "eigensolver", .note = "eigensolver is read by block-eigs, not block-cg"},
          {.key = "matrix_b",
           .note = "matrix_b (B of A x = lambda B x) is read by block-eigs; block-cg solves A X = B with B from "
                   "block_cg.rhs"},
      });
  return config;
}

std::string read_text(const std::string& path) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (!fs::exists(status)) fail_input(path, ": config file not found");
  if (fs::is_directory(status)) fail_input(path, ": is a directory, not a config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input(path, ": cannot open the config file");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) fail_input(path, ": cannot read the config file");
  return text;
}

// Relative file names in a config file are taken from the file's folder.
Document file_document(const std::string& path) { return Document{path, fs::path(path).parent_path(), {}}; }

}  // namespace

std::string override_form_problem(std::string_view assignment) { return yaml::override_form_problem(assignment); }

EigsConfig read_eigs_config(const std::string& path, std::span<const std::string> overrides,
                            std::span<const env::KeyOverride> environment) {
  return parse_eigs(read_text(path), file_document(path), {overrides, environment});
}

CgConfig read_cg_config(const std::string& path, std::span<const std::string> overrides,
                        std::span<const env::KeyOverride> environment) {
  return parse_cg(read_text(path), file_document(path), {overrides, environment});
}

EigsConfig parse_eigs_config(const std::string& yaml_text, const std::string& source,
                             std::span<const std::string> overrides, std::span<const env::KeyOverride> environment) {
  return parse_eigs(yaml_text, Document{source, {}, {}}, {overrides, environment});
}

CgConfig parse_cg_config(const std::string& yaml_text, const std::string& source,
                         std::span<const std::string> overrides, std::span<const env::KeyOverride> environment) {
  return parse_cg(yaml_text, Document{source, {}, {}}, {overrides, environment});
}

ExecutionConfig environment_execution_config(std::span<const env::KeyOverride> environment) {
  Document doc{"the environment", {}, {}};
  YAML::Node root(YAML::NodeType::Map);
  apply_overrides(root, doc, {{}, environment});
  if (!root["execution"]) return ExecutionConfig{};
  return read_execution(Value(doc, root["execution"], "execution", YAML::Mark::null_mark()));
}

}  // namespace blockeigs::io
