// A whole config file (or text): its sections read in document order after
// the command line's and the environment's overrides; the sections' readers
// are sections.cpp's and, for the matrices, io/matrix_section.cpp's.
#include "config/run_config.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "config/sections.hpp"
#include "io/matrix_section.hpp"

namespace blockeigs::cfg {
namespace {

namespace fs = std::filesystem;
namespace yaml = io::yaml;
using yaml::Document;
using yaml::Value;

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
  const Value top = top_level(text, doc, overrides);
  yaml::read_mapping(
      top, {
               {.key = "matrix",
                .read = [&](const Value& v) { config.matrix = io::read_matrix_section(v); },
                .required = true},
               {.key = "matrix_b", .read = [&](const Value& v) { config.matrix_b = io::read_matrix_section(v); }},
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
  if (config.eigensolver.interval && config.matrix_b)
    top.member("eigensolver")
        .member("interval")
        .fail(
            " takes standard problems, not A x = lambda B x (matrix_b): a filter of the pencil needs B^-1; "
            "use k and which (LOBPCG) for a pencil");
  if (config.eigensolver.interval && !config.output.checkpoint.path.empty())
    top.member("output")
        .member("checkpoint")
        .fail(" is not taken with eigensolver.interval (a window's run has no checkpoints): remove one of them");
  if (config.eigensolver.interval && resume)
    resume->fail(" is not taken with eigensolver.interval (a window's run has no checkpoints): remove one of them");
  if (resume && !config.eigensolver.start_file.empty())
    resume->fail(" and eigensolver.start both give a start block: keep one");
  if (config.matrix_b && config.eigensolver.method == solver::EigenMethod::chebyshev_filter)
    top.member("eigensolver")
        .member("method")
        .fail(
            " chebyshev_filter takes standard problems, not A x = lambda B x (matrix_b): use method lobpcg (or auto)");
  return config;
}

CgConfig parse_cg(const std::string& text, Document doc, const Overrides& overrides) {
  CgConfig config;
  config.path = doc.source;
  config.overrides.assign(overrides.command_line.begin(), overrides.command_line.end());
  yaml::read_mapping(
      top_level(text, doc, overrides),
      {
          {.key = "matrix",
           .read = [&](const Value& v) { config.matrix = io::read_matrix_section(v); },
           .required = true},
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

}  // namespace blockeigs::cfg
