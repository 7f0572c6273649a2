#include "apps/cli.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "apps/build_info.hpp"

namespace blockeigs::apps {

InfoRequest info_request(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return InfoRequest::help;
    if (arg == "--version") return InfoRequest::version;
  }
  return InfoRequest::none;
}

int print_info(InfoRequest request, std::string_view program, std::string_view usage) {
  const std::string text = request == InfoRequest::version ? version_text(program) : std::string(usage);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return exit_ok;
}

int usage_error(std::string_view program, std::string_view problem) {
  std::fprintf(stderr, "%.*s: %.*s; see --help\n", static_cast<int>(program.size()), program.data(),
               static_cast<int>(problem.size()), problem.data());
  return exit_usage;
}

std::string unknown_option(std::string_view arg) { return "unknown option " + std::string(arg); }

std::optional<long long> whole_integer(const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return value;
}

}  // namespace blockeigs::apps
