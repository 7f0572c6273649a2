// A config's sections given by keyword instead of a file: Python's
// blockeigs.lobpcg(A, k, tol=...) hands its arguments over as the keys of the
// config's eigensolver, block_cg and execution sections, and they are read by
// the very readers a file's are, with the same checks and messages
// ("blockeigs.lobpcg: eigensolver.tolerance must be positive, got '-1'").
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "config/run_config.hpp"

namespace blockeigs::cfg {

// One key and its value: a scalar, a mapping of keys (a preconditioner's
// {type: chebyshev, degree: 8}) or a list of numbers (an interval's [a, b]).
// A string stays a string (as a quoted YAML scalar): "8" is not the number 8.
struct Keyword;
using Keywords = std::vector<Keyword>;
struct Keyword {
  std::string key;
  std::variant<bool, std::int64_t, double, std::string, Keywords, std::vector<double>> value;
};

// The section's settings from `keywords` (its keys, without the section's
// name); `source` names the caller in messages. InputError on a bad key or value.
EigensolverSettings eigensolver_from_keywords(const Keywords& keywords, const std::string& source);
BlockCgSettings block_cg_from_keywords(const Keywords& keywords, const std::string& source);
ExecutionConfig execution_from_keywords(const Keywords& keywords, const std::string& source);

}  // namespace blockeigs::cfg
