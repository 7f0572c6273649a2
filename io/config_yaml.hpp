// Checked, typed reading of YAML nodes for io/config.cpp (internal to io/).
// Every Value knows its config file, its full key path and the line of its
// key, so each error names all three:
//   "configs/a.yaml:7: eigensolver.k must be an integer, got 'ten'".
// Mappings are read through a table of Fields, which is also the list of
// keys the mapping accepts: unknown keys are rejected with a suggestion.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/error.hpp"

namespace blockeigs::io::yaml {

// A key set on the command line (--set KEY=VALUE) over the file's. It owns
// the part of the tree it put there: `owned` is the key path it set, or the
// first section on that path that the file did not have; errors at or below
// it name the --set instead of a line of the file.
struct Override {
  std::string origin;  // "--set eigensolver.k=4", or the environment variable: "BLOCKEIGS_HALO_PEER=0"
  std::string owned;   // "eigensolver.k"
};

// The config being read: its name in messages, the folder that relative
// file names are taken from (empty: the current directory), and the keys
// that came from the command line.
struct Document {
  std::string source;
  std::filesystem::path base_dir;
  std::vector<Override> overrides;

  // The --set that put `path` (a dotted key path) in the tree, if one did (the last one wins).
  const Override* override_of(std::string_view path) const;
  // Where a key is, for messages: "source:line" (or "source" when the mark is
  // unknown), or "--set KEY=VALUE" when the command line set it.
  std::string where(std::string_view path, const YAML::Mark& mark) const;
};

// Throws InputError "source:line: parts..." (without the line when the mark is unknown).
template <class... Parts>
[[noreturn]] void fail_at(const Document& doc, const YAML::Mark& mark, const Parts&... parts) {
  if (mark.is_null()) fail_input(doc.source, ": ", parts...);
  fail_input(doc.source, ":", mark.line + 1, ": ", parts...);
}

// The same for the key at `path`: "--set KEY=VALUE: parts..." where the command line set it.
template <class... Parts>
[[noreturn]] void fail_at(const Document& doc, std::string_view path, const YAML::Mark& mark, const Parts&... parts) {
  fail_input(doc.where(path, mark), ": ", parts...);
}

// The single YAML document in `text`. Control bytes other than tab, newline
// and carriage return ("source:line: byte N of the line is 0x00, ..."),
// syntax errors, a text with no content and a text with several documents
// are InputErrors naming doc.source.
YAML::Node load(const std::string& text, const Document& doc);

// Applies "KEY=VALUE" (KEY a dotted path such as eigensolver.k, VALUE a YAML
// value: 4, largest, {type: laplacian_1d, nx: 10}) to the mapping `root`,
// creating sections that are missing, and records it in doc.overrides. A text
// without '=', with a control byte or an empty key part, a VALUE that is not YAML, and a path
// through a key that is not a mapping are InputErrors naming the --set, or
// `origin` where one is given (an environment variable: "BLOCKEIGS_HALO_PEER=0").
void apply_override(YAML::Node& root, const std::string& assignment, Document& doc, const std::string& origin = {});

// cfg::override_form_problem (config.hpp): what is wrong with the form of KEY=VALUE, or empty.
std::string override_form_problem(std::string_view assignment);

// "a", "a or b", "a, b or c".
std::string join_or(std::span<const std::string_view> words);

// The one of `candidates` that `key` is most likely a misspelling of, if any.
std::optional<std::string_view> closest_key(std::string_view key, std::span<const std::string_view> candidates);

// The one of the allowed values that `text` most likely means: by a table of
// words for their meaning first ("gpu": cuda, "double": fp64), then as a
// misspelling (closest_key).
std::optional<std::string_view> meant_value(std::string_view text, std::span<const std::string_view> allowed);

// A YAML spelling of an enum value.
template <class Enum>
struct Named {
  std::string_view name;
  Enum value;
};

class Value {
 public:
  // `mark` is where the key of this value is (the value of `key:` with
  // nothing after it has no useful position of its own).
  Value(const Document& doc, YAML::Node node, std::string path, YAML::Mark mark)
      : doc_(&doc), node_(std::move(node)), path_(std::move(path)), mark_(mark) {}

