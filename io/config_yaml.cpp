#include "io/config_yaml.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

namespace blockeigs::io::yaml {
namespace {

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : detail::concat(parent, ".", key);
}

// Words separated by ", " with `last` before the final one ("a, b or c").
std::string join(std::span<const std::string_view> words, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? last : ", ";
    out += words[i];
  }
  return out;
}

// A scalar the author quoted (or tagged !!str) is a string, never a number or boolean.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

// How a value reads in "... got <this>".
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return is_quoted(node) ? detail::concat("\"", node.Scalar(), "\" (a quoted string)")
                             : detail::concat("'", node.Scalar(), "'");
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions
// and swaps of adjacent letters each cost one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string join_or(std::span<const std::string_view> words) { return join(words, " or "); }

// Words that mean an allowed value which edit distance misses or gets wrong:
// "gpu" is one edit from "cpu" but means "cuda". Used only where the value
// they name is among the allowed ones.
struct ValueAlias {
  std::string_view word, value;
};
constexpr ValueAlias kValueAliases[] = {
    {"gpu", "cuda"},
    {"device", "cuda"},
    {"nvidia", "cuda"},
    {"host", "cpu"},
    {"openmp", "cpu"},
    {"automatic", "auto"},
    {"default", "auto"},
    {"auto", "automatic"},
    {"default", "automatic"},
    {"double", "fp64"},
    {"float64", "fp64"},
    {"f64", "fp64"},
    {"single", "fp32"},
    {"float", "fp32"},
    {"float32", "fp32"},
    {"f32", "fp32"},
    {"min", "smallest"},
    {"minimum", "smallest"},
    {"lowest", "smallest"},
    {"max", "largest"},
    {"maximum", "largest"},
    {"highest", "largest"},
    {"scotch", "graph"},
    {"ptscotch", "graph"},
    {"pt-scotch", "graph"},
    {"metis", "graph"},
    {"rcm", "band"},
    {"cuthill_mckee", "band"},
    {"off", "none"},
    {"no", "none"},
    {"identity", "none"},
    {"off", "false"},
    {"no", "false"},
    {"on", "true"},
    {"yes", "true"},
    {"diagonal", "jacobi"},
    {"polynomial", "chebyshev"},
    {"cuda_ipc", "ipc"},
    {"peer", "ipc"},
    {"p2p", "ipc"},
    {"host_staged", "staged"},
    {"merge", "merge_based"},
    {"row-split", "row_split"},
};

std::optional<std::string_view> meant_value(std::string_view text, std::span<const std::string_view> allowed) {
  const std::string word = lowercase(text);
  for (const ValueAlias& alias : kValueAliases)
    if (alias.word == word)
      if (const auto found = std::ranges::find(allowed, alias.value); found != allowed.end()) return *found;
  return closest_key(text, allowed);
}

std::optional<std::string_view> closest_key(std::string_view key, std::span<const std::string_view> candidates) {
  const std::string wanted = lowercase(key);
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (std::string_view candidate : candidates) {
    const std::size_t distance = edit_distance(wanted, lowercase(candidate));
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (!best) return std::nullopt;
  // A likely typo: a different case, one edit in a short key, two in a longer one.
  const std::size_t length = std::max(key.size(), best->size());
  const std::size_t allowed = length < 2 ? 0 : length < 6 ? 1 : 2;
  if (best_distance <= allowed) return best;
  return std::nullopt;
}

namespace {

// Where each document of a YAML stream starts, read with yaml-cpp's event
// parser: only whether there is more than one matters, so it stops at two.
// yaml-cpp 0.7 never consumes a ',' outside a flow collection: it reports
// empty documents at the same place forever (YAML::LoadAll then fills memory
// without end; found by fuzz_config). A document that starts where the last
// one did is that token, and is reported as the syntax error it is.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

void check_one_document(const std::string& text, const Document& doc) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts events;
  while (events.starts.size() < 2 && parser.HandleNextDocument(events)) {
  }
  if (events.starts.size() < 2) return;
  const YAML::Mark& second = events.starts[1];
  if (second.pos == events.starts[0].pos) {
    const std::size_t at = static_cast<std::size_t>(std::max(0, second.pos));
    const unsigned char c = at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
    char shown[16];
    std::snprintf(shown, sizeof shown, std::isprint(c) ? "'%c'" : "byte 0x%02x", c);
    fail_at(doc, second, "YAML syntax error: unexpected ", shown, " outside a flow collection");
  }
  fail_at(doc, second, "a config is one YAML document, found more than one");
}

// A config is text: a control byte other than tab, newline and carriage
// return (NUL from a binary file, say) is refused before yaml-cpp sees it,
// which may otherwise loop on it. Named as "where:line: byte N of the line"
// (a file) or "where: byte N of KEY=VALUE" (a --set, whose text is not shown).
void check_text(std::string_view text, std::string_view where, bool lines) {
  std::size_t line = 1, column = 1;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7f) {
      char shown[8];
      std::snprintf(shown, sizeof shown, "0x%02x", byte);
      const char* why =
          ", a control character: a config is YAML text, which allows only tab, newline and "
          "carriage return among them";
      if (lines) fail_input(where, ":", line, ": byte ", column, " of the line is ", shown, why, " (a binary file?)");
      fail_input(where, ": byte ", column, " of KEY=VALUE is ", shown, why);
    }
    const bool next_line = lines && c == '\n';
    column = next_line ? 1 : column + 1;
    line += next_line;
  }
}

}  // namespace

