// A lower bound on ||A||_2 of a symmetric operator by the power method, for
// LOBPCG's backward stopping test.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "solver/base/linear_operator.hpp"

namespace blockeigs::solver {

// The largest ||A v|| over `steps` products, v a unit vector each time, from
// a seeded random start that does not depend on how the rows are split. Each
// value is a lower bound on ||A||_2, and the sequence approaches |lambda|_max;
// 20 steps reach 84-100% of ||A||_2 on the SuiteSparse matrices of
// ../shared/data (docs/benchmarks/robustness.md). 0 for
// A = 0. Collective over `comm`.
template <class T>
double power_norm_estimate(LinearOperator<T>& A, MPI_Comm comm, int steps, std::uint64_t seed);

}  // namespace blockeigs::solver
