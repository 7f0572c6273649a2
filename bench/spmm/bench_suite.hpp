// spmm-bench's matrices, built on the host once per matrix: Laplacians,
// uniform random and power-law rows, the aspect-ratio sweep of dense blocks
// at a fixed nonzero count (Yang, Buluc and Owens' experiment), and the
// SuiteSparse matrices of a folder replicated block-diagonally.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::spmm::bench {

struct MatrixSpec {
  std::string name;
  std::function<HostCsr<double>()> build;
};

// "full" (default) or "quick" (a smoke run); every *.mtx.gz of data_dir (if
// not empty) is added, replicated to at least 10M nonzeros (quick: the first
// three, to 1M).
// Throws InputError for another suite name.
std::vector<MatrixSpec> suite_matrices(const std::string& suite, const std::string& data_dir);

// int64 columns to int32; throws when the matrix does not fit.
HostCsr<double> csr_from_rows(const CsrRows& rows);
// rows x rows, `per_row` distinct random columns in every row.
HostCsr<double> uniform_random(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed);
// rows x rows, Pareto row lengths (mean about `mean`), plus a few rows of
// `longest`, longest / 2, ... nonzeros, in random places.
HostCsr<double> power_law(std::int64_t rows, double mean, std::int64_t longest, std::uint64_t seed);
// Every entry stored.
HostCsr<double> dense(std::int64_t rows, std::int64_t cols);
// diag(block, block, ...) with at least min_nnz nonzeros.
HostCsr<double> replicate_block_diagonal(const HostCsr<double>& block, std::int64_t min_nnz);

}  // namespace blockeigs::spmm::bench
