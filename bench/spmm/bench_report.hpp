// spmm-bench's results: one record per (matrix, precision, n, algorithm),
// printed as a table row, written as CSV, and summed up against the
// performance bar (speedup of automatic over the best cuSPARSE algorithm,
// heuristic within 5% of the faster of our kernels, traffic bound on the
// 7-point Laplacian).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace blockeigs::spmm::bench {

struct Record {
  std::string matrix;
  std::int64_t rows = 0, cols = 0, nnz = 0, max_row_length = 0;
  double scattered = 0;  // RowShape::scattered
  double span = 0;       // RowShape::span
  double mean_row_length = 0.0;
  std::string precision;  // fp32 | fp64
  std::int64_t n = 0;
  std::string algorithm;  // row_split, merge_based, automatic, cusparse_*
  std::string chosen;     // for automatic: the kernel the plan picked
  std::int64_t slab = 0;  // for automatic: the plan's column slab, 0 if it takes all n at once
  double seconds = -1.0;  // < 0: not run (see note)
  double gflops = 0.0, pct_bound = 0.0;
  double speedup = 0.0;  // best cuSPARSE time / this time (0 when unknown)
  std::string check;     // PASS | FAIL | SKIP
  int copies = 1, reps = 0;
  std::string note;  // why skipped, or the first wrong entry

  bool measured() const { return seconds > 0.0; }
  bool ours() const { return algorithm == "row_split" || algorithm == "merge_based" || algorithm == "automatic"; }
};

// Fills speedup for every record of one case (same matrix, precision, n).
void set_speedups(std::vector<Record>& one_case);

void print_table_header(std::ostream& out);
void print_record(std::ostream& out, const Record& r);
void write_csv(const std::string& path, const std::vector<Record>& records);

// Per precision: geometric-mean and minimum speedup of automatic over the
// best cuSPARSE algorithm, how often automatic is within 5% of the faster of
// row_split and merge_based, and automatic's % of the traffic bound on the
// 7-point Laplacian for n <= 16; then whether the performance bar is met.
// Returns true when every check passed.
bool print_summary(std::ostream& out, const std::vector<Record>& records);

}  // namespace blockeigs::spmm::bench
