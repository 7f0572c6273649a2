// Shared helpers for the test suites: where the real matrices live, random
// dense blocks, and tolerances derived from the problem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"
#include "solver/blocks/block_ops.hpp"
#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "dense/dense.hpp"

namespace blockeigs::test {

// Folder with the SuiteSparse matrices (../shared/data/matrices, or
// $BLOCKEIGS_DATA_DIR); empty when it does not exist.
std::string data_dir();
// Names (without .mtx.gz) of every matrix in data_dir(), sorted.
std::vector<std::string> data_matrix_names();

// Local CSR (int32) from rows with global columns; columns stay global, so
// `rows` must be a whole matrix or the columns must fit in int32.
template <class T>
spmm::HostCsr<T> to_host_csr(const CsrRows& rows);

// A host block filled with reproducible values in [-1, 1).
template <class T>
dense::DenseBlock<T> random_block(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t ld = 0);

// A small host matrix of reproducible values in [-1, 1): entry (i, j) is
// solver::hash_uniform(seed, i, j).
solver::HostMatrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed);

// Small dense matrices (row-major vectors of rows) for building test
// problems by Kronecker products, and their CSR form.
using Dense = std::vector<std::vector<double>>;
Dense tridiagonal(std::int64_t n, double diag, double off);
Dense kron(const Dense& A, const Dense& B);
Dense plus(const Dense& A, const Dense& B);
CsrRows to_csr(const Dense& M);

// Rows [first, first + m) of an n x n matrix (not symmetric) with 0-6
// random sorted columns anywhere in [0, n) and a diagonal entry on every
// third row: empty rows, rows with only remote columns, an empty range.
CsrRows random_local_rows(std::int64_t n, std::int64_t first, std::int64_t m, std::uint64_t seed);

// A x = lambda B x with its eigenvalues, ascending.
struct Pencil {
  CsrRows A, B;
  std::vector<double> exact;
};
// Linear elements on [0, 1]^dims with n interior nodes a direction
// (Dirichlet): K1 = tridiag(-1, 2, -1) / h, M1 = tridiag(1, 4, 1) h / 6, and
// in 2D K1 (x) M1 + M1 (x) K1 over M1 (x) M1 (3D likewise), whose eigenvalues
// are the sums of the 1D ones, (6 / h^2)(1 - cos(j pi h)) / (2 + cos(j pi h)).
// Built from dense Kronecker products: small n only.
Pencil fem_p1(int dims, std::int64_t n);

// The CPU backend's context, one per test executable.
const dense::Context& host_context();

// Largest |x - y| / (scale_i) over a block, where scale_i comes from the row:
// the bound for a dot product of length L with |a|,|b| <= max is
// gamma_L * sum |a_ik| |b_kj| (Higham); `row_abs_sums` holds sum_k |a_ik| * max|b|.
double max_scaled_error(const dense::DenseBlock<double>& x, const dense::DenseBlock<double>& y,
                        const std::vector<double>& row_scale);

// A whole matrix (first_row == 0, or a block of rows placed at first_row) as
// a dense row-major global_rows x global_cols array.
std::vector<double> dense(const CsrRows& m);

// Eigenvalues of a small dense symmetric n x n matrix (row-major), ascending,
// by cyclic Jacobi: slow but simple enough to trust, and independent of the
// closed forms and solvers it checks.
std::vector<double> dense_symmetric_eigenvalues(std::vector<double> a, int n);

// Eigenvalues of the dense symmetric-definite pencil (A, B), ascending: those
// of L^-1 A L^-T with B = L L^T (Cholesky; B must be positive definite).
std::vector<double> dense_generalized_eigenvalues(const std::vector<double>& a, const std::vector<double>& b, int n);

// A placement of nb residuals as LOBPCG makes them (residual j at column
// position[j]): order 0 in order, 1 reversed, 2 the odd ones first.
inline std::vector<std::int64_t> residual_placement(std::int64_t nb, int order) {
  std::vector<std::int64_t> position(static_cast<std::size_t>(nb));
  std::int64_t next = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (std::int64_t j = 0; j < nb; ++j) {
      if (order == 0) position[j] = j;
      if (order == 1) position[j] = nb - 1 - j;
      if (order == 2 && (j % 2 == 1) == (pass == 0)) position[j] = next++;
    }
  return position;
}

}  // namespace blockeigs::test
