// The matrix section of a config: its sources and the generators' keys.
// docs/config.md is the user's reference to them.
#include "io/matrix_section.hpp"

#include <array>
#include <string>

namespace blockeigs::io {
namespace {

using yaml::Field;
using yaml::Named;
using yaml::Value;
using yaml::Variant;

// matrix.generator: `type` decides which sizes are needed.
const std::array<Variant<GeneratorKind>, 8> kGeneratorTypes{{
    {"laplacian_1d", GeneratorKind::laplacian_1d, {"nx"}, {"stencil", "renumber"}},
    {"laplacian_2d", GeneratorKind::laplacian_2d, {"nx", "ny"}, {"stencil", "renumber"}},
    {"laplacian_3d", GeneratorKind::laplacian_3d, {"nx", "ny", "nz"}, {"stencil", "renumber", "boundary", "phase"}},
    {"random_spd", GeneratorKind::random_spd, {"n"}, {"nnz_per_row", "seed", "renumber"}},
    {"fem_p1_1d", GeneratorKind::fem_p1_1d, {"nx", "part"}, {"renumber"}},
    {"fem_p1_2d", GeneratorKind::fem_p1_2d, {"nx", "ny", "part"}, {"renumber"}},
    {"fem_p1_3d", GeneratorKind::fem_p1_3d, {"nx", "ny", "nz", "part"}, {"renumber"}},
    {"graph_laplacian", GeneratorKind::graph_laplacian, {"graph", "n"}, {"renumber"}},
}};

const std::array<Named<FemPart>, 2> kFemParts{{{"stiffness", FemPart::stiffness}, {"mass", FemPart::mass}}};
const std::array<Named<GraphKind>, 2> kGraphs{{{"path", GraphKind::path}, {"cycle", GraphKind::cycle}}};
const std::array<Named<bool>, 2> kBoundaries{{{"dirichlet", false}, {"periodic", true}}};
const std::array<Named<MatrixField>, 3> kFields{
    {{"auto", MatrixField::automatic}, {"real", MatrixField::real}, {"complex", MatrixField::complex}}};

// matrix.generator.phase: [tx, ty, tz], the Bloch phases of a periodic grid in radians.
void read_phase(const Value& v, GeneratorSpec& spec) {
  if (!v.node().IsSequence() || v.node().size() != 3)
    v.fail(" must be a list of three numbers [tx, ty, tz] (radians carried across each period)");
  for (std::size_t d = 0; d < 3; ++d)
    spec.phase[d] = Value(v.doc(), v.node()[d], v.path() + "[" + std::to_string(d) + "]", v.mark()).number();
}

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

// The file of an hdf5 or matrix_market source, and the group where one applies.
void read_matrix_file(const Value& section, MatrixConfig& matrix, bool has_group) {
  std::vector<Field> fields{
      {.key = "file", .read = [&](const Value& v) { matrix.file = v.file_name(); }, .required = true},
  };
  if (has_group) fields.push_back({.key = "group", .read = [&](const Value& v) { matrix.group = v.string(); }});
  yaml::read_mapping(section, fields);
}

}  // namespace

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
      {.key = "boundary", .read = [&](const Value& v) { spec.periodic = v.choice(kBoundaries); }},
      {.key = "phase", .read = [&](const Value& v) { read_phase(v, spec); }},
  };
  spec.kind = yaml::select_variant<GeneratorKind>(section, "type", kGeneratorTypes, false, fields).value;
  spec.stencil = default_stencil(spec.kind);
  yaml::read_mapping(section, fields);
  validate(spec, section.location());
  return spec;
}

MatrixConfig read_matrix_section(const Value& section) {
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
                                  {.key = "field", .read = [&](const Value& v) { matrix.field = v.choice(kFields); }},
                              });
  if (given.empty()) section.fail(" needs a source: ", yaml::join_or(sources));
  return matrix;
}

GeneratorSpec parse_generator(const std::string& yaml_text, const std::string& source) {
  yaml::Document doc{source, {}, {}};
  const YAML::Node root = yaml::load(yaml_text, doc);
  return read_generator(Value(doc, root, "matrix.generator", root.Mark()));
}

}  // namespace blockeigs::io
