// Helpers for MPI tests of the distributed operator: whole test matrices
// that every rank holds, and the single-rank reference product.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "dense/dense.hpp"

namespace blockeigs::test {

int mpi_rank(MPI_Comm comm = MPI_COMM_WORLD);
int mpi_size(MPI_Comm comm = MPI_COMM_WORLD);

// A square matrix with power-law row lengths (a few rows near max_row, most
// short), columns random, values in [-1, 1). Not symmetric.
CsrRows power_law_matrix(std::int64_t n, std::int64_t max_row, std::uint64_t seed);

// Block-diagonal matrix whose blocks follow `first_rows`: no rank needs halo data.
CsrRows block_diagonal_matrix(const std::vector<std::int64_t>& first_rows, std::uint64_t seed);

// Rank-count independent block: entry (global row i, column j) from a hash.
std::vector<double> hashed_block(std::int64_t first_row, std::int64_t rows, std::int64_t cols, std::uint64_t seed);

// Reference Y = A X for rows [begin, end) of a whole matrix, X given for all
// rows (row-major, cols wide); also returns per-row error scales
// gamma(L) * sum_k |a_ik| max_j |x_kj| for comparisons.
void reference_rows(const CsrRows& whole, const std::vector<double>& x_all, std::int64_t cols, std::int64_t begin,
                    std::int64_t end, std::vector<double>& y, std::vector<double>& scale, double eps);

// Every value of a dataset of an HDF5 file, read as doubles (a result file's).
std::vector<double> read_dataset(const std::string& file, const char* dataset);

// A folder every rank agrees on (under the system's temporary folder, named
// by `tag` and the rank count), made by rank 0. Collective.
std::filesystem::path shared_folder(const std::string& tag);

// Rank 0 writes `text` to `path`; every rank waits for it. Collective.
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace blockeigs::test
