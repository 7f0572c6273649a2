// The density of states of a symmetric operator by the kernel polynomial
// method (Weisse, Wellein, Alvermann and Fehske, Rev. Mod. Phys. 2006; Lin,
// Saad and Yang, SIAM Review 2016): the Chebyshev moments
// mu_j = tr T_j(A_hat) estimated with random vectors (Hutchinson), v^T T_j v
// averaged over the vectors, the series damped by Jackson's kernel so that
// it is non-negative and free of Gibbs oscillations. Block products only:
// the vectors are one block, and the moments come two a step from
// T_{2j} = 2 T_j^2 - T_0 and T_{2j+1} = 2 T_{j+1} T_j - T_1.
//
// From the moments: the count of eigenvalues in [a, b] (the trace of the
// damped expansion of the interval's indicator) with an error bar (the
// spread of the per-vector estimates over sqrt(vectors)), the points that
// cut [a, b] into slices of equal counts, and the density itself.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "solver/base/linear_operator.hpp"
#include "solver/window/scaled_operator.hpp"

namespace blockeigs::solver {

struct DensityOfStates {
  SpectrumScale scale;
  std::int64_t rows = 0;  // the operator's global rows
  std::vector<std::vector<double>>
      mu;                     // mu[v][j], j = 0 .. degree: vector v's v^T T_j(A_hat) v, scaled so mu[v][0] = rows
  std::int64_t products = 0;  // operator products, counted in columns
  int degree() const { return mu.empty() ? 0 : static_cast<int>(mu.front().size()) - 1; }
};

struct CountEstimate {
  double count = 0;  // the estimated number of eigenvalues
  double error = 0;  // one standard error of the estimate (the vectors' spread / sqrt(vectors))
};

// `vectors` random columns (drawn for the global rows from `seed`, the same at
// any rank count) and moments 0 .. degree (degree >= 2). Collective over
// A.comm(); reductions on `comm` (a communicator of the caller's).
template <class T>
DensityOfStates kpm_density(LinearOperator<T>& A, const SpectrumScale& scale, int vectors, int degree,
                            std::uint64_t seed, MPI_Comm comm);

// Jackson's damping factors g_0 .. g_degree.
std::vector<double> jackson_factors(int degree);

// The Chebyshev coefficients of the indicator of [alpha, beta] (inside
// [-1, 1]) up to `degree`, undamped.
std::vector<double> indicator_coefficients(double alpha, double beta, int degree);

// The estimated count of eigenvalues in [a, b] (A's values).
CountEstimate estimate_count(const DensityOfStates& dos, double a, double b);

// slices + 1 points a = x_0 < x_1 < ... < x_slices = b with about the same
// estimated count between neighbours.
std::vector<double> slice_points(const DensityOfStates& dos, double a, double b, int slices);

// The damped density (eigenvalues per unit of A's values) at `points` evenly
// spaced points inside the scaled spectrum: x, then density.
std::vector<std::vector<double>> density_curve(const DensityOfStates& dos, int points);

}  // namespace blockeigs::solver
