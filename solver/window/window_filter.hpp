// The polynomial filter of a spectrum window [a, b]: the Chebyshev series of
// the window's indicator in A_hat (scaled_operator.hpp), damped by Lanczos'
// sigma factors against Gibbs' oscillations, so that p(A) keeps the
// eigenvectors inside the window near 1 (about 0.5 at its ends) and shrinks
// those outside by how far they lie, with ripples of a few percent. As in
// EVSL (Li, Xi, Vecharynski, Yang and Saad, SIAM J. Sci. Comput. 2016),
// applied to blocks of vectors by the three-term recurrence, one operator
// product per degree over the block.
#pragma once

#include <cstdint>
#include <vector>

#include "solver/base/linear_operator.hpp"
#include "solver/window/scaled_operator.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

struct WindowFilter {
  SpectrumScale scale;
  std::vector<double> coefficients;  // of T_0 .. T_degree in A_hat, damped
  int degree() const { return static_cast<int>(coefficients.size()) - 1; }
  double value(double x) const;  // p at A's value x
};

// The filter of [a, b] (A's values). `degree` 0: automatic, the degree that
// resolves the window's width in the Chebyshev angle `resolution` times
// (degree ~ resolution pi / (acos alpha - acos beta)), within [16, max_degree].
// (Its edges are then about as wide as the window over `resolution`.)
WindowFilter window_filter(const SpectrumScale& scale, double a, double b, int degree, double resolution,
                           int max_degree);

// Y = p(A) V. V is overwritten (it serves as the recurrence's T_{j-1});
// `scratch` and Y have V's rows and columns. Collective over A.comm().
// Returns the operator products made, counted in columns.
template <class T>
std::int64_t apply_window_filter(LinearOperator<T>& A, const WindowFilter& filter, dense::DenseView<T> V,
                                 dense::DenseView<T> scratch, dense::DenseView<T> Y);

}  // namespace blockeigs::solver
