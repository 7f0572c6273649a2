// C = alpha A B + beta C for column-major B and C (PETSc's MATDENSE and
// MATDENSECUDA blocks), without transposing them into row-major blocks. On
// the device a group of lanes takes a row (one lane for short rows, so that a
// warp reads 32 consecutive rows of each column of B: coalesced for banded
// matrices) and keeps up to 8 columns' sums in registers; a block of more
// columns takes several passes over A.
//
//   spmm::multiply_column_major(context, A, 1.0, B, 0.0, C);   // C = A B, C not read
#pragma once

#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::spmm {

// All in context.space(); beta == 0 writes C without reading it. On the host
// the reference loops (the device kernel's twin), one row per OpenMP
// iteration, in the row's order.
void multiply_column_major(const dense::Context& context, const CsrView<double>& A, double alpha,
                           dense::ColumnMajorView<const double> B, double beta, dense::ColumnMajorView<double> C);

}  // namespace blockeigs::spmm
