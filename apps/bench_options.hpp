// Command-line options shared by the benchmark apps (operator-bench,
// block-ops-bench): the problem size under the app's own flag, --width,
// --reps, --backend and --fp32; and the median they report. Every rank parses
// the same argv, so a bad argument stops every rank with the same message.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/enums.hpp"

namespace blockeigs::apps {

struct BenchOptions {
  std::int64_t size = 0;  // --grid or --rows
  std::int64_t width = 16;
  int reps = 20;
  Backend backend = Backend::automatic;
  bool fp32 = false;
};

// Null (after rank 0 has printed the reason and `usage` to stderr) when an
// argument is unknown, lacks its value, or is not a positive integer / a
// backend name.
inline std::optional<BenchOptions> parse_bench_options(int argc, char** argv, const std::string& size_flag,
                                                       std::int64_t default_size, const char* program,
                                                       const char* usage) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto fail = [&](const std::string& why) -> std::optional<BenchOptions> {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n%s", program, why.c_str(), usage);
    return std::nullopt;
  };
  BenchOptions options;
  options.size = default_size;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--fp32") {
      options.fp32 = true;
      continue;
    }
    if (flag != size_flag && flag != "--width" && flag != "--reps" && flag != "--backend")
      return fail("unknown option " + flag);
    if (i + 1 >= argc) return fail(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--backend") {
      const std::optional<Backend> backend = parse_backend(value);
      if (!backend) return fail("--backend " + value + ": expected cpu, cuda or auto");
      options.backend = *backend;
      continue;
    }
    std::size_t used = 0;
    long long number = 0;
    try {
      number = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || number < 1 || (flag == "--reps" && number > 1000000))
      return fail(flag + " " + value + ": expected a positive integer");
    if (flag == size_flag) options.size = number;
    else if (flag == "--width") options.width = number;
    else options.reps = static_cast<int>(number);
  }
  return options;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace blockeigs::apps
