// spmm-bench's run where the build has no CUDA: our kernels and cuSPARSE's
// are not compiled, and it says so (the options are still read and checked,
// bench_options.cpp).
#include <ostream>

#include "bench/spmm/bench_runner.hpp"
#include "core/error.hpp"

namespace blockeigs::spmm::bench {

int run_bench(const BenchOptions&, std::ostream&) {
  throw Error(
      "needs a CUDA build and a GPU; this build has CUDA off "
      "(configure with cmake --preset cuda; --help works anywhere)");
}

}  // namespace blockeigs::spmm::bench