YAML::Node load(const std::string& text, const Document& doc) {
  check_text(text, doc.source, true);
  YAML::Node document;
  try {
    check_one_document(text, doc);
    document = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail_at(doc, e.mark, "YAML syntax error: ", e.msg);
  }
  if (document.IsNull()) fail_input(doc.source, ": the config is empty");
  return document;
}

const Override* Document::override_of(std::string_view path) const {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string& owned = it->owned;
    if (path == owned || (path.starts_with(owned) && path.size() > owned.size() && path[owned.size()] == '.'))
      return &*it;
  }
  return nullptr;
}

std::string Document::where(std::string_view path, const YAML::Mark& mark) const {
  if (const Override* set = override_of(path)) return set->origin;
  if (mark.is_null()) return source;
  return detail::concat(source, ":", mark.line + 1);
}

namespace {

// KEY's parts between the dots ("eigensolver.k": eigensolver, k).
std::vector<std::string> key_parts(std::string_view key) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

std::string override_form_problem(std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos) return "expected KEY=VALUE, e.g. --set eigensolver.k=4";
  const std::string_view key = assignment.substr(0, equals);
  if (std::ranges::any_of(key_parts(key), [](const std::string& part) { return part.empty(); }))
    return detail::concat("expected KEY=VALUE with KEY a dotted key path such as eigensolver.k, got '", key, "'");
  return {};
}

void apply_override(YAML::Node& root, const std::string& assignment, Document& doc, const std::string& given) {
  const std::string origin = given.empty() ? "--set " + assignment : given;
  check_text(assignment, given.empty() ? "--set" : given.substr(0, given.find('=')), false);
  if (const std::string problem = override_form_problem(assignment); !problem.empty())
    fail_input(origin, ": ", problem);
  const std::size_t equals = assignment.find('=');
  const std::string key = assignment.substr(0, equals);
  const std::vector<std::string> parts = key_parts(key);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(equals + 1));
  } catch (const YAML::Exception& e) {
    fail_input(origin, ": the value is not YAML: ", e.msg);
  }

  // Walk down the sections, making the ones the file lacks.
  YAML::Node node = root;
  std::string path, owned;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    path = join_path(path, parts[i]);
    const bool last = i + 1 == parts.size();
    YAML::Node child = node[parts[i]];
    const bool present = child.IsDefined();
    if (!present && owned.empty()) owned = path;
    if (last) {
      node[parts[i]] = value;
    } else if (!present || child.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    } else if (!child.IsMap()) {
      fail_input(origin, ": cannot set ", key, ": ", doc.where(path, child.Mark()), ": ", path, " is ", describe(child),
                 ", not a mapping of keys");
    }
    if (!last) node.reset(node[parts[i]]);
  }
  doc.overrides.push_back({origin, owned.empty() ? key : owned});
}

void Value::require_mapping() const {
  if (!node_.IsNull() && !node_.IsMap()) fail(" must be a mapping of keys, got ", describe(node_));
}

bool Value::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  for (const auto& entry : node_)
    if (entry.first.IsScalar() && entry.first.Scalar() == key) return true;
  return false;
}

Value Value::member(std::string_view key) const {
  BLOCKEIGS_ASSERT(has(key));
  for (const auto& entry : node_)
    if (entry.first.IsScalar() && entry.first.Scalar() == key)
      return Value(*doc_, entry.second, join_path(path_, key), entry.first.Mark());
  throw Error(detail::concat("internal error: no key ", key, " in ", name()));
}

void Value::fail_expected(std::string_view expected) const { fail(" must be ", expected, ", got ", describe(node_)); }

std::string Value::scalar_text(std::string_view expected) const {
  if (!node_.IsScalar() || is_quoted(node_)) fail_expected(expected);
  return node_.Scalar();
}

