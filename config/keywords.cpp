#include "config/keywords.hpp"

#include <cstdio>

#include "config/sections.hpp"

namespace blockeigs::cfg {
namespace {

namespace yaml = io::yaml;

YAML::Node to_node(const Keywords& keywords);

// A number as YAML reads it from a file: round-trips; nan and inf read as no number.
YAML::Node number_node(double d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", d);
  return YAML::Node(text);
}

// A scalar or list as YAML would have read it from a file; strings quoted.
YAML::Node to_node(const std::variant<bool, std::int64_t, double, std::string, Keywords, std::vector<double>>& value) {
  if (const auto* b = std::get_if<bool>(&value)) return YAML::Node(*b ? "true" : "false");
  if (const auto* i = std::get_if<std::int64_t>(&value)) return YAML::Node(std::to_string(*i));
  if (const auto* d = std::get_if<double>(&value)) return number_node(*d);
  if (const auto* list = std::get_if<std::vector<double>>(&value)) {
    YAML::Node sequence(YAML::NodeType::Sequence);
    for (const double d : *list) sequence.push_back(number_node(d));
    return sequence;
  }
  if (const auto* s = std::get_if<std::string>(&value)) {
    YAML::Node node(*s);
    node.SetTag("!");  // a quoted scalar: a string, never a number or a boolean
    return node;
  }
  return to_node(std::get<Keywords>(value));
}

YAML::Node to_node(const Keywords& keywords) {
  YAML::Node map(YAML::NodeType::Map);
  for (const Keyword& keyword : keywords) map[keyword.key] = to_node(keyword.value);
  return map;
}

// `read` on the section `name` built from `keywords`, its messages naming `source`.
template <class Read>
auto read_section(const Keywords& keywords, const std::string& source, const char* name, Read&& read) {
  const yaml::Document doc{source, {}, {}};
  return read(yaml::Value(doc, to_node(keywords), name, YAML::Mark::null_mark()));
}

}  // namespace

EigensolverSettings eigensolver_from_keywords(const Keywords& keywords, const std::string& source) {
  return read_section(keywords, source, "eigensolver", [](const yaml::Value& v) { return read_eigensolver(v); });
}

BlockCgSettings block_cg_from_keywords(const Keywords& keywords, const std::string& source) {
  return read_section(keywords, source, "block_cg", [](const yaml::Value& v) { return read_block_cg(v); });
}

ExecutionConfig execution_from_keywords(const Keywords& keywords, const std::string& source) {
  return read_section(keywords, source, "execution", [](const yaml::Value& v) { return read_execution(v); });
}

}  // namespace blockeigs::cfg
