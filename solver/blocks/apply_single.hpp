// A LinearOperator applied to an fp32 block, through the operator's own fp32
// path (SingleInputOperator) or a widened copy: what LOBPCG's residual block
// in its search precision takes.
#pragma once

#include "solver/base/linear_operator.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

// Y = A X with X in fp32: A's own fp32 path where it has one, otherwise X
// widened to T in a temporary block and applied. Collective.
template <class T>
void apply_single(LinearOperator<T>& A, dense::ConstDenseView<float> X, dense::DenseView<T> Y) {
  if (auto* single = dynamic_cast<SingleInputOperator<T>*>(&A)) return single->apply_single(X, Y);
  dense::DenseBlock<T> widened(X.space, X.rows, X.cols);
  convert_block(A.context(), X, widened.view());
  A.apply(T(1), dense::ConstDenseView<T>(widened.view()), T(0), Y);
}

}  // namespace blockeigs::solver
