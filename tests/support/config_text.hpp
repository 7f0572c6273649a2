// Config parsing in the config tests: a source name and a matrix section to
// build configs from, the message a config's InputError gives, and a check
// that a message holds every part it must.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "config/run_config.hpp"
#include "io/config_yaml.hpp"

namespace blockeigs::cfg::config_test {

using namespace blockeigs::io;  // the matrix section's types and the YAML reader (io::yaml) by their short names

inline constexpr const char* kSource = "cfg/a.yaml";
inline constexpr const char* kMatrix = "matrix: {generator: {type: laplacian_1d, nx: 10}}\n";

enum class App { eigs, cg };

// The InputError message that parsing `text` gives; empty if it parsed.
inline std::string error_of(App app, const std::string& text) {
  try {
    if (app == App::eigs)
      parse_eigs_config(text, kSource);
    else
      parse_cg_config(text, kSource);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

inline ::testing::AssertionResult contains_all(const std::string& message, const std::vector<std::string>& parts) {
  if (message.empty()) return ::testing::AssertionFailure() << "parsed without an error";
  for (const std::string& part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
  return ::testing::AssertionSuccess();
}

}  // namespace blockeigs::cfg::config_test
