// spmm-bench: our CUDA SpMM kernels against every cuSPARSE CSR algorithm on
// one suite of matrices (bench/bench_runner.hpp has the options and the
// method). Exit code 1 when a result check failed, 2 on bad input.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_runner.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  using namespace blockeigs::spmm::bench;
  try {
    const BenchOptions options = parse_bench_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << bench_usage();
      return 0;
    }
    return run_bench(options, std::cout);
  } catch (const blockeigs::InputError& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "spmm-bench: " << e.what() << "\n";
    return 1;
  }
}
