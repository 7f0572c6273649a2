// C = A B with A and C in fp64 and B in fp32: LOBPCG's A Z with its residual
// block in fp32 (solver's search_block_ops.hpp). B's values are widened as
// they are loaded and every sum is in fp64, so C is the fp64 product of the
// stored (rounded) B, and consistent with it. On the device a group of lanes
// takes a row, each lane 4 columns of B (one 16-byte load of a gathered row)
// or, where B's rows are not so aligned, 1; all of a row's nonzeros for a
// batch of 8 in flight at once, faster than with an fp64 B
// (docs/benchmarks/solvers.md#search-precision).
//
//   spmm::multiply_single_input(context, A, B, C);   // C = A B, C not read
//   spmm::multiply_single_input(context, A, B, C, true);  // C += A B
#pragma once

#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "dense/dense.hpp"

namespace blockeigs::spmm {

// C = A B, or C += A B with `accumulate` (otherwise C is never read). All in
// context.space(); on the host the reference loops (the device kernel's
// twin), one row per OpenMP iteration, in the row's order.
void multiply_single_input(const dense::Context& context, const CsrView<double>& A, dense::ConstDenseView<float> B,
                           dense::DenseView<double> C, bool accumulate = false);

}  // namespace blockeigs::spmm
