// Command-line conventions every app shares: exit codes, --help and
// --version (with the build facts of apps/build_info.hpp), and the wording of
// a bad command line ("block-eigs: unknown option --foo; see --help").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blockeigs::apps {

// Exit codes of every app.
inline constexpr int exit_ok = 0;
inline constexpr int exit_error = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_not_converged = 3;
inline constexpr int exit_interrupted = 4;  // a signal stopped the run (checkpoint written, where one was asked for)

// What --help or --version among `args` asks for (the first one wins);
// none when neither is there.
enum class InfoRequest { none, help, version };
InfoRequest info_request(const std::vector<std::string>& args);

// Prints the usage or the version text to stdout; returns exit_ok.
int print_info(InfoRequest request, std::string_view program, std::string_view usage);

// "PROGRAM: PROBLEM; see --help" on stderr; returns exit_usage.
int usage_error(std::string_view program, std::string_view problem);

// "unknown option --foo".
std::string unknown_option(std::string_view arg);

// `text` as a whole decimal integer (a sign allowed, nothing else after it); none where it is not one or
// does not fit a long long.
std::optional<long long> whole_integer(const std::string& text);

}  // namespace blockeigs::apps