std::int64_t Value::integer(std::int64_t min, std::int64_t max) const {
  const std::string text = scalar_text("an integer");
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  const std::string_view magnitude = digits.starts_with('-') ? digits.substr(1) : digits;
  if (magnitude.empty() || !std::ranges::all_of(magnitude, [](char c) { return c >= '0' && c <= '9'; }))
    fail_expected("an integer");

  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool beyond_int64 = error == std::errc::result_out_of_range;
  const bool negative = digits.starts_with('-');
  if (beyond_int64 ? negative : value < min) {
    if (min == 0) fail(" must be non-negative, got ", text);
    fail(" must be at least ", min, ", got ", text);
  }
  if (beyond_int64 || value > max) fail(" must be at most ", max, ", got ", text);
  return value;
}

double Value::number() const {
  const std::string text = scalar_text("a number");
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range && end == digits.data() + digits.size())
    fail(" is out of the range of a double, got ", text);
  if (error != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value))
    fail_expected("a finite number");
  return value;
}

double Value::positive_number() const {
  const double value = number();
  if (!(value > 0)) fail(" must be positive, got ", node_.Scalar());
  return value;
}

double Value::non_negative_number() const {
  const double value = number();
  if (value < 0) fail(" must be non-negative, got ", node_.Scalar());
  return value;
}

bool Value::boolean() const {
  const std::string text = scalar_text("true or false");
  if (text == "true") return true;
  if (text == "false") return false;
  fail_expected("true or false");
}

std::string Value::string() const {
  if (!node_.IsScalar()) fail_expected("a string");
  if (node_.Scalar().empty()) fail(" must not be empty");
  return node_.Scalar();
}

std::string Value::file_name() const {
  std::filesystem::path file = string();
  if (file.is_relative() && !doc_->base_dir.empty()) file = doc_->base_dir / file;
  return file.lexically_normal().string();
}

std::size_t Value::one_of(std::span<const std::string_view> names) const {
  if (!node_.IsScalar()) fail_expected(join_or(names));
  const std::string& text = node_.Scalar();
  const auto found = std::ranges::find(names, text);
  if (found != names.end()) return static_cast<std::size_t>(found - names.begin());
  if (const auto guess = meant_value(text, names))
    fail(" must be ", join_or(names), ", got '", text, "' (did you mean ", *guess, "?)");
  fail(" must be ", join_or(names), ", got '", text, "'");
}

void read_mapping(const Value& section, const std::vector<Field>& fields) {
  section.require_mapping();  // null: no keys, so only missing required ones can be wrong
  const Document& doc = section.doc();
  std::vector<std::string_view> accepted;
  for (const Field& field : fields)
    if (field.read) accepted.push_back(field.key);

  std::set<std::string, std::less<>> seen;
  if (section.node().IsMap()) {
    for (const auto& entry : section.node()) {
      const YAML::Node& key_node = entry.first;
      const YAML::Mark mark = key_node.Mark();
      if (!key_node.IsScalar() || key_node.Scalar().empty())
        fail_at(doc, section.path(), mark, section.name(), " has a key that is not a name: ", describe(key_node));
      const std::string& key = key_node.Scalar();
      const std::string path = join_path(section.path(), key);
      if (!seen.insert(key).second) fail_at(doc, path, mark, "duplicate key ", path);

      const auto field = std::ranges::find(fields, std::string_view(key), &Field::key);
      if (field == fields.end()) {
        if (const auto guess = closest_key(key, accepted))
          fail_at(doc, path, mark, "unknown key ", path, " (did you mean ", *guess, "?)");
        fail_at(doc, path, mark, "unknown key ", path, " (known keys: ", join(accepted, ", "), ")");
      }
      if (!field->read) fail_at(doc, path, mark, "unknown key ", path, " (", field->note, ")");
      field->read(Value(doc, entry.second, path, mark));
    }
  }

  for (const Field& field : fields) {
    if (!field.required || seen.contains(field.key)) continue;
    const std::string path = join_path(section.path(), field.key);
    if (field.note.empty()) fail_at(doc, section.path(), section.mark(), "missing required key ", path);
    fail_at(doc, section.path(), section.mark(), "missing required key ", path, " (", field.note, ")");
  }
}

void restrict_fields(std::vector<Field>& fields, std::string_view selector, std::string_view variant_name,
                     std::span<const std::string_view> required, std::span<const std::string_view> optional) {
  std::vector<std::string_view> takes(required.begin(), required.end());
  takes.insert(takes.end(), optional.begin(), optional.end());
  const std::string note = takes.empty() ? detail::concat(selector, " ", variant_name, " takes no other keys")
                                         : detail::concat(selector, " ", variant_name, " takes ", join(takes, " and "));
  for (Field& field : fields) {
    if (field.key == selector) continue;
    field.note = note;
    if (std::ranges::find(required, field.key) != required.end())
      field.required = true;
    else if (std::ranges::find(optional, field.key) == optional.end())
      field.read = nullptr;
  }
}

}  // namespace blockeigs::io::yaml
