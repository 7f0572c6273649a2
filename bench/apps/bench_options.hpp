// Command-line options shared by the benchmark apps (operator-bench,
// block-ops-bench): the problem size under the app's own flag, --width,
// --reps, --backend and --fp32, and where the app takes them, --ld and
// --column (the block as a view inside a wider one); and the median they
// report. Every rank parses the same argv, so a bad argument stops every
// rank with the same message.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "core/checks.hpp"
#include "core/enums.hpp"

namespace blockeigs::apps {

struct BenchOptions {
  std::int64_t size = 0;  // --grid or --rows
  std::int64_t width = 16;
  int reps = 20;
  Backend backend = Backend::automatic;
  bool fp32 = false;
  std::int64_t ld = 0;      // --ld: columns of the enclosing block (default: column + width)
  std::int64_t column = 0;  // --column: the block's first column in it
};

// Answers --help or --version on rank 0 when `argv` asks for either: true
// when it did (the app then exits with exit_ok).
inline bool answered_info(int argc, char** argv, const char* program, const char* usage) {
  const InfoRequest request = info_request(std::vector<std::string>(argv + 1, argv + argc));
  if (request == InfoRequest::none) return false;
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank == 0) print_info(request, program, usage);
  return true;
}

// Null (after rank 0 has printed the reason to stderr) when an
// argument is unknown, lacks its value, or is not a positive integer (a
// non-negative one for --column) / a backend name, or the view does not fit
// its block. --ld and --column only with `layout`.
inline std::optional<BenchOptions> parse_bench_options(int argc, char** argv, const std::string& size_flag,
                                                       std::int64_t default_size, const char* program,
                                                       const char* usage, bool layout = false) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  auto fail = [&](const std::string& why) -> std::optional<BenchOptions> {
    if (rank == 0) usage_error(program, why);
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
    const bool layout_flag = layout && (flag == "--ld" || flag == "--column");
    if (flag != size_flag && flag != "--width" && flag != "--reps" && flag != "--backend" && !layout_flag)
      return fail("unknown option " + flag);
    if (i + 1 >= argc) return fail(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--backend") {
      const std::optional<Backend> backend = parse_backend(value);
      if (!backend) return fail("--backend " + value + ": expected cpu, cuda or auto");
      options.backend = *backend;
      continue;
    }
    const std::optional<long long> parsed = whole_integer(value);
    const long long least = flag == "--column" ? 0 : 1, number = parsed.value_or(least - 1);
    if (!parsed || number < least || (flag == "--reps" && number > 1000000))
      return fail(flag + " " + value + ": expected a " + (least == 0 ? "non-negative" : "positive") + " integer");
    if (flag == size_flag)
      options.size = number;
    else if (flag == "--width")
      options.width = number;
    else if (flag == "--ld")
      options.ld = number;
    else if (flag == "--column")
      options.column = number;
    else
      options.reps = static_cast<int>(number);
  }
  if (options.ld == 0) options.ld = options.column + options.width;
  if (options.column + options.width > options.ld)
    return fail("--column " + std::to_string(options.column) + " plus --width " + std::to_string(options.width) +
                " exceeds --ld " + std::to_string(options.ld));
  return options;
}

// The largest of every rank's `mine` (a step's wall time: the slowest rank's), on every rank.
inline double slowest_rank(MPI_Comm comm, double mine) {
  double out = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, comm));
  return out;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace blockeigs::apps
