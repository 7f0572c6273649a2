// LOBPCG for k extreme eigenpairs of a symmetric operator (or a complex
// Hermitian one: every transpose below is then the conjugate one), after Duersch,
// Shao, Yang and Gu, "A robust and efficient implementation of LOBPCG"
// (SIAM J. Sci. Comput. 40(5), 2018):
//
//  - the search space is [X P W]: X the block_size current Ritz vectors, W
//    the preconditioned residuals of the active columns, P the previous
//    search directions;
//  - W is orthonormalised against [X P] and among itself by SVQB, dropping
//    the directions that have become numerically dependent;
//  - P is chosen from the Ritz coefficients (Hetmaniuk-Lehoucq basis
//    selection) so that [X P] is orthonormal without touching the big blocks;
//  - the Rayleigh-Ritz step is solved on rank 0 with LAPACK and broadcast;
//    when the basis' Gram matrix is ill-conditioned (Cholesky fails or its
//    reciprocal condition is below sqrt(eps)), P is dropped (a restart);
//  - soft locking: a converged column gets no new W or P (no SpMM, no
//    preconditioner work) but stays in X and in every Rayleigh-Ritz step;
//  - A X and A P are updated implicitly from the Ritz coefficients and
//    recomputed with the operator every recompute_interval iterations (by
//    default as seldom as the tolerance allows, see LobpcgTuning); A X is
//    recomputed before convergence is declared (or the iteration limit
//    reported), so the decision and the reported residuals use true ones;
//  - the Rayleigh-Ritz matrices' [X P] blocks are carried from the last
//    step's small problem (C^T G C) and the W rows of S^T S from W's
//    orthogonalisation, so that a step measures only S^T A W; both Gram
//    matrices are measured in full after A X or A P is recomputed, when W
//    needed the explicit orthogonalisation passes, and before any restart;
//  - the Ritz update that forms the next [X P] and [A X A P] also forms the
//    next residuals and their norms (ritz_update, one pass on the device),
//    the active columns' residuals first; on the device, without a
//    preconditioner, A X is not stored but held as X Lambda + R, R being
//    those residuals, which stay in the basis block anyway
//    (LobpcgTuning::imply_ax);
//  - W is not formed where its orthogonalisation took the fused pass: it is
//    kept as coefficients over the raw residual columns Z (W = [X P] F + Z G),
//    and A W, the Rayleigh-Ritz matrices and the Ritz update are taken
//    through Z and the coefficients, so no pass over the big block is spent
//    on it; its Gram matrix, A Z and S^T A Z are queued together and the host
//    conditions W while the device multiplies.
//
// A x = lambda B x (B symmetric positive definite) takes the same iteration
// in the B-inner product: X, P and W B-orthonormal (SVQB on W^T B W,
// lobpcg_b_ortho.cpp), B X and B P updated with the Ritz coefficients like
// A X and A P and recomputed with them, Rayleigh-Ritz on (S^T A S, S^T B S),
// residuals A X - B X Lambda. A constraint block Y is B-orthonormalised
// once; the start block and every W are made B-orthogonal to it. Both turn
// off the forms that assume B = I or a W free of projections (carried Gram
// matrices, W in coefficient form, implied A X, A Z ahead, Z in fp32); the
// standard problem without constraints keeps them all.
//
// Runs on the operator's backend: blocks live in A.context().space(); only
// the small projected problems are on the host. Complex blocks take the same
// iteration in the forms that are not real fp64's alone: the one-pass Ritz
// update kernel (and so the implied A X) and Z in fp32 are real fp64's; a
// complex step runs the separate products (docs/benchmarks/complex.md).
//
//   solver::LobpcgOptions options;
//   options.k = 10;
//   auto result = solver::lobpcg(A, options);   // result.eigenvalues, result.eigenvectors
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/enums.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/precond/preconditioner.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {

// The enums the config names too are defined once in core/enums.hpp;
// solver::SpectrumEnd and the others below name the same types.
using blockeigs::SpectrumEnd;

// Whether LOBPCG holds A X implied (LobpcgTuning::imply_ax).
enum class ImplyAX { automatic, always, never };

// The precision LOBPCG stores the residuals Z in, the raw columns of its
// search block W (docs/benchmarks/solvers.md#search-precision):
//  fp32 (for fp64 blocks): Z is rounded as the Ritz update writes it; A Z is
//       formed from the stored Z in fp64, so A S stays consistent with S, and
//       the rounding perturbs the search directions as a preconditioner
//       would. The implied A X = X Theta + Z then carries Z's rounding, which
//       the automatic recompute interval also counts. A step's passes over
//       the big blocks move ~12% fewer bytes;
//  fp64: Z in the blocks' own precision;
//  automatic: fp32 where the device takes the mixed step in its one-pass
//       kernels (fp64 blocks up to 20 columns, no preconditioner, an
//       operator that multiplies fp32 blocks itself) and they make the step
//       faster: on devices whose memory is slow against their SMs (below ~15
//       bytes an SM cycle: an H100, not an H200; search_single_pays); fp64
//       otherwise.
// With a preconditioner, which writes W itself, Z is always in the blocks'
// precision (fp32 is refused: search_precision_allows_preconditioner).
using blockeigs::SearchPrecision;

// How a residual r = A x - lambda x is judged converged:
//  relative (the default, as SLEPc's): ||r|| <= tol * |lambda| * ||x||, which bounds the eigenvalue's
//            relative error by tol (never met for lambda = 0);
//  backward: ||r|| <= tol * (||A||_est + |lambda|) * ||x||  (backward stable: x, lambda is an exact
//            eigenpair of a matrix within relative distance ~tol of A; met for lambda near 0, but a
//            small eigenvalue can pass with a relative error near 1). The relative test implies it.
// ||A||_est is a lower bound on ||A||_2: the larger of the power method's
// bound after 20 products with one column, taken before the first iteration
// (backward test only; norm_estimate.hpp), and the largest |Ritz value| seen
// so far, which grows as the search space explores the spectrum. The Ritz
// values alone would do without a preconditioner (W's residual directions reach
// the far end within a few iterations) but not with one, whose smooth
// directions keep them near the wanted end. Underestimating only makes the
// test stricter.
// The eigenvalue error is then at most about ||r||^2 / gap: tol 1e-6 does not
// mean 1e-6 relative accuracy of small eigenvalues under the backward test.
using blockeigs::StoppingTest;

// A wanted Ritz value that moved toward the wanted end by far more than its
// pair's residual bound allows (lobpcg_detail::jump_ratio): an eigenvalue the
// block had missed, found (or one that moved in ahead of the pair).
struct LobpcgJump {
  int iteration = 0;
  int pair = 0;
  double from = 0;   // the pair's Ritz value where its residual bound was smallest since its last jump
  double to = 0;     // at `iteration`
  double bound = 0;  // that smallest bound, ||r|| / ||x|| (||r|| / ||B x|| with B)
};

// Passed to the monitor once per iteration, on every rank.
struct LobpcgProgress {
  int iteration = 0;
  int converged = 0;           // how many of the k wanted pairs meet the test
  double eigenvalue = 0;       // of the first wanted pair not converged (of pair 0 when all are)
  double residual = 0;         // its ||A x - lambda x||
  double scaled_residual = 0;  // what the test compares with the tolerance
  int max_iterations = 0;      // LobpcgOptions::max_iterations
  double elapsed = 0;          // seconds since the solve began (MPI_Wtime on this rank)
  bool last = false;           // the run stops at this iteration
  // Reported once (relative test), at the first iteration where it is
  // certain: the wanted pairs (unconverged) whose floor eps ||A|| / |lambda|,
  // bounded from below, is above the tolerance, so that fp64 cannot meet it.
  // Empty at every other report.
  std::vector<int> below_floor;
  double floor = 0;               // the largest of those pairs' floors (a lower bound)
  double norm_estimate = 0;       // the ||A|| it used (a lower bound: the largest |Ritz value| seen)
  std::vector<LobpcgJump> jumps;  // found at this iteration, pairs in order (usually none)
};

// The current iterate, offered between iterations (LobpcgOptions::between_iterations).
struct LobpcgIterate {
  int iteration = 0;
  int block_size = 0;
  std::span<const double> values;  // the block's block_size Ritz values, in the chosen order (the k wanted first)
  // This rank's rows of the block X (local_rows x block_size, row-major), the
  // Ritz vectors in `values`' order, copied to the host as doubles on request
  // (complex values as (real, imaginary) pairs: twice the doubles).
  std::function<std::vector<double>()> block;
};

// How the iteration is carried out, not what it computes: every automatic
// value (0, automatic) suits any run, and the config names none of these.
// For studying or testing the iteration's forms.
struct LobpcgTuning {
  // Explicit A X, A P every this many iterations. The implicit updates drift
  // by ~eps ||A|| per iteration; 0 (the default) refreshes when the drift
  // could reach 1% of the smallest residual the test demands of a wanted
  // pair, no more often than every 20 and no less often than every 100
  // iterations (lobpcg_detail::automatic_recompute_interval). A refresh
  // costs about one iteration.
  int recompute_interval = 0;
  // [X P] padded with zero columns at the end of P to a multiple of this many
  // columns, so that the blocks the Ritz update writes ([X P], A [X P] and
  // the residuals after them) start and end on whole 32-byte sectors however
  // many pairs have locked; the small problems skip the padding. A W is
  // applied over the same multiple of columns where the block has room (the
  // extra products are discarded). 0: 4 for fp64 on the device, none (1)
  // otherwise.
  int column_alignment = 0;
  // Without a preconditioner, A X can be held as X Lambda plus the last
  // residuals (which stay in the basis block as W's raw columns) instead of
  // a block of its own: a step's Ritz update then reads and writes
  // 2 block_size fewer columns (on the device 220 become 180 at block 20).
  // automatic: where the update takes that form in one pass (fp64 blocks up
  // to 20 on the device; on the host the separate products cost more than
  // the columns save); always: wherever there is no preconditioner; never.
  ImplyAX imply_ax = ImplyAX::automatic;
};

// What the caller asks for (the config's eigensolver keys among them), then
// the tuning.
struct LobpcgOptions {
  int k = 8;           // eigenpairs wanted
  int block_size = 0;  // 0: default_block_size(k, rows); else k <= block_size <= rows
  SpectrumEnd which = SpectrumEnd::smallest;
  double tolerance = 1e-6;
  StoppingTest test = StoppingTest::relative;
  int max_iterations = 1000;
  // Stop (LobpcgStop::stagnated) when, for this many iterations (and half
  // the iterations before), neither has the residuals' geometric mean fallen
  // below 90% of its lowest nor has a wanted Ritz value moved toward the
  // wanted end by more than rounding; 0: never. The slowest steady run seen,
  // bcsstk21 unpreconditioned to 1e-4 in 18054 iterations, went 1508
  // without such a fall of the residuals.
  int stagnation_window = 2000;
  std::uint64_t seed = 1;                                         // random start columns (the same for any rank count)
  SearchPrecision search_precision = SearchPrecision::automatic;  // the residual block's precision (above)
  bool keep_history = true;
  std::function<void(const LobpcgProgress&)> monitor;  // optional, every iteration
  // Optional: called on every rank after each iteration's test that does not
  // end the run, at the same iteration on every rank, so it may communicate
  // (a checkpoint; a stop agreed on after a signal). It must return the same
  // on every rank: true ends the run there (LobpcgStop::interrupted), with the
  // current pairs tested on true residuals like any other stop.
  std::function<bool(const LobpcgIterate&)> between_iterations;
  LobpcgTuning tuning;
};

// Seconds on this rank's clock; device work is synchronised at each phase
// boundary so that it is charged to the phase that queued it.
struct LobpcgTimings {
  double spmm = 0;                // operator applies
  double orthogonalization = 0;   // start block and W: projections, Gram matrices, SVQB
  double rayleigh_ritz = 0;       // Gram matrices, small eigenproblem, X/P/AX/AP updates
  double small_eigenproblem = 0;  // of rayleigh_ritz: rank 0's host work (LAPACK, basis selection), device idle
  double preconditioner = 0;
  double filter = 0;   // Chebyshev-filtered subspace iteration (chfsi.hpp): the filter's products and passes
  double density = 0;  // a window (window.hpp): the spectrum's bounds and the density of states
  double other = 0;    // residuals, norms, selection, bookkeeping
  double total = 0;
};

// The phases as one table: the result file's time_<name> attributes and Python's info["timings"]["phases"]
// walk it, so that a new phase is a member and a row here.
inline constexpr std::array<std::pair<std::string_view, double LobpcgTimings::*>, 9> kLobpcgPhases{{
    {"spmm", &LobpcgTimings::spmm},
    {"orthogonalization", &LobpcgTimings::orthogonalization},
    {"rayleigh_ritz", &LobpcgTimings::rayleigh_ritz},
    {"small_eigenproblem", &LobpcgTimings::small_eigenproblem},
    {"preconditioner", &LobpcgTimings::preconditioner},
    {"filter", &LobpcgTimings::filter},
    {"density", &LobpcgTimings::density},
    {"other", &LobpcgTimings::other},
    {"total", &LobpcgTimings::total},
}};

struct LobpcgStep {
  std::vector<double> eigenvalues;     // the k wanted Ritz values
  std::vector<double> residual_norms;  // their ||A x - lambda x||
};

// Why LOBPCG stopped (LobpcgResult::stop).
enum class LobpcgStop {
  converged,            // every wanted pair passed the test
  iteration_limit,      // max_iterations reached
  diverged,             // the residuals grew by orders of magnitude from their minimum (LobpcgStall)
  stagnated,            // neither the residuals nor the wanted Ritz values progressed (LobpcgStall,
                        // LobpcgOptions::stagnation_window)
  below_floor,          // diverged or stagnated, where every unconverged wanted pair's floor under the
                        // relative test is above the tolerance (LobpcgResult::floor, LobpcgStall)
  no_search_direction,  // [X P] spans the space and the tolerance is below its rounding floor
  interrupted,          // LobpcgOptions::between_iterations asked to stop
};
// The stop's name as result files and the Python package give it: "converged", "below_floor", ...
const char* to_string(LobpcgStop stop);

// Why the guard stopped a run before it converged, in terms of the geometric
// mean of the wanted pairs' residuals ||A x - lambda x|| (unit x): diverged,
// it stayed over 1000 times its smallest (since the last jump past that
// iterate's bounds) for 50 iterations; stagnated, neither has its smallest
// fallen by 10% nor a wanted Ritz value moved toward the wanted end beyond
// rounding for stagnation_window iterations.
struct LobpcgStall {
  bool diverged = false;  // else stagnated
  int pair = 0;           // the pair with the largest residual at the stop
  double smallest = 0;
  int smallest_iteration = 0;
  double last = 0;    // at the stop
  int fallen_at = 0;  // the last progress: the mean fell by 10%, or a wanted Ritz value moved
};

// How the run went: what the iteration's forms did (LobpcgTuning) and
// where the time went. Diagnostics, not part of the answer.
struct LobpcgStats {
  int restarts = 0;                  // Rayleigh-Ritz steps that dropped P
  int carried_steps = 0;             // Rayleigh-Ritz steps that measured only S^T A W
  int implicit_search_steps = 0;     // steps whose W was never formed (kept as raw columns + coefficients)
  int recomputes = 0;                // explicit A X, A P refreshes (LobpcgTuning::recompute_interval)
  int drift_recomputes = 0;          // of recomputes: brought forward by the fp32 Z's drift
  int implied_ax_steps = 0;          // Ritz updates that took A X from X and the residuals
  int ax_recomputes = 0;             // implied A X made explicit by the operator for another reader
  int z_products_ahead = 0;          // A Z multiplied before the convergence test, and used
  bool search_in_fp32 = false;       // Z held in fp32, or the filter mixed (LobpcgOptions::search_precision)
  std::int64_t filter_products = 0;  // Chebyshev-filtered subspace iteration (chfsi.hpp): the filter's column products
  std::int64_t single_filter_products = 0;  // of filter_products: those in fp32 (the mixed filter)
  LobpcgTimings timings;
};

template <class T>
struct LobpcgResult {
  // k pairs: ascending for smallest, descending for largest.
  std::vector<double> eigenvalues;
  // local_rows x k in the operator's space: unit columns, or B-orthonormal ones for A x = lambda B x.
  dense::DenseBlock<T> eigenvectors;
  std::vector<double> residual_norms;      // ||A x - lambda B x|| (B = I without one) from explicit products
  std::vector<double> relative_residuals;  // ||r|| / (|lambda| ||B x||)
  std::vector<double> b_norms;             // ||B x|| per pair (1 without B: unit x)
  bool generalized = false;                // B was given
  int constraints = 0;                     // columns of the constraint block Y (0: none)
  std::vector<bool> converged;             // the chosen test, per pair
  std::vector<bool> passes_relative;       // ||r|| <= tolerance |lambda|, per pair, whichever test was chosen
  std::vector<bool> passes_backward;       // ||r|| <= tolerance (norm_estimate + |lambda|)
  LobpcgStop stop = LobpcgStop::converged;
  std::optional<LobpcgStall> stall;  // stop == diverged, stagnated or below_floor
  // stop == below_floor: the unconverged wanted pairs (all of them) and the
  // largest of their floors eps ||A||_est / |lambda| (a lower bound).
  std::vector<int> below_floor;
  double floor = 0;
  std::vector<LobpcgJump> jumps;  // every jump of the run, in order
  // The pairs are an earlier iterate's, whose residuals were smaller (by
  // their geometric mean) than the last one's, where the last did not
  // converge, and whose Ritz values are no worse than the last one's beyond
  // their residual bounds.
  bool restored = false;
  int iterations = 0;
  int block_size = 0;
  double norm_estimate = 0;         // ||A||_est used by the backward test
  std::vector<LobpcgStep> history;  // one entry per iteration (keep_history)
  LobpcgStats stats;

  bool all_converged() const;
};

// k plus guard vectors: max(2, ceil(k / 4)) of them (a quarter of k widens the
// gap that sets the k-th pair's convergence rate, lambda_k against
// lambda_{block+1}, for about 1.6x the dense work of a guard-free block; at
// least 2 so small k gets a buffer too), capped at the matrix's rows.
int default_block_size(int k, std::int64_t global_rows);

// lobpcg's refusal of a B that is not positive definite (an input error,
// thrown on every rank alike).
class BNotPositiveDefinite : public AgreedError {
 public:
  explicit BNotPositiveDefinite(const std::string& message) : AgreedError(message, true) {}
};

// Collective over A.comm(). `start`, if given, is a user start block in A's
// space with local_rows rows and 1..block_size columns (rank deficiency is
// repaired; missing columns are random). Throws InputError for bad options.
//
// `B`, if given, makes the problem A x = lambda B x: B symmetric (Hermitian)
// positive definite, distributed like A and on the same Context object (its products
// queue on A's stream). The eigenvectors are then B-orthonormal and the
// residuals are A x - lambda B x, judged against |lambda| ||B x||; the
// backward test takes ||A||_est / ||B||_est (power method) for ||A||, which
// with ||B x|| <= ||B|| ||x|| stands for (||A|| + |lambda| ||B||) ||x||.
// `constraints`, if given, is a block Y (local_rows x m, m >= 1, in A's
// space, full column rank): the eigenvectors are kept B-orthogonal to its
// columns (the constant vector of a graph Laplacian; pairs already found).
//
// A B that is not positive definite shows itself as a block column x with
// x^T B x < 0 beyond rounding: lobpcg then throws BNotPositiveDefinite on
// every rank.
template <class T>
LobpcgResult<T> lobpcg(LinearOperator<T>& A, const LobpcgOptions& options, Preconditioner<T>* preconditioner = nullptr,
                       std::optional<dense::ConstDenseView<T>> start = std::nullopt, LinearOperator<T>* B = nullptr,
                       std::optional<dense::ConstDenseView<T>> constraints = std::nullopt);

}  // namespace blockeigs::solver
