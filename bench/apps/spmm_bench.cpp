// spmm-bench: our CUDA SpMM kernels against every cuSPARSE CSR algorithm on
// one suite of matrices (bench/bench_runner.hpp has the options and the
// method). It needs a CUDA build and a GPU; without them --help and
// --version still answer, and anything else says what is missing (exit 1).
// Exit code 1 when a result check failed or no GPU is there, 2 on a bad
// command line.
#include <algorithm>
#include <exception>
#include <iterator>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cli.hpp"
#include "core/error.hpp"
#include "dense/memory.hpp"
#ifdef BLOCKEIGS_HAVE_CUDA
#include "bench/spmm/bench_runner.hpp"
#endif

namespace {

constexpr const char* requirement =
    "Needs a CUDA build (cmake --preset cuda) and a GPU; without them only --help and --version run.\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

std::string usage() {
#ifdef BLOCKEIGS_HAVE_CUDA
  return blockeigs::spmm::bench::bench_usage() + requirement;
#else
  return std::string(
             "usage: spmm-bench [--suite full|quick] [--matrices REGEX] [--n 1,2,4,...] [OPTIONS]\n"
             "Times our CUDA SpMM kernels against every cuSPARSE CSR SpMM algorithm (the full list\n"
             "of options is in a CUDA build's --help).\n") +
         requirement;
#endif
}

// The options bench/bench_runner.cpp reads; the first other one is named
// here, the same way in builds with and without CUDA.
std::string first_unknown_option(const std::vector<std::string>& args) {
  constexpr std::string_view known[] = {"--suite", "--matrices", "--n",    "--precision", "--reps",
                                        "--beta",  "--csv",      "--data", "--device"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!arg.starts_with("-")) continue;
    if (std::find(std::begin(known), std::end(known), arg) == std::end(known)) return arg;
    ++i;  // its value, which may start with '-' (--beta -1)
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace blockeigs;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (const apps::InfoRequest request = apps::info_request(args); request != apps::InfoRequest::none)
    return apps::print_info(request, "spmm-bench", usage());
  if (const std::string unknown = first_unknown_option(args); !unknown.empty())
    return apps::usage_error("spmm-bench", apps::unknown_option(unknown));
#ifdef BLOCKEIGS_HAVE_CUDA
  using namespace blockeigs::spmm::bench;
  try {
    const BenchOptions options = parse_bench_options(args);
    if (spmm::cuda_device_count() == 0) {
      std::cerr << "spmm-bench: needs a GPU, and this machine has none that CUDA can use "
                   "(run it on a GPU machine; --help works anywhere)\n";
      return apps::exit_error;
    }
    return run_bench(options, std::cout);
  } catch (const InputError& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return apps::exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return apps::exit_error;
  }
#else
  std::cerr << "spmm-bench: needs a CUDA build and a GPU; this build has CUDA off "
               "(configure with cmake --preset cuda; --help works anywhere)\n";
  return apps::exit_error;
#endif
}
