#include "apps/run/eigs_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "apps/run/preconditioner_setup.hpp"
#include "apps/run/steps/scientific.hpp"

namespace blockeigs::apps {

namespace {

// Which stopping tests pair j meets, whichever was chosen (relative implies backward).
template <class T>
const char* tests_passed(const solver::LobpcgResult<T>& r, int j) {
  return r.passes_relative[j] ? "relative, backward" : r.passes_backward[j] ? "backward" : "none";
}

// "0, 1, 2".
std::string pair_list(const std::vector<int>& pairs) {
  std::string list;
  for (int j : pairs) list += (list.empty() ? "" : ", ") + std::to_string(j);
  return list;
}

}  // namespace

// A jump of a wanted Ritz value in words: "pair 0 fell from 7.487e-01 (residual bound 4.9e-03) to 6.127e-01".
std::string describe_jump(const solver::LobpcgJump& j) {
  return "pair " + std::to_string(j.pair) + (j.to < j.from ? " fell" : " rose") + " from " + scientific(j.from, 6) +
         " (residual bound " + scientific(j.bound) + ") to " + scientific(j.to, 6);
}

// How the solve ended, in a line: converged, or why not.
template <class T>
std::string stop_summary(const solver::LobpcgResult<T>& r) {
  const std::string residuals = r.generalized ? "||A x - lambda B x||" : "||A x - lambda x||";
  switch (r.stop) {
    case solver::LobpcgStop::converged: return "all converged";
    case solver::LobpcgStop::iteration_limit: return "NOT all converged within max_iterations";
    case solver::LobpcgStop::no_search_direction:
      return "NOT all converged: stopped, no search direction is left outside the current basis (the tolerance "
             "is below what rounding allows for this matrix)";
    case solver::LobpcgStop::stagnated: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, stagnating: since iteration " + std::to_string(d.fallen_at) +
             " neither have the residuals " + residuals +
             " (their geometric mean) fallen by 10% nor has a wanted "
             "eigenvalue moved toward the wanted end beyond rounding (lowest mean " +
             scientific(d.smallest) + " at iteration " + std::to_string(d.smallest_iteration) + ", now " +
             scientific(d.last) +
             "); the best iterate is returned. A preconditioner, a looser tolerance or "
             "eigensolver.convergence_test: backward may help (eigensolver.stagnation_window sets the window)";
    }
    case solver::LobpcgStop::below_floor: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, cannot reach the tolerance: the floor is " + scientific(r.floor) +
             " (eps ||A|| / |lambda|, ||A|| >= " + scientific(r.norm_estimate) + ", for pair" +
             (r.below_floor.size() > 1 ? "s " : " ") + pair_list(r.below_floor) + "): the residuals " + residuals +
             " (their geometric mean) reached " + scientific(d.smallest) + " at iteration " +
             std::to_string(d.smallest_iteration) + " and then " +
             (d.diverged ? "grew to " + scientific(d.last) : "stopped falling (" + scientific(d.last) + ")") +
             "; the best iterate is returned. Use a tolerance above the floor, or eigensolver.convergence_test: "
             "backward";
    }
    case solver::LobpcgStop::interrupted: return "NOT all converged: interrupted by a signal";
    case solver::LobpcgStop::diverged: {
      const solver::LobpcgStall& d = *r.stall;
      return "NOT all converged: stopped, diverging: the residuals " + residuals +
             " (their geometric mean) grew from " + scientific(d.smallest) + " (iteration " +
             std::to_string(d.smallest_iteration) + ") to " + scientific(d.last) + " (pair " + std::to_string(d.pair) +
             ", the largest); the best iterate is returned. A looser tolerance, another preconditioner or "
             "eigensolver.convergence_test: backward may help";
    }
  }
  return "";
}

