// The Chebyshev filter of Chebyshev-filtered subspace iteration: each column
// of a block multiplied by a polynomial in s A (s = +1 for the smallest end,
// -1 for the largest) that grows fast below `a` and stays within [-1, 1] on
// [a, b], so that the components along the wanted eigenvalues (below a) grow
// against the rest of the spectrum (in [a, b]). The scaled three-term
// recurrence of Zhou and Saad (J. Comput. Phys. 2007, Algorithm 4.1) keeps the
// values near 1 at `lowest` (the lowest Ritz value), so nothing overflows.
//
// Each column has its own degree (even, so that the result lands in the
// input's buffer): the columns come sorted by descending degree, and step i
// touches only the prefix of columns whose degree is at least i. A step is
// one operator product over that prefix where the operator can stand for
// A - s c I itself (DiagonalShiftOperator: the distributed operator), else a
// product and an element-wise pass.
#pragma once

#include <cstdint>
#include <vector>

#include "solver/base/linear_operator.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

// The interval the filter damps, in terms of s A: [a, b] with b above the
// spectrum of s A; `lowest` <= a is where the scaling keeps values near 1.
struct FilterInterval {
  double lowest = 0;
  double a = 0;
  double b = 0;
  int sign = 1;  // s
};

// The growth of the degree-d filter at x (below a) against its bound on [a, b],
// per degree: |t| + sqrt(t^2 - 1) with t = (x - c) / e; 1 inside [a, b].
double filter_growth_per_degree(const FilterInterval& interval, double x);

// V(:, j) = p_{degrees[j]}(s A) V(:, j) for every column of V, degrees
// non-increasing, each even and at least 2. `scratch` has V's rows and at
// least V's columns. Collective over A.comm(). Returns the operator products
// made, counted in columns.
template <class T>
std::int64_t chebyshev_filter(LinearOperator<T>& A, const FilterInterval& interval, const std::vector<int>& degrees,
                              dense::DenseView<T> V, dense::DenseView<T> scratch);

}  // namespace blockeigs::solver