  const Document& doc() const { return *doc_; }
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }  // "eigensolver.k"; empty at the top level
  const YAML::Mark& mark() const { return mark_; }
  std::string name() const { return path_.empty() ? "the top level" : path_; }

  // Throws "file:line: <path><parts...>", e.g. fail(" must be positive")
  // ("--set KEY=VALUE: <path><parts...>" for a key from the command line).
  template <class... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    fail_at(*doc_, path_, mark_, name(), parts...);
  }
  // "file:line: <path>" or "--set KEY=VALUE: <path>", to prefix a message.
  std::string location() const { return detail::concat(doc_->where(path_, mark_), ": ", name()); }

  // Mapping members (a null value counts as an empty mapping). member()
  // requires has(key).
  void require_mapping() const;
  bool has(std::string_view key) const;
  Value member(std::string_view key) const;

  // An integer in [min, max] written in decimal: "8", not "8.0" or "'8'".
  std::int64_t integer(std::int64_t min, std::int64_t max) const;
  template <std::integral Int>
  Int integer(Int min = std::numeric_limits<Int>::min()) const {
    constexpr auto top = std::numeric_limits<std::int64_t>::max();
    constexpr auto max = std::numeric_limits<Int>::max();
    return static_cast<Int>(
        integer(static_cast<std::int64_t>(min), std::cmp_less(max, top) ? static_cast<std::int64_t>(max) : top));
  }

  double number() const;  // finite
  double positive_number() const;
  double non_negative_number() const;
  bool boolean() const;           // true or false
  std::string string() const;     // a non-empty scalar, quoted or not
  std::string file_name() const;  // string(); relative names taken from doc().base_dir

  // Index into `names` of the value, which must be one of them.
  std::size_t one_of(std::span<const std::string_view> names) const;

  template <class Enum, std::size_t N>
  Enum choice(const std::array<Named<Enum>, N>& table) const {
    std::array<std::string_view, N> names;
    for (std::size_t i = 0; i < N; ++i) names[i] = table[i].name;
    return table[one_of(names)].value;
  }

 private:
  std::string scalar_text(std::string_view expected) const;  // plain (unquoted) scalar
  [[noreturn]] void fail_expected(std::string_view expected) const;

  const Document* doc_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;
};

// One key that a mapping may hold. `read` is called with the key's value.
// A Field without `read` is a known key that this mapping does not accept;
// `note` says why, and is shown with unknown and missing keys alike.
struct Field {
  std::string_view key;
  std::function<void(const Value&)> read = {};
  bool required = false;
  std::string note = {};
};

// Checks the keys of `section` against `fields` (unknown keys, with the
// closest known one suggested; repeated keys; missing required keys) and
// reads the keys present in document order. A null section (`eigensolver:`
// with nothing under it) reads as an empty mapping.
void read_mapping(const Value& section, const std::vector<Field>& fields);

// One shape of a mapping whose selector key (generator `type`, rhs `source`)
// decides which other keys it takes.
template <class Enum>
struct Variant {
  std::string_view name;
  Enum value;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional = {};
};

// Adjusts `fields` to `variant`: its required keys become required, keys it
// does not take are rejected; every field gets a note listing what it takes.
// The selector key itself is left as it is.
void restrict_fields(std::vector<Field>& fields, std::string_view selector, std::string_view variant_name,
                     std::span<const std::string_view> required, std::span<const std::string_view> optional);

// Reads section[selector] as one of `variants` (the first when the key is
// absent and `first_is_default`; else a missing key is an error) and
// restricts `fields` to it.
template <class Enum>
const Variant<Enum>& select_variant(const Value& section, std::string_view selector,
                                    std::span<const Variant<Enum>> variants, bool first_is_default,
                                    std::vector<Field>& fields) {
  std::vector<std::string_view> names;
  for (const auto& variant : variants) names.push_back(variant.name);
  section.require_mapping();
  std::size_t index = 0;
  if (section.has(selector)) {
    index = section.member(selector).one_of(names);
  } else if (!first_is_default) {
    fail_at(section.doc(), section.path(), section.mark(), "missing required key ", section.path(), ".", selector, " (",
            join_or(names), ")");
  }
  const Variant<Enum>& chosen = variants[index];
  restrict_fields(fields, selector, chosen.name, chosen.required, chosen.optional);
  return chosen;
}

}  // namespace blockeigs::io::yaml