namespace {

// Where a solve did not converge: how its relative residuals compare with
// the floor fp64 allows, eps ||A|| / |lambda| (||A|| estimated from below:
// the power method's bound or the largest Ritz value seen).
template <class T>
void print_floor(const solver::LobpcgResult<T>& r, const solver::LobpcgOptions& o, bool preconditioned) {
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  double floor = 0, reached = INFINITY;
  std::string below;  // pairs whose floor is above the tolerance
  for (int j = 0; j < o.k; ++j) {
    if (r.converged[j]) continue;
    const double f = eps * r.norm_estimate / std::abs(r.eigenvalues[j]);
    floor = std::max(floor, f);
    reached = std::min(reached, r.relative_residuals[j]);
    if (o.test == solver::StoppingTest::relative && f > o.tolerance)
      below += (below.empty() ? "" : ", ") + std::to_string(j);
  }
  if (floor == 0) return;
  if (!below.empty())
    std::printf(
        "note: the tolerance %g is below the relative residual fp64 allows for pair%s %s (about %s: eps ||A|| "
        "/ |lambda| with ||A|| >= %s); a looser tolerance or eigensolver.convergence_test: backward\n",
        o.tolerance, below.find(',') == std::string::npos ? "" : "s", below.c_str(), scientific(floor).c_str(),
        scientific(r.norm_estimate).c_str());
  else
    std::printf(
        "note: the unconverged pairs' relative residuals (from %s) are above fp64's floor (eps ||A|| / "
        "|lambda|, about %s here, ||A|| estimated at %s): the iteration, not rounding, holds them; %s\n",
        scientific(reached).c_str(), scientific(floor).c_str(), scientific(r.norm_estimate).c_str(),
        preconditioned || o.which == solver::SpectrumEnd::largest
            ? "more iterations (eigensolver.max_iterations) may get there"
            : "more iterations (eigensolver.max_iterations) or, at the smallest end, preconditioner chebyshev (or "
              "auto) may get there");
}

}  // namespace

// The solver's one report, early in the run, that the tolerance is below
// what fp64 allows some wanted pairs under the relative test.
void print_floor_warning(const solver::LobpcgProgress& p, double tolerance) {
  const std::string pairs = pair_list(p.below_floor);
  std::printf(
      "warning: at iteration %d, the tolerance %g is at or below the rounding floor of pair%s %s, about %s (eps "
      "||A|| / |lambda| with ||A|| >= %s): the run may not reach it; a tolerance above %s, "
      "eigensolver.convergence_test: backward or, at the smallest end, a preconditioner may help\n",
      p.iteration, tolerance, p.below_floor.size() > 1 ? "s" : "", pairs.c_str(), scientific(p.floor).c_str(),
      scientific(p.norm_estimate).c_str(), scientific(p.floor).c_str());
  std::fflush(stdout);
}

