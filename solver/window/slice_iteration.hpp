// Filtered subspace iteration on one slice [lower, upper] of the spectrum:
// a block of columns multiplied by the slice's polynomial filter
// (window_filter.hpp), orthonormalised (CholQR2, chfsi_ortho.hpp) against the
// fixed and locked columns and among themselves, then Rayleigh-Ritz with A on
// them (A V, V^T A V on rank 0's device or host, the rotation, A V of the Ritz
// vectors, residuals). Ritz pairs inside the slice that pass the stopping
// test are locked: they get no more products. The slice is done when a whole
// round of filtering after the last lock found nothing new and the Ritz
// values left inside it, if any, are spurious (Rayleigh quotients of vectors
// on both sides of the slice, which the filter shrinks well below what it
// keeps of the slice's eigenvectors); where fewer than `guard` active columns
// lie outside the slice (the block was too small for its count), the block
// grows. Where the slice's count is certified (SliceSpec::target), it is
// done when that many pairs are locked.
//
// Fixed columns, given orthonormal, are the pairs a neighbouring slice
// already holds near the shared end: the block is kept orthogonal to them, so
// a pair is found by one slice only, with its multiplicity (the pair itself
// is not reported again).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "solver/lobpcg/lobpcg.hpp"
#include "solver/window/window_filter.hpp"

namespace blockeigs::solver {

struct SliceSpec {
  double lower = 0, upper = 0;  // the pairs reported: lower <= lambda <= upper
  WindowFilter filter;
  double filter_floor = 0;  // the filter's least value on [lower, upper]: what it keeps of any eigenvector there
  int block = 0;            // the first block's columns (active, not counting fixed ones)
  int guard = 0;            // active columns outside the slice below which the block grows
  // The slice's eigenvalue count where an inertia certified it, else -1: the slice is done when that many
  // pairs are locked, and grows its block where its own test would stop short of them.
  std::int64_t target = -1;
  double count_from = -1e300;  // pairs locked below it do not count toward the target (another slice's)
  std::uint64_t seed = 1;
  double norm_estimate = 0;  // ||A||_est for the backward test
};

struct SliceProgress {
  int iteration = 0;
  int found = 0;       // pairs locked so far
  int inside = 0;      // active Ritz values inside the slice, unconverged
  int block = 0;       // active columns
  double worst = 0;    // the largest relative residual among those inside and unconverged
  double elapsed = 0;  // seconds in the slice so far
};

template <class T>
struct SliceOutcome {
  dense::DenseBlock<T> vectors;  // local rows x found, the pairs' vectors, ascending values
  std::vector<double> values, residuals;
  int iterations = 0;
  int block = 0;                                   // the active columns at the end (the largest the block was)
  std::int64_t products = 0, single_products = 0;  // the filter's, counted in columns; of them in fp32
  bool complete = false;                           // every pair passed and the last round found nothing new
  LobpcgTimings time;
};

// Collective over A.comm(); reductions on `comm`. `fixed` has A's local rows
// and orthonormal columns (possibly none). The stopping test, iteration
// limit and seed are `options`'. `single`, where given: A in single precision (fp32, or complex fp32) for
// the mixed filter (chfsi.hpp's filter_mixed): the columns whose residual is above 10 kMixedFilterFloor ||A||,
// and every column before the first Rayleigh-Ritz, are filtered with it. Real or complex (Hermitian) values.
template <class T>
SliceOutcome<T> solve_slice(LinearOperator<T>& A, LinearOperator<single_t<T>>* single, const LobpcgOptions& options,
                            const SliceSpec& spec, dense::ConstDenseView<T> fixed, MPI_Comm comm,
                            const std::function<void(const SliceProgress&)>& progress = {});

}  // namespace blockeigs::solver
