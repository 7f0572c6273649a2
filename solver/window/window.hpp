// Every eigenpair of a symmetric operator in a window [a, b] of its
// spectrum (interior or at an end), by polynomial-filtered subspace
// iteration on slices of the window:
//
//  - the spectrum's bounds from a few Lanczos steps at each end
//    (spectrum_bounds.hpp) scale A into [-1, 1];
//  - the density of states by the kernel polynomial method
//    (kpm_density.hpp) estimates how many eigenvalues the window holds, with
//    an error bar, and where to cut it into slices of equal counts;
//  - each slice is solved by its own filtered subspace iteration
//    (slice_iteration.hpp) with a Jackson-Chebyshev filter of the slice
//    (window_filter.hpp) and a block of its estimated count plus guards,
//    grown where the count was short; where the filter is mixed (as the
//    Chebyshev filter's, chfsi.hpp: search_precision), the columns far from
//    convergence are filtered with A's fp32 copy;
//  - where an inertia counter is given (inertia.hpp), the counts at the
//    slices' ends are exact: each slice's block holds its count and runs
//    until it has found them all;
//  - slices run one after another on the operator's ranks, or side by side on
//    groups of them (slice_groups.hpp: each group a copy of A on its ranks,
//    consecutive slices to each); within a group, a slice's block is kept
//    orthogonal to the pairs the slice below found within rounding of their
//    shared end, so that a pair there is found once, with its multiplicity;
//    between groups, the pairs both slices found there are merged once
//    (slice_merge.hpp).
//
// Standard problems (A x = lambda x) only, real symmetric or complex Hermitian (the filter a real polynomial
// of A; the density's moments v^H T_j(A) v real). The stopping test, iteration limit
// (per slice), seed and search precision are LobpcgOptions'; k, block_size
// and which are not used. The result holds the pairs ascending.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "solver/lobpcg/lobpcg.hpp"
#include "solver/window/inertia.hpp"
#include "solver/window/kpm_density.hpp"
#include "solver/window/slice_groups.hpp"
#include "solver/window/slice_iteration.hpp"

namespace blockeigs::solver {

// A window's blocks beside A (and its group's copy), for a memory check before its first slice
// (WindowOptions::check_memory).
struct WindowMemory {
  std::int64_t rows = 0;   // this rank's rows where its slices run (its group's share of A)
  std::int64_t block = 0;  // the largest slice's first block, in columns
  std::int64_t pairs = 0;  // the window's pairs: the certified count, or the density's plus three errors
  int value_bytes = 8;     // 16 for complex double
  bool mixed = false;      // the filter's fp32 blocks beside (A's fp32 copy is held by then)
  bool device = false;     // on a GPU, locking's permutation of the active columns copies them: one block more
  // Bytes in the operator's memory at the peak: a slice's V, A V and scratch and its fp32 blocks beside the
  // pairs found, or at the end the pairs beside the result they are gathered into.
  std::int64_t bytes() const {
    const std::int64_t blocks = device ? 4 : 3;
    const std::int64_t slices =
        rows * (value_bytes * (blocks * block + pairs) + (mixed ? value_bytes / 2 * 3 * block : 0));
    return std::max(slices, rows * value_bytes * 2 * pairs);
  }
};

struct WindowOptions {
  double lower = 0, upper = 0;  // the window [a, b]
  int slices = 0;               // 0: one per 1,000 estimated eigenvalues
  int dos_vectors = 16;         // random vectors of the density estimate
  int dos_degree = 0;           // its Chebyshev moments; 0: from the window's width (4 pi / its Chebyshev angle)
  int filter_degree = 0;        // each slice's filter degree; 0: from the slice's width
  // Groups of ranks that solve slices side by side: 0 as many as the slices and ranks allow, 1 every slice on
  // every rank. More than one needs window_eigs' group_operator.
  int groups = 0;
  // Where given, the window's and each slice's counts from inertias at their ends (one factorization an
  // end): the slices' blocks hold their counts and run until they are found; else the density's estimates.
  InertiaCounter* inertia = nullptr;
  // Called on every rank after each iteration of slice `slice` (0-based).
  std::function<void(int slice, const SliceProgress&)> progress;
  // Called on every rank once the slices are planned and the operators built, before the first slice;
  // throws (collectively) to refuse a window whose blocks do not fit.
  std::function<void(const WindowMemory&)> check_memory;
};

struct SliceReport {
  double lower = 0, upper = 0;
  CountEstimate expected;       // the density's count for the slice
  std::int64_t certified = -1;  // the inertias' count, or -1
  int found = 0, block = 0, degree = 0, iterations = 0;
  std::int64_t products = 0;         // filter products, in columns
  std::int64_t single_products = 0;  // of them in fp32 (the mixed filter)
  double seconds = 0;
  bool complete = false;
  int group = 0;       // the group of ranks that solved it
  int duplicates = 0;  // pairs it found at its lower end that the slice below (another group's) also found
};

struct WindowReport {
  double spectrum_lower = 0, spectrum_upper = 0;  // the bounds A was scaled by
  bool outside_spectrum = false;                  // [a, b] misses them: nothing was solved
  CountEstimate expected;                         // the density's count for [a, b]
  std::int64_t certified = -1;                    // the inertias' count for [a, b], or -1 (no inertia)
  std::int64_t certified_below = -1;              // eigenvalues below a, by inertia
  int factorizations = 0;
  double time_inertia = 0;
  std::string count_method;  // the inertia counter's name, or "" (density)
  int dos_vectors = 0, dos_degree = 0;
  std::int64_t dos_products = 0;
  double time_bounds = 0, time_dos = 0;
  int groups = 1;          // groups of ranks the slices ran on
  double time_groups = 0;  // their operators built (A's rows copied to each group)
  double time_merge = 0;   // the slices' vectors moved back to A's rows and the pairs at shared ends merged
  std::vector<SliceReport> slices;
  std::vector<std::vector<double>> density;  // the density of states: x, then eigenvalues per unit of x
};

template <class T>
struct WindowResult {
  LobpcgResult<T> pairs;
  WindowReport report;
};

// Throws InputError where the window is empty or not finite, or an option is
// out of range. Collective over A.comm(). `group_operator` builds a group's
// copy of A (distributed_group_operator) where slices may run side by side.
template <class T>
WindowResult<T> window_eigs(LinearOperator<T>& A, const LobpcgOptions& options, const WindowOptions& window,
                            const GroupOperatorFactory<T>& group_operator = {});

}  // namespace blockeigs::solver
