// Rank-revealing orthonormalisation of distributed blocks (SVQB with
// dropping of numerically dependent directions, after Duersch, Shao, Yang and
// Gu 2018), shared by LOBPCG (its W block and start block) and block CG (its
// search block).
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

// Thresholds, all tied to the working precision's epsilon.
struct OrthonormalizeTolerances {
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
  // One SVQB pass from a Gram matrix whose unit-diagonal form has eigenvalue
  // ratio theta_min / theta_max leaves W^T W - I at about eps / ratio (times
  // the Gram's own rounding, ~sqrt(rows) eps). Above this ratio (sqrt(eps))
  // one pass gives a basis within ~1e-5 of orthonormal: well conditioned,
  // which is all block CG's search block needs.
  double single_pass_ratio = 0;
  // condition_against may take W^T W - C^T C (C = Q^T W, all from one Gram
  // matrix of [Q W] and W) for the Gram matrix of the projected W, instead
  // of reading the projected block again, only while every column keeps at
  // least this fraction of its squared norm: the difference then carries
  // the Gram matrix's own rounding times at most 1 / fraction (100x, ~1e-14
  // relative in fp64), far below what single_pass_ratio allows.
  double derived_gram_min_kept = 0;
  // LOBPCG's Rayleigh-Ritz solves GA c = theta GB c to first order in
  // E = GB - I, without factorising GB, while ns max |E_ij| (a bound on
  // ||E||_2 for ns x ns) is at most this: the neglected O(||E||^2) terms are
  // then below eps, the Cholesky path's own rounding. sqrt(eps): in fp64 at
  // ns = 60, entries up to 2.5e-10; LOBPCG's carried GB stays far nearer I.
  double identity_gram = 0;
  // well_conditioned_transform takes Cholesky QR instead of SVQB where the
  // Gram matrix's unit-diagonal form has an estimated reciprocal condition
  // (1-norm) of at least this: 1000 single_pass_ratio, so that an estimate
  // off by the estimator's usual factor of a few still leaves every caller's
  // decision against single_pass_ratio the one SVQB's exact ratio would give,
  // and nothing SVQB would drop (theta below drop_per_column) can pass.
  double cholesky_rcond_min = 0;

  template <class T>
  static OrthonormalizeTolerances for_type() {
    const double e = std::numeric_limits<real_t<T>>::epsilon();  // a complex type's parts' epsilon
    return {e,
            10 * e,
            100 * e,
            std::pow(e, 2.0 / 3.0),
            std::sqrt(e),
            std::sqrt(e),
            1e-2,
            std::sqrt(e),
            1000 * std::sqrt(e)};
  }
};

// max |M_ij| and max |M_ij - I_ij|: how far a Gram matrix is from 0 or from I.
template <class S>
double max_abs(const HostMatrixOf<S>& M);
template <class S>
double max_abs_minus_identity(const HostMatrixOf<S>& M);

// Passes over W in orthonormalize_against before it gives up tightening
// (Duersch et al. observe two suffice; the rest covers extreme inputs).
inline constexpr int max_ortho_passes = 4;
// T (n x kept) with V T orthonormal, from G = V^T V (SVQB with dropping, see
// Tolerances). Column j is dropped outright when G_jj is not positive, or when
// reference_sq_norms is given and G_jj <= (remainder)^2 * reference_sq_norms[j].
// kept_ratio, if given, receives theta_min / theta_max over the kept
// directions of G's unit-diagonal form (1 when none is kept).
HostMatrix svqb_transform(const HostMatrix& G, const OrthonormalizeTolerances& tol,
                          const std::vector<double>* reference_sq_norms = nullptr, double* kept_ratio = nullptr);
// The same for a Hermitian G = V^H V (complex V): LAPACK's zheevd for its eigenvectors.
ComplexHostMatrix svqb_transform(const ComplexHostMatrix& G, const OrthonormalizeTolerances& tol,
                                 const std::vector<double>* reference_sq_norms = nullptr, double* kept_ratio = nullptr);
// svqb_transform's result by Cholesky QR where that is as safe: every column
// live (no zero column, none inside span(Q) by reference_sq_norms) and the
// unit-diagonal form D G D = U^T U safely positive definite with estimated
// reciprocal condition >= tol.cholesky_rcond_min. Then T = D U^-1 (upper
// triangular, nothing dropped; V T is orthonormal to ~eps cond(G), as one
// SVQB pass) and kept_ratio receives the estimate (a stand-in for SVQB's
// theta_min / theta_max, which it bounds from below up to the estimator's
// error). Otherwise svqb_transform. For the Gram matrices LOBPCG conditions
// in the host's window every iteration (W's, and P's in basis_selection): a
// 20 x 20 factorisation and condition estimate take a few us where SVQB's
// eigensolver takes ~14.
HostMatrix well_conditioned_transform(const HostMatrix& G, const OrthonormalizeTolerances& tol,
                                      const std::vector<double>* reference_sq_norms = nullptr,
                                      double* kept_ratio = nullptr);
// The same for a Hermitian G (LAPACK's zpotrf, zpocon and ztrtri).
ComplexHostMatrix well_conditioned_transform(const ComplexHostMatrix& G, const OrthonormalizeTolerances& tol,
                                             const std::vector<double>* reference_sq_norms = nullptr,
                                             double* kept_ratio = nullptr);
