// Where the spectrum of s A ends (s = +1, or -1 for the largest end), from a
// few Lanczos steps on one random vector: Zhou and Li (Linear Algebra Appl.
// 2011) show that the largest Ritz value of the tridiagonal T_k plus |beta_k|
// bounds the top of the spectrum from above in practice after ~20 steps;
// T_k's smallest Ritz value lies above the bottom.
#pragma once

#include <cstdint>

#include "solver/base/linear_operator.hpp"

namespace blockeigs::solver {

struct SpectrumEstimate {
  double lowest_ritz = 0;  // >= the smallest eigenvalue of s A
  double top_ritz = 0;     // <= the largest eigenvalue of s A
  double upper_bound = 0;  // >= the largest eigenvalue of s A (in practice)
  // top_ritz plus its Ritz residual |beta_k| |e_k^T y|: an eigenvalue lies within it of top_ritz, the largest
  // one once the Lanczos steps have found the top (far tighter than upper_bound where beta stays large).
  double residual_bound = 0;
  int products = 0;  // single-column products made
};

// Collective over A.comm() (reductions on `comm`, a communicator of the
// caller's no one else receives on). The start vector is drawn for the
// operator's global rows from `seed`, the same at any rank count.
template <class T>
SpectrumEstimate lanczos_bounds(LinearOperator<T>& A, int sign, int steps, std::uint64_t seed, MPI_Comm comm);

}  // namespace blockeigs::solver
