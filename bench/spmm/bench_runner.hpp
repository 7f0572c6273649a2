// spmm-bench: options and the run over the suite. For each matrix (built on
// the host once) and precision, for each block width n: our row_split,
// merge_based and automatic (spmm::Plan) and every cuSPARSE CSR algorithm
// that accepts the case, on the same hash-valued inputs; each result checked
// against a host reference on sampled rows, then timed with CUDA events
// (median of runs, inputs rotated over several copies when they fit in L2).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"

namespace blockeigs::spmm::bench {

// The element types spmm-bench runs: real fp32 and fp64, complex c64 and c128
// (NumPy's complex64 and complex128).
enum class BenchValues { fp32, fp64, c64, c128 };
std::string_view to_string(BenchValues values);

struct BenchOptions {
  std::string suite = "full";        // full | quick
  std::string matrices;              // regex on matrix names; empty: all
  std::vector<std::int64_t> widths;  // empty: 1, 2, 4, ..., 256 (quick: 1, 4, 32, 128)
  std::vector<BenchValues> values{BenchValues::fp32, BenchValues::fp64};
  int max_reps = 20;             // timed runs per case at most (at least 3 unless a run takes > 0.5 s)
  double target_seconds = 0.02;  // timing budget per algorithm and case
  double beta = 0.0;             // C = A B + beta C
  std::string csv;               // write every row here
  std::string data_dir;          // SuiteSparse *.mtx.gz to add, replicated block-diagonally
  int device = 0;
  bool help = false;
};

// Throws InputError naming the bad option.
BenchOptions parse_bench_options(const std::vector<std::string>& args);
std::string bench_usage();

// Runs the suite and prints the table and the summary; returns the exit
// code: 0 when every check passed, 1 otherwise. Throws Error where CUDA sees
// no GPU, and in a build without CUDA (bench_runner_stub.cpp).
int run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace blockeigs::spmm::bench