// svqb_transform on rank 0, broadcast with its kept_ratio: every rank takes
// the same branch from the same bits (every rank may hold the same G, but
// one eigensolver result keeps them identical). Collective.
// S: double, or std::complex<double> for a Hermitian G.
template <class S>
HostMatrixOf<S> svqb_on_root(MPI_Comm comm, const HostMatrixOf<S>& G, const OrthonormalizeTolerances& tol,
                             const std::vector<double>* reference_sq_norms, double& kept_ratio);
// The same for well_conditioned_transform.
template <class S>
HostMatrixOf<S> well_conditioned_on_root(MPI_Comm comm, const HostMatrixOf<S>& G, const OrthonormalizeTolerances& tol,
                                         const std::vector<double>* reference_sq_norms, double& kept_ratio);

// Makes the columns of W orthonormal and orthogonal to Q (orthonormal columns,
// may be empty), dropping numerically dependent directions; the kept ones are
// packed into W's leading columns. Returns how many were kept. `scratch` has
// W's rows and at least W.cols columns. Collective.
template <class T>
std::int64_t orthonormalize_against(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q,
                                    dense::DenseView<T> W, dense::DenseView<T> scratch,
                                    const OrthonormalizeTolerances& tol);

// Makes W a well-conditioned basis of the part of its span orthogonal to Q,
// dropping numerically dependent directions (packed into W's leading
// columns; returns how many were kept): one projection and SVQB pass,
// repeated only while a pass was not safe to do once (single_pass_ratio: an
// ill-conditioned Gram matrix, or a column that lost nearly all its norm to
// the projection). For bases whose users form their own Gram matrices, so
// that orthonormality to working accuracy buys nothing, while a nearly
// dependent basis would still hurt: block CG's search block (it uses
// P^T A P as computed) and LOBPCG's W (its Rayleigh-Ritz uses S^T S, not the
// identity).
// Collective.
//
// `options`, for LOBPCG's search block:
//  - columns: use only these columns of W, strictly increasing (soft
//    locking: the active residuals); the others are discarded and the result
//    is packed in W's leading columns as usual. Where the fused pass runs
//    and at least half of W is chosen, the selection costs no pass of its
//    own (its Gram matrix and update read all of W's columns, and use the
//    chosen ones); otherwise the chosen columns are compacted first.
//  - q_gram, w_gram: [Q W]^T W of the result without reading W again: where
//    the fused first pass made W (W = Q M1 + W0 M2 from the raw W0, whose
//    Gram matrices [Q W0]^T W0 that pass measured), it is derived on the host
//    with Q^T Q = *q_gram (the identity when null), to the rounding of that
//    one update. Left empty where W came from the explicit passes.
//  - implicit: where the fused first pass runs, W's raw columns are left as
//    they are (the chosen ones compacted to the front) and the result is
//    returned in coefficient form, W = Q w_from_q + Z w_from_z with Z the
//    first w_from_z.rows() columns of W: the update pass is skipped, and the
//    caller folds the coefficients into what it forms from W (LOBPCG: its
//    Rayleigh-Ritz matrices and Ritz update). Both stay empty where W was
//    formed by the explicit passes.
//  - implicit_only: with implicit, return -1 with W untouched where the
//    fused pass does not run (LOBPCG with its residuals in fp32 then forms W
//    from an fp64 copy).
//  - measured_gram: [Q W]^T W ((Q.cols + W.cols) x W.cols), already
//    measured by the caller (LOBPCG queues it with A W, so that this host
//    work overlaps the product); the fused pass then reads nothing.
// For complex blocks every transpose is the conjugate one (BasisOptionsOf<std::complex<double>>).
template <class S>
struct BasisOptionsOf {
  const std::vector<std::int64_t>* columns = nullptr;  // in: W's columns to use, or null for all
  const HostMatrixOf<S>* q_gram = nullptr;             // in: Q^T Q, or null for the identity
  bool implicit = false;                               // in: coefficient form where the fused pass runs
  bool implicit_only = false;                          // in: -1 instead of the explicit passes
  const HostMatrixOf<S>* measured_gram = nullptr;      // in: [Q W]^T W, or null to measure it
  HostMatrixOf<S> w_gram;                              // out: (Q.cols + kept) x kept, or empty
  HostMatrixOf<S> w_from_q, w_from_z;                  // out: Q.cols x kept and raw x kept, or empty
};
using BasisOptions = BasisOptionsOf<double>;
template <class T>
std::int64_t condition_against(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> Q,
                               dense::DenseView<T> W, dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol,
                               BasisOptionsOf<small_t<T>>* options = nullptr);

// condition_against with no Q.
template <class T>
std::int64_t condition_basis(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> W,
                             dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol);

// orthonormalize_against with no Q.
template <class T>
std::int64_t orthonormalize(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> W,
                            dense::DenseView<T> scratch, const OrthonormalizeTolerances& tol) {
  const dense::ConstDenseView<T> none{W.space, W.rows, 0, W.ld, W.data};
  return orthonormalize_against(context, comm, none, W, scratch, tol);
}

}  // namespace blockeigs::solver
