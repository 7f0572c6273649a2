// LOBPCG's internal pieces, shared by its files (lobpcg*.cpp) and their
// tests. Not part of the library's API.
#pragma once

#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "solver/blocks/apply_single.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/blocks/symmetric_eigen.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/linear_operator.hpp"

// The (T, Ts) pairs of blocks and residual block LOBPCG is instantiated for (Ts fp32 beside fp64 blocks:
// LobpcgOptions::search_precision); each file expands its own instantiations over them.
// clang-format off
#define BLOCKEIGS_LOBPCG_TYPES(X)                \
  X(float, float)                                \
  X(double, double)                              \
  X(double, float)                               \
  X(std::complex<float>, std::complex<float>)    \
  X(std::complex<double>, std::complex<double>)
// clang-format on

namespace blockeigs::solver::lobpcg_detail {

using Tolerances = OrthonormalizeTolerances;

// Rounds of random refill when the start block is rank deficient: random
// columns are independent with probability 1, so one round normally does;
// the rest only guards against pathological inputs before giving up.
inline constexpr int max_refills = 5;

// Power-method products for the backward test's ||A||_est (norm_estimate.hpp):
// 20 reach 84-100% of ||A||_2 on the SuiteSparse matrices tried, for the cost
// of 20 products with one column.
inline constexpr int norm_estimate_steps = 20;

// ---- small dense problems (host; pure functions) ---------------------------

// The small matrices are real (S = double) or Hermitian (S = complex double;
// every transpose below is then the conjugate one).
template <class S>
struct RitzPairsOf {
  int level = 0;               // 0: whole basis; 1: P dropped (Cholesky); 2: P dropped, truncated basis
  std::vector<double> values;  // every Ritz value of the basis used, ascending
  // ns x needed, GB-orthonormal; rows of unused columns zero. Column c is the
  // vector of the c-th wanted value: values[c] (smallest end) or
  // values[values.size() - 1 - c] (largest end).
  HostMatrixOf<S> vectors;
};
using RitzPairs = RitzPairsOf<double>;

// The symmetric (Hermitian) part (M + M^H) / 2: Gram products of distinct
// blocks are symmetric only up to rounding.
template <class S>
HostMatrixOf<S> symmetrized(const HostMatrixOf<S>& M);

// True when no entry of GB - I exceeds tol.identity_gram / ns (and none is
// NaN): Rayleigh-Ritz then solves to first order in GB - I instead of
// factorising.
template <class S>
bool is_identity_gram(const HostMatrixOf<S>& GB, const Tolerances& tol);

// Generalised Rayleigh-Ritz on GA c = theta GB c over basis columns [0, ns),
// where columns [p_begin, p_end) are P, for the `needed` pairs at `end`.
// Level 0 uses all columns (to first order in GB - I where
// is_identity_gram, as on nearly all of LOBPCG's carried steps, else through
// the Cholesky factor of GB, with an rcond check); level 1 drops P;
// level 2 drops P and solves by SVQB of GB (rank revealing). Throws Error if
// even level 2 leaves fewer than `needed`. `eigen` (null: small_eigen)
// solves the standard eigenproblems the levels reduce to.
template <class S>
RitzPairsOf<S> rayleigh_ritz(const HostMatrixOf<S>& GA, const HostMatrixOf<S>& GB, std::int64_t p_begin,
                             std::int64_t p_end, std::int64_t needed, const Tolerances& tol,
                             SpectrumEnd end = SpectrumEnd::smallest,
                             std::type_identity_t<const EigenSolverOf<S>*> eigen = nullptr);

// The eigensolver for rank 0's Rayleigh-Ritz problems of up to `rows` rows:
// on a device context where they can reach device_eigen_min_rows (blocks of
// 67 and more), symmetric_eigen below that size and the device's
// (device_symmetric_eigen.hpp, faster there) from it; otherwise none, so
// symmetric_eigen throughout (and always without CUDA). Hermitian problems:
// cuSOLVER's or LAPACK's (projected_eigen_solver), never none.
template <class S = double>
EigenSolverOf<S> ritz_eigen_solver(const dense::Context& context, std::int64_t rows);

// Hetmaniuk-Lehoucq basis selection: coefficients Cp (ns x np) of the new P
// from the chosen Ritz coefficients Cx (ns x nb, GB-orthonormal), the first
// x_rows rows of which belong to X. P spans the non-X parts of the active
// columns of Cx, made GB-orthogonal to Cx and GB-orthonormal: so P is
// orthonormal and orthogonal to the new X, with no big-block work.
template <class S>
HostMatrixOf<S> basis_selection(const HostMatrixOf<S>& Cx, const HostMatrixOf<S>& GB, std::int64_t x_rows,
                                const std::vector<std::int64_t>& active, const Tolerances& tol);

// The ns x ns Rayleigh-Ritz matrix of S = [Q W] (q + nw columns) from
// Q's block (q x q, carried from the last step) and the measured or derived
// [Q W]^T Y (ns x nw) for Y = A W or W, made exactly symmetric.
template <class S>
HostMatrixOf<S> assemble_ritz_matrix(const HostMatrixOf<S>& q_block, const HostMatrixOf<S>& w_columns);

// A search block W in coefficient form over the raw columns Z that follow Q
// in the basis: W = Q from_q + Z from_z (BasisOptions::implicit). With T the
// (q + raw) x (q + kept) matrix [I from_q; 0 from_z] that takes [Q W]
// coefficients to [Q Z] ones:
//  - in_search_basis: T^T G T, a Rayleigh-Ritz matrix of [Q Z] (symmetric)
//    in the [Q W] basis; only W's rows and columns are computed;
//  - to_raw_coefficients: T C, Ritz coefficients for [Q W] taken to [Q Z].
template <class S>
HostMatrixOf<S> in_search_basis(const HostMatrixOf<S>& G, const HostMatrixOf<S>& from_q, const HostMatrixOf<S>& from_z);
template <class S>
HostMatrixOf<S> to_raw_coefficients(const HostMatrixOf<S>& C, const HostMatrixOf<S>& from_q,
                                    const HostMatrixOf<S>& from_z);

// ---- P's zero padding (LobpcgTuning::column_alignment) --------------------
// G without its rows and columns [first, first + count).
template <class S>
HostMatrixOf<S> without_span(const HostMatrixOf<S>& G, std::int64_t first, std::int64_t count);
// C with `count` zero rows inserted before its row `first` and zero columns
// appended up to `cols` columns.
template <class S>
HostMatrixOf<S> with_zero_rows(const HostMatrixOf<S>& C, std::int64_t first, std::int64_t count, std::int64_t cols);
// n rounded up to a multiple of `multiple` (>= 1).
inline std::int64_t round_up(std::int64_t n, std::int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// ---- the options (lobpcg_options.cpp) ----------------------------------------

// Checks the options and the start block, and returns the block size. The
// start block's shape is per rank, so the check is collective: every rank
// throws or none does.
template <class T>
int validate_options(const LinearOperator<T>& A, const LobpcgOptions& o,
                     const std::optional<dense::ConstDenseView<T>>& start, bool has_preconditioner);

// Checks B (same rows, distribution and backend as A) and the constraint
// block's shape (local_rows x m, 1 <= m, m + nb <= rows), and refuses fp32
// residuals with either. Collective (every rank throws or none does).
template <class T>
void validate_pencil(const LinearOperator<T>& A, const LinearOperator<T>* B,
                     const std::optional<dense::ConstDenseView<T>>& constraints, int nb, SearchPrecision precision);

// [X P] spans a multiple of this many columns (LobpcgTuning::column_alignment):
// the option, or 4 for fp64 on the device, else 1.
template <class T>
std::int64_t column_alignment(const LobpcgOptions& options, Space space);

// Whether the residuals Z are held in fp32 (LobpcgOptions::search_precision),
// at block size nb. The same on every rank: the options, the backend and the
// operator are.
template <class T>
bool search_in_fp32(const LinearOperator<T>& A, const LobpcgOptions& options, bool preconditioned, int nb);

// Whether a residual norm r passes the stopping test for Ritz value lambda of
// a vector of norm x_norm; *scaled is r over the test's scale (the relative
// or backward residual).
bool passes(StoppingTest test, double tol, double r, double lambda, double x_norm, double norm_a, double* scaled);

// The result's k wanted pairs from the last iterate X (its first k columns,
// of norms x_norm, residual norms r_norm): eigenvalues, unit eigenvectors (a
// copy of X scaled), residual norms for unit vectors, relative residuals and
// the stopping test's verdicts `conv`.
// With `b_normalized` (A x = lambda B x) X's columns are B-orthonormal and
// kept as they are, and x_norm holds ||B x||, the relative test's scale.
template <class T>
void take_wanted_pairs(const dense::Context& context, dense::ConstDenseView<T> X, const std::vector<double>& lambda,
                       const std::vector<double>& x_norm, const std::vector<double>& r_norm,
                       const std::vector<bool>& conv, bool b_normalized, LobpcgResult<T>& result);

// The result's passes_relative and passes_backward from its residual norms
// (unit vectors), eigenvalues and norm_estimate.
template <class T>
void mark_tests(double tolerance, LobpcgResult<T>& result);

// ---- when to recompute A X and A P ------------------------------------------

// Implicit steps between explicit recomputes of A X and A P: the implicit
// updates drift by about drift_per_step = 10 eps ||A|| per step (one short
// dot product's rounding per entry, the coefficients being near-orthogonal),
// so refresh before t * drift_per_step reaches 1% of the smallest residual
// tol * scale_j the test demands of a wanted pair j, with t in [20, 100]: no
// more often than the fixed interval of 20 used before, and at least every
// 100 steps, where a refresh's cost (about one iteration) is already 1% of
// the run. With B the blocks are B-orthonormal, and the updated A S and B S
// are of size |theta| ||B s||: the drift scales with ||B x|| (x_norm) as the
// demanded residual does, so both are taken in those units.
inline constexpr int min_recompute_interval = 20, max_recompute_interval = 100;
int automatic_recompute_interval(double eps, double norm_a, double tolerance, StoppingTest test,
                                 const std::vector<double>& lambda, const std::vector<double>& x_norm, int k);

// With Z in fp32 the implied A X = X Theta + Z carries Z's rounding, u32
// times each step's residuals, and A P inherits it through the implicit
// updates until the next recompute. Recompute once u32 times the sum over
// the steps since the last one of each step's largest residual norm
// (residual_sum) reaches this fraction of the smallest active residual: in
// a model of the drift this matched fp64's iteration counts
// (docs/benchmarks/solvers.md#search-precision).
inline constexpr double search_drift_fraction = 0.05;
bool search_drift_due(double unit_roundoff, double residual_sum, const std::vector<double>& r_norm,
                      const std::vector<bool>& converged);

// ---- rank 0 computes, everybody receives ----------------------------------

void broadcast(MPI_Comm comm, std::vector<double>& v);
void broadcast(MPI_Comm comm, int& value);

// ---- distributed orthonormalisation ---------------------------------------

// LOBPCG's search block W (the active residuals, at the front of Z's block,
// in Ts) conditioned against [X P] by condition_against with `options`
// (coefficient form where the fused pass runs); where no direction is left,
// W is refilled at random (hash columns from refill_column on) and
// conditioned again. With Ts fp32 beside fp64 blocks, a W that has to be
// formed is formed in `Wt` (fp64, W's shape, else unused) from Z widened and
// rounded back into Z, and its derived Gram matrix, made for the unrounded
// W, is dropped. Collective.
struct ConditionedSearch {
  std::int64_t kept = 0;  // W's columns
  bool refilled = false;  // W was refilled at random
};
template <class T>
struct BBasis;
// `Y`: the constraints (no columns: none), which a random refill is projected against.
template <class T, class Ts>
ConditionedSearch condition_search_block(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> XP,
                                         dense::DenseView<Ts> W, dense::DenseView<T> Wt, dense::DenseView<T> scratch,
                                         const Tolerances& tol, BasisOptionsOf<small_t<T>>& options, std::uint64_t seed,
                                         std::int64_t first_row, std::int64_t refill_column, const BBasis<T>& Y);

// ---- the B-inner product (A x = lambda B x) and constraints -----------------

// A block V beside B V (B V = V where there is no B).
template <class T>
struct BBasis {
  dense::ConstDenseView<T> V, BV;
};

// The diagonal of a B-Gram matrix G from (offset, 0) on, `count` entries:
// x^T B x of a block's columns. An entry below -sqrt(eps) times the largest
// |x^T B x| there, far past the rounding of a positive definite B, throws
// BNotPositiveDefinite. G is the reduced Gram matrix every rank holds alike
// (the fused pass branches on it the same way), so every rank throws.
template <class S>
void require_positive_b_norms(const HostMatrixOf<S>& G, std::int64_t offset, std::int64_t count, double eps);

// W -= Y (BY^T W): W made B-orthogonal to a B-orthonormal Y. Collective.
template <class T>
void project_out(const dense::Context& context, MPI_Comm comm, const BBasis<T>& Y, dense::DenseView<T> W);

// W made B-orthonormal and B-orthogonal to Y and Q (both B-orthonormal, Y
// possibly empty), dropping numerically dependent directions (SVQB in the
// B-inner product, as orthonormalize_against); the kept ones are packed into
// W's leading columns and BW's receive B times them. `until_orthonormal`:
// repeat until B-orthonormal to working accuracy (the start block and the
// constraints); else stop after the first pass that was safe to do once (a
// search block, whose Rayleigh-Ritz step measures S^T B S), with B W
// updated with W rather than multiplied again. Returns how many were kept.
// `scratch` has W's rows and at least W.cols columns. Collective.
template <class T>
std::int64_t b_orthonormalize_against(const dense::Context& context, MPI_Comm comm, LinearOperator<T>& B,
                                      const BBasis<T>& Y, const BBasis<T>& Q, dense::DenseView<T> W,
                                      dense::DenseView<T> BW, dense::DenseView<T> scratch, const Tolerances& tol,
                                      bool until_orthonormal);

// The constraint block Y made B-orthonormal (orthonormal without B) in
// place, BY = B Y. Returns how many independent columns it has (fewer than
// Y.cols: rank deficient, Y and BY then undefined). Collective.
template <class T>
std::int64_t b_orthonormalize_constraints(const dense::Context& context, MPI_Comm comm, LinearOperator<T>* B,
                                          dense::DenseView<T> Y, dense::DenseView<T> BY, dense::DenseView<T> scratch,
                                          const Tolerances& tol);

// Fills X (local x nb) with an orthonormal start block: the user's columns
// first (if any), random ones for the rest and for any directions dropped as
// dependent. With B (then BX receives B X) the block is B-orthonormal; with
// a constraint block Y (Y.V.cols > 0: B-orthonormal, or orthonormal without
// B) it is B-orthogonal to Y. Collective.
template <class T>
void make_start_block(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> X, dense::DenseView<T> scratch,
                      const dense::ConstDenseView<T>* user, std::uint64_t seed, std::int64_t first_row,
                      const Tolerances& tol, const BBasis<T>& Y, LinearOperator<T>* B, dense::DenseView<T> BX);

}  // namespace blockeigs::solver::lobpcg_detail
