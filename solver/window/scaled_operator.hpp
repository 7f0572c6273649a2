// The operator scaled into [-1, 1]: A_hat = (A - center I) / half_width, the
// variable of the Chebyshev expansions of the window's filter and of the
// density of states. A product C = alpha A_hat Y + beta C is one operator
// product where the operator can stand for A - center I itself
// (DiagonalShiftOperator: the distributed operator), else a product and an
// element-wise pass. The operator gets its own diagonal back when this
// object goes, however it goes.
#pragma once

#include "solver/base/linear_operator.hpp"
#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

// Where the spectrum lies: [center - half_width, center + half_width] holds it.
struct SpectrumScale {
  double center = 0;
  double half_width = 1;
  double to_unit(double x) const { return (x - center) / half_width; }
  double from_unit(double t) const { return center + half_width * t; }
};

template <class T>
class ScaledOperator {
 public:
  ScaledOperator(LinearOperator<T>& A, const SpectrumScale& scale) : A_(A), scale_(scale) {
    shiftable_ = dynamic_cast<DiagonalShiftOperator<T>*>(&A);
    if (shiftable_ && !shiftable_->set_diagonal_shift(static_cast<T>(-scale.center))) shiftable_ = nullptr;
  }
  ~ScaledOperator() {
    if (shiftable_) shiftable_->set_diagonal_shift(T(0));
  }
  ScaledOperator(const ScaledOperator&) = delete;
  ScaledOperator& operator=(const ScaledOperator&) = delete;

  // C = alpha A_hat Y + beta C (beta == 0: C is not read).
  void apply(double alpha, dense::ConstDenseView<T> Y, double beta, dense::DenseView<T> C) {
    const double a = alpha / scale_.half_width;
    if (!shiftable_) {
      axpby(A_.context(), static_cast<T>(-scale_.center * a), Y, static_cast<T>(beta), C);
      beta = 1;
    }
    A_.apply(static_cast<T>(a), Y, static_cast<T>(beta), C);
  }

 private:
  LinearOperator<T>& A_;
  SpectrumScale scale_;
  DiagonalShiftOperator<T>* shiftable_ = nullptr;
};

}  // namespace blockeigs::solver
