// block-eigs' report: the lines the run prints after the solve (the pairs'
// table, why the solve stopped, notes on the floor, jumps and loose pairs),
// and the monitor's words for a jump and for the floor.
#pragma once

#include <string>

#include "apps/run/checkpoint.hpp"
#include "apps/run/steps/solve_steps.hpp"
#include "solver/lobpcg/lobpcg.hpp"

namespace blockeigs::apps {

// How the solve ended, in a line: converged, or why not (the result file's `stop`).
template <class T>
std::string stop_summary(const solver::LobpcgResult<T>& r);

// A jump of a wanted Ritz value in words: "pair 0 fell from 7.487e-01 (residual bound 4.9e-03) to 6.127e-01".
std::string describe_jump(const solver::LobpcgJump& j);

// The solver's one report, early in the run, that the tolerance is below
// what fp64 allows some wanted pairs under the relative test.
void print_floor_warning(const solver::LobpcgProgress& p, double tolerance);

// Rank 0's report after the solve: the pairs' table, the iterations and why
// the solve stopped, the notes (`preconditioned`: one was used, so none is
// recommended), the time and the memory line.
template <class T>
void print_report(const solver::LobpcgResult<T>& result, const solver::LobpcgOptions& options, bool preconditioned,
                  int first, const SolveCosts& costs, const CheckpointGuard& guard, const std::string& memory);

}  // namespace blockeigs::apps
