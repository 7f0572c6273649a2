// spmm-bench's options and usage: read the same way in builds with and
// without CUDA (bench_runner.cpp runs the suite, bench_runner_stub.cpp says
// the build has no CUDA).
#include "bench/spmm/bench_runner.hpp"

#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "core/error.hpp"

namespace blockeigs::spmm::bench {
namespace {

std::int64_t parse_int(const std::string& option, const std::string& text, long long least = 1) {
  const std::optional<long long> value = apps::whole_integer(text);
  if (!value || *value < least)
    throw InputError(option + " needs an integer >= " + std::to_string(least) + ", got `" + text + "`");
  return *value;
}

// --precision: a comma-separated list of fp32, fp64, c64 and c128, or
// both (fp32,fp64), complex (c64,c128) or all.
std::vector<BenchValues> parse_values(const std::string& text) {
  std::vector<BenchValues> values;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "both" || item == "all") values.insert(values.end(), {BenchValues::fp32, BenchValues::fp64});
    if (item == "complex" || item == "all") values.insert(values.end(), {BenchValues::c64, BenchValues::c128});
    if (item == "both" || item == "complex" || item == "all") continue;
    bool known = false;
    for (BenchValues v : {BenchValues::fp32, BenchValues::fp64, BenchValues::c64, BenchValues::c128})
      if (item == to_string(v)) values.push_back(v), known = true;
    if (!known)
      throw InputError("--precision takes fp32, fp64, c64, c128, both, complex or all (comma-separated), got `" + item +
                       "`");
  }
  if (values.empty()) throw InputError("--precision needs at least one of fp32, fp64, c64, c128");
  return values;
}

}  // namespace

std::string_view to_string(BenchValues values) {
  switch (values) {
    case BenchValues::fp32: return "fp32";
    case BenchValues::fp64: return "fp64";
    case BenchValues::c64: return "c64";
    case BenchValues::c128: return "c128";
  }
  return "?";
}

std::string bench_usage() {
  return "usage: spmm-bench [--suite full|quick] [--matrices REGEX] [--n 1,2,4,...] [--precision LIST]\n"
         "                  [--reps N] [--beta X] [--csv FILE] [--data DIR] [--device D]\n"
         "Times row_split, merge_based, automatic and every cuSPARSE CSR SpMM algorithm on the suite's\n"
         "matrices (--precision: fp32, fp64, c64, c128, both, complex or all; complex runs give each\n"
         "nonzero a phase), checks each result against a host reference, and prints a summary. Exit code\n"
         "1 when a check failed.\n";
}

BenchOptions parse_bench_options(const std::vector<std::string>& args) {
  BenchOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw InputError(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--suite") {
      o.suite = value();
      if (o.suite != "full" && o.suite != "quick")
        throw InputError("--suite must be full or quick, got `" + o.suite + "`");
    } else if (a == "--matrices") {
      o.matrices = value();
      try {
        (void)std::regex(o.matrices);
      } catch (const std::regex_error& e) {
        throw InputError("--matrices: not a regular expression: " + o.matrices);
      }
    } else if (a == "--n") {
      o.widths.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) o.widths.push_back(parse_int("--n", item));
      if (o.widths.empty()) throw InputError("--n needs a comma-separated list of widths");
    } else if (a == "--precision") {
      o.values = parse_values(value());
    } else if (a == "--reps") {
      o.max_reps = static_cast<int>(parse_int("--reps", value()));
    } else if (a == "--beta") {
      const std::string& text = value();
      try {
        o.beta = std::stod(text);
      } catch (const std::exception&) {
        throw InputError("--beta needs a number, got `" + text + "`");
      }
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--data") {
      o.data_dir = value();
      std::error_code error;
      if (!std::filesystem::is_directory(o.data_dir, error))
        throw InputError("--data: `" + o.data_dir + "` is not a directory");
    } else if (a == "--device") {
      o.device = static_cast<int>(parse_int("--device", value(), 0));
    } else {
      throw InputError("unknown option `" + a + "`\n" + bench_usage());
    }
  }
  return o;
}

}  // namespace blockeigs::spmm::bench
