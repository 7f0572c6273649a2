// Block conjugate gradients for A X = B with a symmetric positive definite A
// (Hermitian positive definite for complex blocks, every transpose then the
// conjugate one) and many right-hand sides (O'Leary 1980), made breakdown-free as in Ji and
// Li (2017): the search block is the rank-revealing orthonormalisation of
// Z + P beta, so dependent or converged directions shrink it instead of
// breaking it. Each column stops on ||b_j - A x_j|| <= max(rtol ||b_j||, atol)
// and then costs no more work; the true residual B - A X is computed at the
// end and reported.
//
//   solver::BlockCgOptions options;
//   options.rtol = 1e-8;
//   auto result = solver::block_cg(A, B.view(), X.view(), options);   // X: start in, solution out
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "solver/base/linear_operator.hpp"
#include "solver/precond/preconditioner.hpp"

namespace blockeigs::solver {

struct BlockCgProgress {
  int iteration = 0;
  int converged = 0;          // columns done
  int search_width = 0;       // columns of the search block this iteration
  double worst_relative = 0;  // max over active columns of ||r_j|| / ||b_j||
  int max_iterations = 0;     // BlockCgOptions::max_iterations
  double elapsed = 0;         // seconds since the solve began (MPI_Wtime on this rank)
  bool last = false;          // the solve stops after this iteration
};

// The current iterate, offered between iterations (BlockCgOptions::between_iterations).
// With X and the next search block P the solve goes on exactly where it
// stopped (block_cg's `search`): alpha needs only P and R = B - A X.
struct BlockCgIterate {
  int iteration = 0;
  int search_width = 0;  // columns of P
  // This rank's rows of the current solution X (local_rows x columns,
  // row-major; converged columns as they retired) and of the next search
  // block P (local_rows x search_width), copied to the host as doubles on
  // request (complex values as (real, imaginary) pairs: twice the doubles).
  std::function<std::vector<double>()> solution, search;
};

struct BlockCgOptions {
  double rtol = 1e-8;
  double atol = 0.0;
  int max_iterations = 10000;
  // Stop (BlockCgStop::stagnated) when no active column's relative residual
  // has fallen below 90% of the level it last fell to for this many
  // iterations, or when every active column's has fallen below eps (under the
  // floor eps ||A|| ||x|| / ||b|| where the true residual stops); 0: never.
  // The longest such stretch in a converging run measured was 1560
  // iterations (bcsstk28, Jacobi, rtol 1e-12; docs/config.md).
  int stagnation_window = 2000;
  bool keep_history = true;
  std::function<void(const BlockCgProgress&)> monitor;  // optional, every iteration, on every rank
  // Optional: called on every rank after each iteration that does not end the
  // solve, once its next search block is formed, at the same iteration on
  // every rank, so it may communicate (a checkpoint; a stop agreed on after a
  // signal). It must return the same on every rank: true ends the solve there
  // (BlockCgStop::interrupted; X holds the current iterate and the true
  // residual is computed as at any stop).
  std::function<bool(const BlockCgIterate&)> between_iterations;
};

struct BlockCgTimings {
  double spmm = 0;
  double orthogonalization = 0;  // the search block's rank-revealing orthonormalisation
  double update = 0;             // Gram matrices, small solves, X / R / P updates
  double preconditioner = 0;
  double other = 0;  // norms, column bookkeeping, the final true residual
  double total = 0;
};

// The phases as one table (as kLobpcgPhases): the result file's time_<name> attributes and Python's
// info["timings"]["phases"] walk it.
inline constexpr std::array<std::pair<std::string_view, double BlockCgTimings::*>, 6> kBlockCgPhases{{
    {"spmm", &BlockCgTimings::spmm},
    {"orthogonalization", &BlockCgTimings::orthogonalization},
    {"update", &BlockCgTimings::update},
    {"preconditioner", &BlockCgTimings::preconditioner},
    {"other", &BlockCgTimings::other},
    {"total", &BlockCgTimings::total},
}};

// How the solve went (BlockCgResult::stats, as LobpcgResult::stats): where
// the time went. Diagnostics, not part of the answer.
struct BlockCgStats {
  BlockCgTimings timings;
};

// Why block CG stopped (BlockCgResult::stop).
enum class BlockCgStop {
  converged,            // every column met its tolerance
  iteration_limit,      // max_iterations reached
  stagnated,            // no column's residual fell by 10% for stagnation_window iterations (BlockCgStall)
  no_search_direction,  // the search block lost every column (rounding) before the columns converged
  interrupted,          // BlockCgOptions::between_iterations asked to stop
};
// The stop's name as result files and the Python package give it: "converged", "iteration_limit", ...
const char* to_string(BlockCgStop stop);

// The columns a stagnated run left unconverged, and the floor fp64 allows
// each: eps ||A|| ||x_j|| / ||b_j|| (||A|| by the power method, a lower bound,
// computed only when the run stagnates).
struct BlockCgStall {
  // The recurrence residuals of every active column fell below eps, which
  // the true residuals cannot follow (the stop came before the window).
  bool below_floor = false;
  int fallen_at = 0;           // the last iteration a column's residual fell by 10%
  double norm_estimate = 0;    // ||A|| >= this
  std::vector<int> columns;    // the stuck columns
  std::vector<double> lowest;  // their lowest relative residual ||r_j|| / ||b_j|| (recurrence)
  std::vector<double> floor;   // their floor eps ||A|| ||x_j|| / ||b_j||
};

struct BlockCgResult {
  std::vector<int> iterations;              // per column: the iteration it converged at (or the last)
  std::vector<bool> converged;              // per column, by the recurrence residual
  std::vector<double> rhs_norms;            // ||b_j||
  std::vector<double> residual_norms;       // recurrence ||r_j|| when the column stopped
  std::vector<double> true_residual_norms;  // ||b_j - A x_j|| computed at the end
  int total_iterations = 0;
  BlockCgStop stop = BlockCgStop::converged;
  std::optional<BlockCgStall> stall;         // stop == stagnated
  std::vector<std::vector<double>> history;  // per iteration: ||r_j|| / ||b_j|| of every column (0 once done)
  BlockCgStats stats;

  bool all_converged() const;
};

// Solves A X = B for the local rows of X and B (same shape, in A's space).
// X holds the start on entry (zeros for none) and the solution on exit.
// `search`, if given (local rows x 1..B.cols, A's space), is the first search
// block instead of one built from the residuals: with an iterate's X and P
// (BlockCgIterate) the solve goes on from it. Collective. Throws InputError
// for mismatched shapes or bad options, and when A is found not to be
// positive definite (p^T A p <= 0 on a search direction: negative curvature).
template <class T>
BlockCgResult block_cg(LinearOperator<T>& A, dense::ConstDenseView<T> B, dense::DenseView<T> X,
                       const BlockCgOptions& options, Preconditioner<T>* preconditioner = nullptr,
                       std::optional<dense::ConstDenseView<T>> search = std::nullopt);

}  // namespace blockeigs::solver
