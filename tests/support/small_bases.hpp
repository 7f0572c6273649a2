// Small explicit bases for the tests of LOBPCG's small dense problems: plain
// products, a column made dependent on others, a small symmetric operator,
// and a basis S with its Gram matrices S^T A S and S^T S.
#pragma once

#include <cstdint>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::test::small_bases {

using solver::HostMatrix;

inline const solver::lobpcg_detail::Tolerances tol = solver::lobpcg_detail::Tolerances::for_type<double>();

inline HostMatrix mul(const HostMatrix& A, const HostMatrix& B) {
  HostMatrix C(A.rows(), B.cols());
  for (std::int64_t i = 0; i < A.rows(); ++i)
    for (std::int64_t l = 0; l < A.cols(); ++l)
      for (std::int64_t j = 0; j < B.cols(); ++j) C(i, j) += A(i, l) * B(l, j);
  return C;
}

inline HostMatrix tmul(const HostMatrix& A, const HostMatrix& B) {  // A^T B
  HostMatrix C(A.cols(), B.cols());
  for (std::int64_t l = 0; l < A.rows(); ++l)
    for (std::int64_t i = 0; i < A.cols(); ++i)
      for (std::int64_t j = 0; j < B.cols(); ++j) C(i, j) += A(l, i) * B(l, j);
  return C;
}

// Column c of V replaced by a combination of others (plus `noise` times fresh values).
inline void make_dependent(HostMatrix& V, std::int64_t c, std::int64_t a, std::int64_t b, double noise) {
  for (std::int64_t i = 0; i < V.rows(); ++i)
    V(i, c) = 2 * V(i, a) - 0.5 * V(i, b) + noise * solver::hash_uniform(77, i, c);
}

// A symmetric "operator" on R^rows: diag(1..rows) plus a small symmetric coupling.
inline HostMatrix small_operator(std::int64_t rows) {
  HostMatrix A(rows, rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    A(i, i) = 1.0 + double(i);
    if (i + 1 < rows) A(i, i + 1) = A(i + 1, i) = 0.3;
  }
  return A;
}

// A basis S = [X P W] of R^rows and its Gram matrices.
struct Basis {
  HostMatrix S, GA, GB;
};

inline Basis basis(HostMatrix S) {
  const HostMatrix A = small_operator(S.rows());
  return {S, tmul(S, mul(A, S)), tmul(S, S)};
}

}  // namespace blockeigs::test::small_bases
