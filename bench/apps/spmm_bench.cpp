// spmm-bench: our CUDA SpMM kernels against every cuSPARSE CSR algorithm on
// one suite of matrices (bench/spmm/bench_runner.hpp has the options and the
// method). It needs a CUDA build and a GPU; without them --help and
// --version still answer, the options are still checked, and a run says
// what is missing (exit 1). Exit code 1 when a result check failed or no GPU
// is there, 2 on a bad command line.
#include <algorithm>
#include <exception>
#include <iterator>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cli.hpp"
#include "bench/spmm/bench_runner.hpp"
#include "core/error.hpp"

namespace {

constexpr const char* requirement =
    "Needs a CUDA build (cmake --preset cuda) and a GPU; without them only --help and --version run.\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

std::string usage() { return blockeigs::spmm::bench::bench_usage() + requirement; }

// The options bench/spmm/bench_options.cpp reads; the first other one is
// named here, in the apps' words.
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
  try {
    return spmm::bench::run_bench(spmm::bench::parse_bench_options(args), std::cout);
  } catch (const InputError& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return apps::exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return apps::exit_error;
  }
}
