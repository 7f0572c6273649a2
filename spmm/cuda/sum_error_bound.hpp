// The relative error bound of a computed sum of products, shared by
// spmm-bench's result check and the GPU SpMM tests:
//   |c - c_exact| <= sum_error_bound(L, eps) * (sum_k |alpha a_ik b_kj| + |beta c_ij|)
// for a row of L - 2 nonzeros plus the alpha and beta updates, in any
// summation order (tree, blocked, carries added later: every order is
// covered), eps the machine epsilon of the precision the device computes in.
//
// Two bounds; the smaller is used:
//   - worst case (Higham, Accuracy and Stability, 2nd ed., Lemma 3.1), with
//     eps in place of the unit roundoff u = eps / 2 (a factor 2 of margin):
//       gamma(L) = L eps / (1 - L eps),
//     valid only while L eps < 1 and useless (>= 1: "any result") from about
//     L eps = 1/2 on: a 2 x 8.4M fp32 row has L eps = 1.0 and the old formula
//     went negative;
//   - probabilistic (Higham and Mary, SISC 41(5), 2019, Theorem 3.1), rounding
//     errors modelled as independent and mean zero:
//       gamma~(lambda, L) = exp(lambda sqrt(L) u + L u^2 / (1 - u)) - 1,
//     which holds for all L terms of a sum with probability at least
//     1 - 2 L exp(-lambda^2 (1 - u)^2 / 2); lambda = 8 makes that
//     1 - L * 2.5e-14 (a row of 2^31 terms: 1 - 5e-5), the safety factor.
// The worst case is the smaller one for L <= lambda^2 / 4 = 16, so short rows
// keep the deterministic bound; longer rows get one that grows like sqrt(L)
// (fp32, L = 100k: 1.5e-4 instead of 1.2e-2; L = 8.4M: 1.4e-3 instead of
// nothing), finite and positive for every L. Computed in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace blockeigs::spmm {

inline constexpr double sum_error_lambda = 8.0;

inline double sum_error_bound(std::int64_t terms, double eps) {
  const double l = double(std::max<std::int64_t>(terms, 1));
  const double u = eps / 2.0;
  const double probabilistic = std::expm1(sum_error_lambda * std::sqrt(l) * u + l * u * u / (1.0 - u));
  const double le = l * eps;
  const double worst = le < 0.5 ? le / (1.0 - le) : std::numeric_limits<double>::infinity();
  return std::min(worst, probabilistic);
}

}  // namespace blockeigs::spmm