namespace {

// The run's jumps of wanted Ritz values under the table: the first few in full.
void print_jumps(const std::vector<solver::LobpcgJump>& jumps, int first_iteration) {
  if (jumps.empty()) return;
  constexpr std::size_t shown = 4;
  std::string text;
  for (std::size_t i = 0; i < std::min(shown, jumps.size()); ++i)
    text += (i ? "; " : "") + std::string("iteration ") + std::to_string(first_iteration + jumps[i].iteration) + ", " +
            describe_jump(jumps[i]);
  if (jumps.size() > shown) text += "; ... (" + std::to_string(jumps.size()) + " in all)";
  std::printf(
      "note: %zu jump%s of a wanted eigenvalue beyond its residual bound (an eigenvalue the block had missed, "
      "found): %s\n",
      jumps.size(), jumps.size() > 1 ? "s" : "", text.c_str());
}

std::string fixed3(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

// "resumed after iteration 57, " where a run went on from a checkpoint.
std::string resumed_from(int first_iteration) {
  return first_iteration > 0 ? "resumed after iteration " + std::to_string(first_iteration) + ", " : "";
}

// The backward test bounds ||r|| by tol (||A|| + |lambda|), not by
// |lambda|: a small eigenvalue can pass with a relative residual near or
// above 1, which bounds nothing about it, and such a pair may stand in
// for a smaller eigenvalue that was missed (s1rmq4m1 with Jacobi at 1e-6
// skips its smallest, 0.38, and passes pairs from 0.75 at relative
// residuals up to 0.78). Say so where a pair's is above 0.1.
template <class T>
void print_loose_pairs(const solver::LobpcgResult<T>& result, const solver::LobpcgOptions& options) {
  if (options.test != solver::StoppingTest::backward) return;
  int loose = 0;
  for (int j = 0; j < options.k; ++j) loose += result.relative_residuals[j] > 0.1 ? 1 : 0;
  if (loose > 0)
    std::printf(
        "note: %d of the %d pairs passed the backward test (||r|| <= tolerance x (||A|| est. %s + "
        "|lambda|)) with relative residuals above 0.1, which do not bound their eigenvalues' relative "
        "error; an eigenvalue further toward the wanted end may have been missed. "
        "eigensolver.convergence_test: relative bounds it\n",
        loose, options.k, scientific(result.norm_estimate).c_str());
}

// The pairs' table; past table_rows pairs its first and last rows, the counts and the worst pair (the file
// holds every pair).
template <class T>
void print_pairs(const solver::LobpcgResult<T>& result, int k) {
  constexpr int table_rows = 40, shown = 10;
  if (k == 0) return;  // an empty window
  std::printf("\n  pair          eigenvalue      residual  rel. residual  converged  tests passed\n");
  for (int j = 0; j < k; ++j) {
    if (k > table_rows && j == shown) {
      std::printf("  %4s  (%d more pairs: the result file holds every pair)\n", "...", k - 2 * shown);
      j = k - shown;
    }
    std::printf("  %4d  %18.12e  %s      %s  %-9s  %s\n", j, result.eigenvalues[j],
                scientific(result.residual_norms[j]).c_str(), scientific(result.relative_residuals[j]).c_str(),
                result.converged[j] ? "yes" : "NO", tests_passed(result, j));
  }
  if (k <= table_rows) return;
  const auto worst = std::max_element(result.relative_residuals.begin(), result.relative_residuals.end());
  const auto converged = std::count(result.converged.begin(), result.converged.end(), true);
  const auto [low, high] = std::minmax_element(result.eigenvalues.begin(), result.eigenvalues.end());
  std::printf("  %lld of %d converged; eigenvalues %s ... %s; largest relative residual %s (pair %lld)\n",
              static_cast<long long>(converged), k, scientific(*low, 10).c_str(), scientific(*high, 10).c_str(),
              scientific(*worst).c_str(), static_cast<long long>(worst - result.relative_residuals.begin()));
}

}  // namespace

// Rank 0's report after the solve: the pairs' table, the iterations and why
// the solve stopped, the notes, the time and the memory line.
template <class T>
void print_report(const solver::LobpcgResult<T>& result, const solver::LobpcgOptions& options, bool preconditioned,
                  int first, const SolveCosts& costs, const CheckpointGuard& guard, const std::string& memory) {
  print_pairs(result, options.k);
  if (result.stats.filter_products > 0)
    std::printf("\niterations %d (%sthe filter's products: %lld columns, %lld of them in fp32); %s\n",
                first + result.iterations, resumed_from(first).c_str(),
                static_cast<long long>(result.stats.filter_products),
                static_cast<long long>(result.stats.single_filter_products), stop_summary(result).c_str());
  else
    std::printf("\niterations %d (%srestarts %d, %d explicit recompute%s of A X and A P%s); %s\n",
                first + result.iterations, resumed_from(first).c_str(), result.stats.restarts, result.stats.recomputes,
                result.stats.recomputes == 1 ? "" : "s", result.stats.search_in_fp32 ? ", residual block in fp32" : "",
                stop_summary(result).c_str());
  if (guard.signal() != 0) std::printf("%s\n", guard.interruption_summary().c_str());
  if (!result.all_converged() && result.stop != solver::LobpcgStop::interrupted &&
      result.stop != solver::LobpcgStop::below_floor)
    print_floor(result, options, preconditioned);
  print_jumps(result.jumps, first);
  if (result.restored)
    std::printf(
        "note: the pairs are those of an earlier iterate, whose residuals were smaller than the last "
        "one's\n");
  print_loose_pairs(result, options);
  const auto& t = result.stats.timings;
  if (t.filter > 0 || t.density > 0)  // a filter's method: most products are the filter's
    std::printf(
        "solve time %.3f s: %sfilter %.3f (its products and passes), Rayleigh-Ritz products %.3f (halo %.3f in all "
        "products), orthogonalisation %.3f, Rayleigh-Ritz %.3f (small eigenproblem %.3f), other %.3f\n",
        t.total, t.density > 0 ? ("bounds and density of states " + fixed3(t.density) + ", ").c_str() : "", t.filter,
        t.spmm, costs.halo, t.orthogonalization, t.rayleigh_ritz, t.small_eigenproblem, t.other);
  else
    std::printf(
        "solve time %.3f s: SpMM %.3f (halo %.3f), orthogonalisation %.3f, Rayleigh-Ritz %.3f "
        "(small eigenproblem on the host %.3f), %s, other %.3f\n",
        t.total, t.spmm - costs.halo, costs.halo, t.orthogonalization, t.rayleigh_ritz, t.small_eigenproblem,
        preconditioner_time(t.preconditioner, costs.preconditioner).c_str(), t.other);
  std::printf("%s", memory.c_str());
}

#define BLOCKEIGS_REPORT(T)                                                                           \
  template std::string stop_summary(const solver::LobpcgResult<T>&);                                  \
  template void print_report(const solver::LobpcgResult<T>&, const solver::LobpcgOptions&, bool, int, \
                             const SolveCosts&, const CheckpointGuard&, const std::string&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_REPORT)
#undef BLOCKEIGS_REPORT

}  // namespace blockeigs::apps
