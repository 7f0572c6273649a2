// spmm-bench's result check: the reference C on sampled rows (all rows of a
// small matrix; about 2000 random rows plus the longest ones of a large one;
// a subset of the columns of very long rows), computed on the host in double
// from the hash-valued B and C (bench_values.cuh), and a per-entry tolerance
// derived from the problem: 2 * gamma(L + 2) * (sum_k |alpha a_ik b_kj| + |beta c_ij|), gamma from
// sum_error_bound.hpp (worst case for short rows, probabilistic for long ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spmm/csr.hpp"

namespace blockeigs::spmm::bench {

// Sorted distinct rows: all when rows <= max_samples, else a random sample
// with the first, the last and the three longest rows.
std::vector<std::int64_t> sample_rows(const HostCsr<double>& A, std::int64_t max_samples, std::uint64_t seed);

struct Reference {
  std::int64_t n = 0;
  std::vector<std::int64_t> rows;        // sampled rows
  std::vector<std::int32_t> row_first;   // rows.size() + 1 offsets into col/value/tolerance
  std::vector<std::int32_t> col;         // checked columns of each sampled row
  std::vector<double> value, tolerance;  // reference and allowed error per checked entry
  std::vector<double> value_im;          // the reference's imaginary parts (complex values)
};

// Work per sampled row is at most about `work_per_row` multiply-adds: long
// rows check fewer columns (at least the first and the last).
template <class T>
Reference make_reference(const HostCsr<T>& A, const std::vector<std::int64_t>& rows, std::int64_t n, T alpha, T beta,
                         std::uint64_t b_seed, std::uint64_t c_seed, std::int64_t work_per_row);

struct CheckResult {
  std::int64_t checked = 0, wrong = 0;
  std::string first;  // the first wrong entry, in words
  bool ok() const { return wrong == 0; }
};

// `gathered` holds C's sampled rows: rows.size() x n, row-major.
template <class T>
CheckResult compare(const Reference& reference, const std::vector<T>& gathered);

}  // namespace blockeigs::spmm::bench
