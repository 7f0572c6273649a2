// LOBPCG's internal pieces, shared by lobpcg.cpp, lobpcg_small.cpp and
// lobpcg_ortho.cpp. Not part of the library's API.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "solver/block_ops.hpp"
#include "solver/collective.hpp"

namespace blockeigs::solver::lobpcg_detail {

// Thresholds, all tied to the working precision's epsilon.
struct Tolerances {
  double eps = 0;
  // SVQB keeps direction i of a unit-diagonal Gram matrix M (n x n) only if
  // theta_i > drop * theta_max, drop = 10 n eps: M's rounding error is about
  // eps per entry, so smaller eigenvalues carry no correct digit and their
  // directions would be amplified noise.
  double drop_per_column = 0;
  // A column whose projection onto the complement of Q keeps less than this
  // fraction of its norm is numerically inside span(Q) (what remains is the
  // projection's own rounding, about eps * ||w||): it is dropped.
  double remainder = 0;
  // Re-orthogonalisation stops once max |Q^T W| and max |W^T W - I| are below
  // this: eps^(2/3) is reached by two passes for any realistic row count
  // (rounding ~ sqrt(N) eps) and keeps the Rayleigh-Ritz Gram within 1e-9 of I.
  double orthogonality = 0;
  // The Rayleigh-Ritz Gram matrix is "ill-conditioned" below this reciprocal
  // condition: beyond 1/sqrt(eps) the Cholesky-based Ritz vectors would lose
  // more than half their digits, so P is dropped instead (a restart).
  double rcond_min = 0;

  template <class T>
  static Tolerances for_type() {
    const double e = std::numeric_limits<T>::epsilon();
    return {e, 10 * e, 100 * e, std::pow(e, 2.0 / 3.0), std::sqrt(e)};
  }
};

// Passes over W in orthonormalize_against before it gives up tightening
// (Duersch et al. observe two suffice; the rest covers extreme inputs).
inline constexpr int max_ortho_passes = 4;
// Rounds of random refill when the start block is rank deficient: random
// columns are independent with probability 1, so one round normally does;
// the rest only guards against pathological inputs before giving up.
inline constexpr int max_refills = 5;

// ---- small dense problems (host, LAPACK; pure functions) -------------------

// T (n x kept) with V T orthonormal, from G = V^T V (SVQB with dropping, see
// Tolerances). Column j is dropped outright when G_jj is not positive, or when
// reference_sq_norms is given and G_jj <= (remainder)^2 * reference_sq_norms[j].
HostMatrix svqb_transform(const HostMatrix& G, const Tolerances& tol,
                          const std::vector<double>* reference_sq_norms = nullptr);

struct RitzPairs {
  int level = 0;               // 0: whole basis; 1: P dropped (Cholesky); 2: P dropped, truncated basis
  std::vector<double> values;  // every Ritz value of the basis used, ascending
  HostMatrix vectors;          // ns x values.size(), GB-orthonormal; rows of unused columns zero
};

// Generalised Rayleigh-Ritz on GA c = theta GB c over basis columns [0, ns),
// where columns [p_begin, p_end) are P. Level 0 uses all columns (Cholesky of
// GB, rcond check); level 1 drops P; level 2 drops P and solves by SVQB of GB
// (rank revealing). Throws Error if even level 2 leaves fewer than `needed`.
RitzPairs rayleigh_ritz(const HostMatrix& GA, const HostMatrix& GB, std::int64_t p_begin,
                        std::int64_t p_end, std::int64_t needed, const Tolerances& tol);

// Hetmaniuk-Lehoucq basis selection: coefficients Cp (ns x np) of the new P
// from the chosen Ritz coefficients Cx (ns x nb, GB-orthonormal), the first
// x_rows rows of which belong to X. P spans the non-X parts of the active
// columns of Cx, made GB-orthogonal to Cx and GB-orthonormal: so P is
// orthonormal and orthogonal to the new X, with no big-block work.
HostMatrix basis_selection(const HostMatrix& Cx, const HostMatrix& GB, std::int64_t x_rows,
                           const std::vector<std::int64_t>& active, const Tolerances& tol);

// ---- rank 0 computes, everybody receives ----------------------------------

void broadcast(MPI_Comm comm, HostMatrix& M);
void broadcast(MPI_Comm comm, std::vector<double>& v);
void broadcast(MPI_Comm comm, int& value);

// ---- distributed orthonormalisation ---------------------------------------

// Makes the columns of W orthonormal and orthogonal to Q (orthonormal columns,
// may be empty), dropping numerically dependent directions; the kept ones are
// packed into W's leading columns. Returns how many were kept. `scratch` has
// W's rows and at least W.cols columns. Collective.
template <class T>
std::int64_t orthonormalize_against(const spmm::Context& context, MPI_Comm comm,
                                    spmm::ConstDenseView<T> Q, spmm::DenseView<T> W,
                                    spmm::DenseView<T> scratch, const Tolerances& tol);

// Fills X (local x nb) with an orthonormal start block: the user's columns
// first (if any), random ones for the rest and for any directions dropped as
// dependent. Collective.
template <class T>
void make_start_block(const spmm::Context& context, MPI_Comm comm, spmm::DenseView<T> X,
                      spmm::DenseView<T> scratch, const spmm::ConstDenseView<T>* user,
                      std::uint64_t seed, std::int64_t first_row, const Tolerances& tol);

}  // namespace blockeigs::solver::lobpcg_detail
