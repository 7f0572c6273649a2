// Chebyshev-filtered subspace iteration (ChFSI) for many extreme eigenpairs of
// a symmetric operator, after Zhou, Saad, Tiago and Chelikowsky (J. Comput.
// Phys. 2006) and ChASE (Winkelmann, Springer and Di Napoli, ACM TOMS 2019),
// on our sparse operator:
//
//  - a block V of m = k + guard columns; each iteration filters its active
//    columns with a Chebyshev polynomial in s A (chebyshev_filter.hpp) that
//    damps [a, b], a the block's largest Ritz value and b an upper bound of
//    the spectrum (a few Lanczos steps, spectrum_bounds.hpp), so the wanted
//    components grow against the rest;
//  - each column's degree follows from its residual and its Ritz value's
//    distance from a (the growth it needs to meet the tolerance), even and at
//    most max_degree;
//  - the active columns are orthonormalised against the locked ones and
//    among themselves (Cholesky QR twice, scaled; shifted where the Gram
//    matrix is not positive definite in working precision), then
//    Rayleigh-Ritz on them: A V, V^T A V, its eigenpairs (cuSOLVER's syevd
//    on the device, LAPACK's on the host, eigen_solvers.hpp), V rotated and
//    A V of the Ritz vectors made anew (a product costs less than rotating
//    A V), residuals;
//  - hard locking: the wanted pairs that pass the stopping test, in order from
//    the wanted end, leave the active block; they get no more products, and
//    the block the filter and the dense work touch shrinks as the run goes on;
//  - the mixed filter (search_precision fp32, and auto on the device), after
//    ChASE's: the guard columns, and the wanted columns far from convergence
//    (their degree then aims at a residual well above fp32's rounding), are
//    filtered in fp32 with A's fp32 copy (half the bytes a product); the
//    rest, and all dense work, stay in fp64.
//
// The stopping test, the result and the monitor are LOBPCG's (lobpcg.hpp):
// the same options (k, block_size, which, tolerance, test, max_iterations,
// seed, monitor, between_iterations) and the same result. Standard problems
// only (A x = lambda x); no preconditioner (the filter is the acceleration).
#pragma once

#include <optional>

#include "solver/lobpcg/lobpcg.hpp"

namespace blockeigs::solver {

// The filter's knobs: every automatic value (0) suits any run.
struct FilterTuning {
  int first_degree = 0;   // the degree of the first iteration's filter (no residuals yet); 0: 16
  int max_degree = 0;     // a column's degree at most; 0: 150
  int lanczos_steps = 0;  // for the spectrum's upper bound; 0: 25
  // The guard columns' degree: 0, the hardest active wanted column's; n > 0, n percent of it (at least 2).
  int guard_degree_percent = 0;
};

// The block of m columns for k pairs: k plus max(16, min(k / 2, 128 + k / 10))
// guard columns (more guard columns make the filter's damped interval start
// further from the wanted pairs, fewer keep the dense work, ~m^2 n, down),
// at most the matrix's rows.
int default_filter_block_size(int k, std::int64_t global_rows);

// Whether the filter runs mixed (search_precision fp32, or auto in device memory) on an operator of fp64
// values (value_bytes 8); an fp32 operator is in fp32 throughout. The windows' slices follow the same rule.
bool filter_mixed(SearchPrecision requested, Space space, int value_bytes);

// The mixed filter's floor, as a share of ||A||: a column whose residual is above 10 times it is filtered
// in fp32 (fp32's rounding in the products, ~1e-7 ||A|| grown by the degree, lies well below it), and in
// fp64 from there on (docs/benchmarks/many-eigenpairs.md).
inline constexpr double kMixedFilterFloor = 1e-4;

// Collective over A.comm(). `start`, if given, holds up to the block size
// columns of the start block in A's space (the rest are random). Throws
// InputError for bad options (k, block_size and the rows as lobpcg checks them).
template <class T>
LobpcgResult<T> chebyshev_filter_eigs(LinearOperator<T>& A, const LobpcgOptions& options,
                                      const FilterTuning& tuning = {},
                                      std::optional<dense::ConstDenseView<T>> start = std::nullopt);

}  // namespace blockeigs::solver
